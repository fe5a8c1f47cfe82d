/**
 * Importing a run archive: the run continues here at the step it left at.
 *
 * Protocol (under the archive id's lock, then the run id's submit lock: the store's single writer
 * is this process, so nothing else writes between the reads and the commit):
 * 1. Decode and check the archive (CORRUPT_DATA when damaged, INVALID_ARGUMENT `archive_version`
 *    when newer than this library reads).
 * 2. `workflow/imports/{archive}` exists: this archive was imported here; answer that import
 *    (`newlyImported` false) and change nothing.
 * 3. The run id (`runId`, else a hand-off's own id, else a new one) must not name an active run
 *    here (ALREADY_EXISTS, reason `run_exists`); a scheduled signal waiter's correlation key must
 *    not have another live waiter (CONFLICT, `signal_key_in_use`).
 * 4. Write the memo and step-output objects under the run id (objects are outside transactions;
 *    a failed import leaves them for the next attempt, which writes the same bytes).
 * 5. One transaction (`Queue.enqueueWithKv`): the step job, with the run record, step pointer,
 *    function history, buffered signals, delivered record, signal-wait index, the caller-KV
 *    entries and the import record.
 *
 * What changes on the way: the step job gets a new id, and a fresh attempt count with the budget
 * it had left (`maxAttempts - attempts`, so retries are not given back); a woken signal waiter
 * arrives pending with its signal as a delivered record; under another run id, a workflow
 * function's signal keys (`<runId>#<name>`) are renamed. A workflow function's step payload names
 * its history generation, so the history is found under the new job id.
 */
import { utf8 } from '../../bytes.js';
import { AlreadyExistsError, ConflictError, CorruptDataError, InvalidArgumentError, isTaqubaError } from '../../errors.js';
import { decodeKindRecord, encodeKindRecord, malformedField } from '../../kind-records.js';
import type { KeyedMutex } from '../../keyed-mutex.js';
import { checkOptions, optionNames } from '../../options.js';
import type { EnqueueOptions } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import { HEADER_SIGNAL_DELIVERED, HEADER_SIGNAL_WAIT } from '../constants.js';
import {
  archiveImportKey,
  memoRunPrefix,
  runRecordKey,
  signalBufferKey,
  signalDeliveredKey,
  signalWaitKey,
  stepDedupKey,
  stepOutputRunPrefix,
  stepPointerKey,
} from '../keys.js';
import { encodeRunRecord, encodeStepPointer } from '../records.js';
import { keepsFinishedRunIds, readFinishedRecord } from '../history/finished-runs.js';
import { decodeEnvelope, encodeEnvelope } from '../functions/envelope.js';
import { runHistoryPrefix } from '../functions/history.js';
import { stepJobHeaders } from '../steps/step-headers.js';
import { checkKvValue, checkUserHeaders, checkUserKvKey, isRunId, validateRunId } from '../validation.js';
import { decodeRunArchive, type RunArchive } from './archive-format.js';

/** Options of `importRun`. */
export interface ImportRunOptions {
  /** The run's id here. Default: a hand-off's own id; a new id for a copy. */
  readonly runId?: string;
}

/** What an import did. */
export interface ImportRunOutcome {
  readonly runId: string;
  /** The job carrying the run's step here. */
  readonly jobId: string;
  /** The step the run continues at. */
  readonly step: number;
  readonly archiveId: string;
  /** False when the archive had been imported here already: this answers that import, nothing changed. */
  readonly newlyImported: boolean;
}

const IMPORT_OPTION_NAMES = optionNames<ImportRunOptions>({ runId: true });
const IMPORT_KIND = 'run-import';

function damagedContent(field: string, cause?: unknown): CorruptDataError {
  return new CorruptDataError(`run archive is damaged. problem=malformed field field=${field}`, { reason: 'damaged_archive', problem: 'malformed field', field }, cause);
}

const HISTORY_TAIL = /^[^/]+\/\d+(\/\d+)?$/;
// Object names are SHA-256 hex: nothing else may become a path here.
const MEMO_TAIL = /^(\d+|run)\/[0-9a-f]{64}$/;
const STEP_OUTPUT_TAIL = /^\d+\/[0-9a-f]{64}$/;

