/**
 * Exporting a run as an archive (archive-format.ts): a copy, or a hand-off that moves the run.
 *
 * Copy (`exportRunCopy`): reads the run's records (run-state.ts) between two reads of its durable
 * state and keeps them only if the run did not move meanwhile (else reads again). Nothing changes
 * in the store. A running step is copied as waiting, its in-flight try given back: the copy runs
 * that step again (a copy is for debugging; it imports under a new run id by default).
 *
 * Hand-off (`handOffRun`), only between steps (a claimed step is refused with CONFLICT, reason
 * `step_running`: try again when it has settled, e.g. while the run sleeps or waits for a signal):
 * 1. Under the lock of the correlation key the step waits on (if any) and the run's ending lock
 *    (runs/signals.ts, runs/termination.ts: the order a signal takes them), so no signal wakes the
 *    step or is buffered for the run meanwhile, read the run's records and build the archive.
 * 2. Keep the archive in the source (`{memoPrefix}/memos/{run}/handoff/{archive}`), so an answer
 *    lost after step 3 can be asked for again: a hand-off export of a moved run answers it.
 * 3. One transaction (`Queue.takeWaiting`): remove the step job only if it is the job read, still
 *    waiting, with the run record and pointer as read; delete the run's records (record, pointer,
 *    history, buffered signals, delivered record, wait index); write the moved-run record (and the
 *    terminal marker with memo retention, so the memo entries left behind are swept). No finished
 *    record, no notification, no terminal hook: the run has not ended. If the job changed, drop
 *    the kept archive and start again at 1.
 * The run then exists in no store until the archive is imported; importing it anywhere twice is
 * importing once (import-run.ts), so the run runs in at most one place.
 *
 * Refused for both (CONFLICT): a run whose step is dead (`step_dead`) or that waits for a
 * concurrency slot (`run_queued`). Refused for a hand-off (CONFLICT): a child run (`child_run`: its outcome must reach its parent
 * here) and a run waiting for children (`pending_children`: they run here).
 */