/** What the frame's checksum cannot vouch for: names that become keys and paths here. CORRUPT_DATA. */
function checkContent(a: RunArchive): void {
  const check = (field: string, ok: () => boolean | void): void => {
    let passed: boolean | void;
    try {
      passed = ok();
    } catch (e) {
      throw damagedContent(field, e);
    }
    if (passed === false) throw damagedContent(field);
  };
  check('archiveId', () => isRunId(a.archiveId));
  check('source.runId', () => isRunId(a.source.runId));
  check('step.headers', () => checkUserHeaders(a.step.headers));
  check('history', () => a.history.every(([tail]) => HISTORY_TAIL.test(tail)));
  check('memos', () => a.memos.every(([tail]) => MEMO_TAIL.test(tail)));
  check('stepOutputs', () => a.stepOutputs.every(([tail]) => STEP_OUTPUT_TAIL.test(tail)));
  check('signals', () => a.signals.every(([key]) => key.length > 0));
  check('kv', () => a.kv.forEach(([key, value]) => (checkUserKvKey(key), checkKvValue(key, value))));
  check('step.signalWait', () => a.step.signalWait === null || a.step.signalWait.length > 0);
  check('step.payload', () => a.kind !== 'function' || decodeEnvelope(a.step.payload, a.source.runId) !== undefined);
}

interface ImportRecord {
  readonly runId: string;
  readonly jobId: string;
  readonly step: number;
}

async function readImport(ctx: RuntimeContext, archiveId: string): Promise<ImportRecord | undefined> {
  const key = archiveImportKey(archiveId);
  const bytes = await ctx.queue.kvGet(key);
  if (bytes === undefined) return undefined;
  const where = `workflow/imports/${archiveId}`;
  const body = decodeKindRecord(bytes, where, IMPORT_KIND, 1, 'archive import record');
  if (typeof body.runId !== 'string') throw malformedField(IMPORT_KIND, where, 'runId');
  if (typeof body.jobId !== 'string') throw malformedField(IMPORT_KIND, where, 'jobId');
  if (typeof body.step !== 'number') throw malformedField(IMPORT_KIND, where, 'step');
  return { runId: body.runId, jobId: body.jobId, step: body.step };
}

/**
 * `WorkflowRuntime.importRun`. `locks`: the runtime's submit locks. `functions`: whether the
 * runtime runs workflow functions (it refuses a StepRunner's run, which its runner would fail).
 */
export async function importRun(ctx: RuntimeContext, locks: KeyedMutex, bytes: Uint8Array, options: ImportRunOptions | undefined, functions: boolean): Promise<ImportRunOutcome> {
  checkOptions(options, IMPORT_OPTION_NAMES, 'importRun', 'INVALID_ARGUMENT', { reason: 'invalid_options' });
  if (options?.runId !== undefined) validateRunId(options.runId);
  const archive = await decodeRunArchive(bytes);
  checkContent(archive);
  if (functions && archive.kind !== 'function') {
    throw new InvalidArgumentError(`this runtime runs workflow functions; the archive holds a StepRunner's run. archiveId=${archive.archiveId}`, { reason: 'archive_kind', kind: archive.kind });
  }
  // `:` never appears in a run id: the archive's lock is apart from every run's.
  return locks.run(`archive:${archive.archiveId}`, async () => {
    const prior = await readImport(ctx, archive.archiveId);
    if (prior !== undefined) {
      if (options?.runId !== undefined && options.runId !== prior.runId) {
        throw new ConflictError(`this archive was imported here as another run. archiveId=${archive.archiveId} runId=${prior.runId}`, { reason: 'archive_imported', runId: prior.runId, archiveId: archive.archiveId });
      }
      return { ...prior, archiveId: archive.archiveId, newlyImported: false };
    }
    const runId = options?.runId ?? (archive.handOff ? archive.source.runId : ctx.queue.nextJobId());
    return locks.run(runId, () => importAs(ctx, archive, runId));
  });
}