import { ConflictError, InvalidArgumentError, NotFoundError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { JobRecord } from '../../queue/index.js';
import { checkOptions, optionNames } from '../../options.js';
import { show } from '../../show.js';
import type { RuntimeContext } from '../context.js';
import { HEADER_SIGNAL_WAIT, HEADER_STEP } from '../constants.js';
import { handOffObjectKey, movedRunKey, runRecordKey, stepPointerKey, terminalMarkerKey } from '../keys.js';
import { readDurableRun, DURABLE_READ_ATTEMPTS, type DurableRun } from '../runs/durable-run.js';
import { commitFlowEnding } from '../flow/flow-ending.js';
import { flowHeadersOf } from '../flow/flow-locks.js';
import type { EffectsBuilder } from '../runs/termination.js';
import type { TakeOutcome } from '../../queue/transitions/take-waiting.js';
import type { KvKey } from '../steps/effects-handle.js';
import { checkUserKvKey, kvKeyBytes, validateRunId } from '../validation.js';
import { encodeRunArchive } from './archive-format.js';
import { encodeMovedRun, movedAway, readMovedRun } from './moved-runs.js';
import { readRunState, type ArchiveReadSource, type RunLocation } from './run-state.js';

/** Options of `exportRun`. */
export interface ExportRunOptions {
  /**
   * Move the run instead of copying it: the source stops running it, in the same transaction
   * that takes its step job out, and answers `readStatus(id, { includeFinished: true })` with
   * `moved`. Only between steps. The archive imports under the run's own id. Default false.
   */
  readonly handOff?: boolean;
  /** With `handOff`: where the run goes (a URL, a host name), kept in the source and answered as `movedTo`. */
  readonly to?: string;
  /** Caller-KV keys (outside `workflow/`) the run needs elsewhere; absent ones are left out. */
  readonly kvKeys?: Iterable<KvKey>;
}

const EXPORT_OPTION_NAMES = optionNames<ExportRunOptions>({ handOff: true, to: true, kvKeys: true });
const MAX_TO_CHARS = 2048;

interface ValidExport {
  readonly handOff: boolean;
  readonly to: string | null;
  readonly kvKeys: Uint8Array[];
}

function checkExport(options: ExportRunOptions | undefined): ValidExport {
  checkOptions(options, EXPORT_OPTION_NAMES, 'exportRun', 'INVALID_ARGUMENT', { reason: 'invalid_options' });
  const handOff = options?.handOff ?? false;
  if (typeof handOff !== 'boolean') throw new InvalidArgumentError(`handOff must be a boolean. handOff=${show(handOff)}`, { reason: 'invalid_options', option: 'handOff' });
  const to = options?.to ?? null;
  if (to !== null && (typeof to !== 'string' || to.length === 0 || to.length > MAX_TO_CHARS)) {
    throw new InvalidArgumentError(`to must be a string of 1..${MAX_TO_CHARS} characters. to=${show(to)}`, { reason: 'invalid_options', option: 'to' });
  }
  if (to !== null && !handOff) throw new InvalidArgumentError('to names where a hand-off goes; pass handOff: true with it', { reason: 'invalid_options', option: 'to' });
  const kvKeys: Uint8Array[] = [];
  if (options?.kvKeys !== undefined) {
    if (typeof (options.kvKeys as Iterable<unknown>)[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError('kvKeys must be an iterable of keys (strings or Uint8Array)', { reason: 'invalid_options', option: 'kvKeys' });
    }
    for (const key of options.kvKeys) {
      const bytes = kvKeyBytes(key);
      checkUserKvKey(bytes);
      kvKeys.push(bytes);
    }
  }
  return { handOff, to, kvKeys };
}

type ActiveRun = Extract<DurableRun, { type: 'active' }>;

/** Whether a stored job record is still the one read (same try, same wait, same wake). */
function sameJob(now: JobRecord, then: JobRecord): boolean {
  // The step header too: a job continued in place keeps its id (and the run its pointer).
  return now.id === then.id && now.headers[HEADER_STEP] === then.headers[HEADER_STEP] && now.status === then.status && now.attempts === then.attempts && now.runAt === then.runAt && now.wokenAt === then.wokenAt && now.interruptions === then.interruptions;
}

/** NOT_FOUND for a run that is not active here (reason `run_moved` when it was handed off). */
async function notActive(source: ArchiveReadSource, queueName: string, runId: string): Promise<Error> {
  const moved = await readMovedRun(source, queueName, runId);
  if (moved !== null) return movedAway(moved);
  return new NotFoundError(`no active run under this id here (never started, ended, or another runtime's). runId=${runId}`, { reason: 'run_not_found', runId });
}

function stepDead(runId: string, job: JobRecord): ConflictError {
  return new ConflictError(`the run's step is dead (out of attempts); retry it (retryDeadStep) before exporting the run. runId=${runId} jobId=${job.id}`, {
    reason: 'step_dead',
    runId,
    jobId: job.id,
  });
}

function stepRunning(runId: string, job: JobRecord): ConflictError {
  return new ConflictError(`the run's step is running; a run is handed off between steps (try again once the step settled). runId=${runId} jobId=${job.id}`, {
    reason: 'step_running',
    runId,
    jobId: job.id,
  });
}

function keptMoving(runId: string): ConflictError {
  return new ConflictError(`the run kept moving while it was read; export it again. runId=${runId}`, { reason: 'run_moving', runId });
}

/** The run's durable state when it is active here; the errors above otherwise. Undefined: read again. */
async function activeRun(source: ArchiveReadSource, queueName: string, runId: string): Promise<ActiveRun | undefined> {
  const run = await readDurableRun(source, runId, queueName);
  if (run.type === 'moved') return undefined;
  if (run.type === 'absent' || run.type === 'foreign') throw await notActive(source, queueName, runId);
  if (run.type === 'dead') throw stepDead(runId, run.job);
  if (run.type !== 'active') {
    // Waiting for a concurrency slot (flow control): its step 0 has no job to carry yet.
    throw new ConflictError(`the run waits for a concurrency slot; export it once it started. runId=${runId}`, { reason: 'run_queued', runId });
  }
  return run;
}

/** What a copy needs besides the store: ids and the time. */
export interface ArchiveStamp {
  readonly nextArchiveId: () => string;
  readonly now: () => number;
}

/**
 * A copy of run `runId` as an archive. Rejects with INVALID_ARGUMENT (run id, options), NOT_FOUND
 * (`run_not_found`; `run_moved` for a handed-off run), CONFLICT (`step_dead`; `run_moving` when it
 * advanced at every read), CORRUPT_DATA or store errors.
 */
export async function exportRunCopy(
  source: ArchiveReadSource,
  store: ObjectStore,
  where: RunLocation,
  stamp: ArchiveStamp,
  runId: string,
  options?: ExportRunOptions,
): Promise<Uint8Array> {
  validateRunId(runId);
  const valid = checkExport(options);
  if (valid.handOff) throw new InvalidArgumentError('a hand-off needs the store\'s writer (WorkflowRuntime.exportRun)', { reason: 'invalid_options', option: 'handOff' });
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    const run = await activeRun(source, where.queueName, runId);
    if (run === undefined) continue;
    const state = await readRunState(source, store, where, runId, run, valid.kvKeys);
    const again = await readDurableRun(source, runId, where.queueName);
    if (state === undefined || again.type !== 'active' || !sameJob(again.job, run.job)) continue;
    return encodeRunArchive({ ...state.content, archiveId: stamp.nextArchiveId(), exportedAtMs: stamp.now(), handOff: false, to: null });
  }
  throw keptMoving(runId);
}

/** `WorkflowRuntime.exportRun`: a copy, or with `handOff` the protocol above. */
export async function exportRun(ctx: RuntimeContext, runId: string, options?: ExportRunOptions): Promise<Uint8Array> {
  validateRunId(runId);
  const valid = checkExport(options);
  const where = { queueName: ctx.queueName, memoPrefix: ctx.memo.prefix };
  if (!valid.handOff) return exportRunCopy(ctx.queue, ctx.store, where, { nextArchiveId: () => ctx.queue.nextJobId(), now: () => ctx.clock.now() }, runId, options);
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    let run: ActiveRun | undefined;
    try {
      run = await activeRun(ctx.queue, ctx.queueName, runId);
    } catch (e) {
      // Asked again after a lost answer: the archive the run left with.
      const kept = await keptArchive(ctx, runId);
      if (kept !== undefined) return kept;
      throw e;
    }
    if (run === undefined) continue;
    if (run.job.status === 'claimed') throw stepRunning(runId, run.job);
    const waitKey = run.job.headers[HEADER_SIGNAL_WAIT];
    const read = run;
    const locked = (): Promise<Uint8Array | undefined> => ctx.endingLocks.run(runId, () => takeRun(ctx, runId, read, valid));
    const archive = await (waitKey === undefined ? locked() : ctx.signalLocks.run(waitKey, locked));
    if (archive !== undefined) return archive;
  }
  throw keptMoving(runId);
}