async function importAs(ctx: RuntimeContext, archive: RunArchive, runId: string): Promise<ImportRunOutcome> {
  if (ctx.registry.get(runId) !== undefined || (await ctx.queue.kvGet(runRecordKey(runId))) !== undefined) {
    throw new AlreadyExistsError(`a run under this id is active here. runId=${runId}`, { reason: 'run_exists', runId });
  }
  if (keepsFinishedRunIds(ctx) && (await readFinishedRecord(ctx.queue, ctx.queueName, runId)) !== null) {
    throw new AlreadyExistsError(`this runtime keeps the id of a finished run (runIdReuse: 'after-retention'). runId=${runId}`, { reason: 'run_id_kept', runId });
  }
  const { step, source } = archive;
  const renamed = (key: string): string => (archive.kind === 'function' && key.startsWith(`${source.runId}#`) ? `${runId}${key.slice(source.runId.length)}` : key);
  const waitKey = step.signalWait === null ? null : renamed(step.signalWait);
  const scheduledWaiter = waitKey !== null && step.runAt !== null && step.woken === null;
  if (scheduledWaiter) await checkWaitKeyFree(ctx, waitKey);
  const jobId = ctx.queue.nextJobId();
  // A woken waiter keeps its signal as a delivered record: the queue wakes scheduled jobs only.
  const extra: Record<string, string> = {};
  let delivered = archive.delivered;
  if (step.woken !== null) {
    extra[HEADER_SIGNAL_DELIVERED] = '1';
    delivered = step.woken.payload ?? new Uint8Array(0);
  } else {
    if (waitKey !== null) extra[HEADER_SIGNAL_WAIT] = waitKey;
    if (step.signalDelivered) extra[HEADER_SIGNAL_DELIVERED] = '1';
  }
  const kvWrites: [Uint8Array, Uint8Array][] = archive.kv.map(([k, v]) => [k, v]);
  const history = runHistoryPrefix(ctx.queueName, runId);
  for (const [tail, value] of archive.history) kvWrites.push([utf8PrefixJoin(history, tail), value]);
  for (const [key, value] of archive.signals) {
    ctx.signalWatch.buffering(renamed(key));
    kvWrites.push([signalBufferKey(renamed(key)), value]);
  }
  if (delivered !== null) kvWrites.push([signalDeliveredKey(runId, step.number), delivered]);
  if (scheduledWaiter) kvWrites.push([signalWaitKey(waitKey), utf8(jobId)]);
  kvWrites.push(
    [runRecordKey(runId), encodeRunRecord({ runId, submittedAtMs: archive.run.submittedAtMs, inputHash: archive.run.inputHash })],
    [stepPointerKey(runId), encodeStepPointer({ step: step.number, jobId })],
    [archiveImportKey(archive.archiveId), encodeKindRecord(IMPORT_KIND, 1, { runId, jobId, step: step.number, importedAtMs: ctx.clock.now() })],
  );
  await writeObjects(ctx, archive, runId);
  const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = {
    idOverride: jobId,
    headers: stepJobHeaders(step.headers, runId, step.number, extra),
    priority: step.priority,
    // The budget the step had left: a retried step is not given its tries back.
    maxAttempts: Math.max(1, step.maxAttempts - step.attempts),
  };
  if (step.runAt !== null) options.runAt = step.runAt;
  if (step.deduplicated) options.dedupKey = stepDedupKey(runId, step.number);
  const result = await ctx.queue.enqueueWithKv(ctx.queueName, payloadOf(archive), options, kvWrites);
  if (result.type === 'already_enqueued') {
    throw new ConflictError(`a step job of this run id and step waits here already. runId=${runId} step=${step.number} jobId=${result.id}`, { reason: 'step_waiting', runId, jobId: result.id });
  }
  return { runId, jobId, step: step.number, archiveId: archive.archiveId, newlyImported: true };
}

/** CONFLICT unless no other live waiter holds `waitKey` here. */
async function checkWaitKeyFree(ctx: RuntimeContext, waitKey: string): Promise<void> {
  const index = await ctx.queue.kvGet(signalWaitKey(waitKey));
  if (index === undefined) return;
  const job = await ctx.queue.getJob(new TextDecoder().decode(index)).catch((e: unknown) => {
    if (isTaqubaError(e, 'INVALID_ARGUMENT')) return undefined;
    throw e;
  });
  if (job?.status === 'scheduled') {
    throw new ConflictError(`another run here waits on the signal key this run waits on. correlationKey=${waitKey} waiter=${job.id}`, { reason: 'signal_key_in_use', correlationKey: waitKey, waiter: job.id });
  }
}

/** A workflow function's step payload names its history generation (step 0's has none: it was its job's id). */
function payloadOf(archive: RunArchive): Uint8Array {
  const { step } = archive;
  if (archive.kind !== 'function') return step.payload;
  const envelope = decodeEnvelope(step.payload, archive.source.runId);
  return envelope.gen === undefined ? encodeEnvelope({ ...envelope, gen: step.jobId }) : step.payload;
}

async function writeObjects(ctx: RuntimeContext, archive: RunArchive, runId: string): Promise<void> {
  const memos = memoRunPrefix(ctx.memo.prefix, runId);
  const outputs = stepOutputRunPrefix(ctx.memo.prefix, runId);
  for (const [tail, data] of archive.memos) await ctx.store.put(`${memos}${tail}`, data);
  for (const [tail, data] of archive.stepOutputs) await ctx.store.put(`${outputs}${tail}`, data);
}

function utf8PrefixJoin(prefix: Uint8Array, tail: string): Uint8Array {
  const rest = utf8(tail);
  const key = new Uint8Array(prefix.length + rest.length);
  key.set(prefix);
  key.set(rest, prefix.length);
  return key;
}