/** The archive a moved run left with, while the source keeps it. */
async function keptArchive(ctx: RuntimeContext, runId: string): Promise<Uint8Array | undefined> {
  const moved = await readMovedRun(ctx.queue, ctx.queueName, runId);
  if (moved === null) return undefined;
  const obj = await ctx.store.get(handOffObjectKey(ctx.memo.prefix, runId, moved.archiveId));
  return obj?.data;
}

/** Steps 1-3 of the hand-off under the locks; undefined when the run moved since `read` (start again). */
async function takeRun(ctx: RuntimeContext, runId: string, read: ActiveRun, options: ValidExport): Promise<Uint8Array | undefined> {
  const run = await readDurableRun(ctx.queue, runId, ctx.queueName);
  if (run.type !== 'active' || !sameJob(run.job, read.job)) return undefined;
  if (run.job.status === 'claimed') throw stepRunning(runId, run.job);
  const state = await readRunState(ctx.queue, ctx.store, { queueName: ctx.queueName, memoPrefix: ctx.memo.prefix }, runId, run, options.kvKeys);
  if (state === undefined) return undefined;
  if (state.isChild) throw new ConflictError(`a child run (ctx.invoke) stays with its parent; hand off the parent once the child ended. runId=${runId}`, { reason: 'child_run', runId });
  if (state.pendingChildren.length > 0) {
    throw new ConflictError(`the run waits for child runs, which run here; hand it off once they ended. runId=${runId} children=${state.pendingChildren.join(',')}`, {
      reason: 'pending_children',
      runId,
    });
  }
  const archiveId = ctx.queue.nextJobId();
  const movedAtMs = ctx.clock.now();
  const archive = await encodeRunArchive({ ...state.content, archiveId, exportedAtMs: movedAtMs, handOff: true, to: options.to });
  const keptKey = handOffObjectKey(ctx.memo.prefix, runId, archiveId);
  await ctx.store.put(keptKey, archive);
  const moved = encodeMovedRun({ runId, step: run.step, movedAtMs, movedTo: options.to, archiveId });
  const deletes = [runRecordKey(runId), stepPointerKey(runId), ...state.runKeys, ...(state.waitIndex === undefined ? [] : [state.waitIndex.key])];
  const writes: [Uint8Array, Uint8Array][] = [[movedRunKey(ctx.queueName, runId), moved]];
  if (ctx.memoRetentionMs !== null) writes.push([terminalMarkerKey(movedAtMs, runId), new Uint8Array(0)]);
  const expectKv: [Uint8Array, Uint8Array][] = [
    [runRecordKey(runId), state.recordBytes],
    [stepPointerKey(runId), state.pointerBytes],
  ];
  if (state.waitIndex !== undefined) expectKv.push([state.waitIndex.key, state.waitIndex.value]);
  // On a failed commit the kept archive stays: the commit may have happened, and the moved record names it.
  const effects: EffectsBuilder = { enqueues: [], kvWrites: writes, kvDeletes: deletes };
  const take = (): Promise<TakeOutcome> => ctx.queue.takeWaiting(run.job.id, { accept: (stored) => sameJob(stored, run.job), expectKv }, effects);
  // The run leaves this store: its concurrency slot goes to the next waiting run of its key and
  // its debounce window closes, in the same transaction, as at any ending (flow/flow-ending.ts).
  const flow = flowHeadersOf(run.job.headers);
  const outcome = flow === undefined ? await take() : await commitFlowEnding(ctx, runId, flow, effects, take);
  if (outcome === 'taken') {
    ctx.registry.remove(runId);
    return archive;
  }
  await ctx.store.delete(keptKey).catch((e: unknown) => ctx.warn(`deleting an unused hand-off archive failed. object=${keptKey}`, e));
  if (outcome === 'claimed') throw stepRunning(runId, run.job);
  return undefined;
}
