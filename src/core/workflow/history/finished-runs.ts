/**
 * Finished runs. With outcome retention on (`outcomeRetentionMs`, default 7 days), the settlement
 * that ends a run also writes, in the same transaction, a compact record of how it ended
 * (`workflow/outcomes/{q}/{run}`) and an index entry ordered by the end time
 * (`workflow/ended/{q}/{ts}/{run}`): so a record exists exactly when the termination committed.
 * The retention sweep (retention-sweeper.ts) removes both once the window has passed.
 *
 * Reads answer from the record once the run record is gone: `getRun` / `readStatus` with
 * `includeFinished`, `listRuns` with a terminal `status`, `result`, and the timeline's
 * `terminal`. An id submitted again starts a new run (the reference's rule): while that run is
 * active it is what the reads report, and its own ending replaces the record.
 *
 * Reads are plain caller-KV lookups, so `WorkflowReader` answers them alike from another process.
 */
import { fromHex, fromUtf8, toHex } from '../../bytes.js';
import { InvalidArgumentError } from '../../errors.js';
import { show } from '../../show.js';
import type { RuntimeContext } from '../context.js';
import { readDurableRun } from '../runs/durable-run.js';
import type { WorkflowReadSource } from './inspection.js';
import { endedIndexKey, finishedRunKey, finishedRunPrefix, runRecordKey } from '../keys.js';
import { decodeFinishedRun, decodeRunRecord, encodeFinishedRun, type FinishedRunRecord } from '../records.js';
import type { RunOutcome, TerminalStatus } from '../runs/terminal-hook.js';
import { validateRunId } from '../validation.js';
import type { RunIdReuse } from '../runtime-options.js';

/** A finished run, as its record keeps it: the hook's `RunOutcome` plus when and how it ended. */
export interface FinishedRun extends RunOutcome {
  /** When the ending settlement was built (runtime clock, epoch ms). */
  readonly endedAtMs: number;
  /**
   * When the run was submitted, if the ending settlement knew it (null otherwise): it does for a
   * run the ending runtime instance submitted, and usually for one it claimed a step of (read
   * from the run record in the background at the claim); not for a run cancelled while its step
   * waited that this instance never saw.
   */
  readonly submittedAtMs: number | null;
  /** Tries of the final step when it ended (its `Step.attempt`); null when unknown, e.g. a step cancelled while it waited. */
  readonly attempts: number | null;
  /** Length of the runner's result (`succeeded` only, else null), also when the result itself was too large to keep. */
  readonly resultBytes: number | null;
  /**
   * What the record had to leave out: `result` when it was over 64 KiB (`result` is then null),
   * `headers` when they would have made the record too large (`headers` is then empty). Error
   * texts are kept up to 4096 characters.
   */
  readonly omitted: readonly ('result' | 'headers')[];
}

/** Whether a `getRun(..., { includeFinished: true })` answer is a finished run (else an active `RunDetails`). */
export function isFinishedRun(run: object | null | undefined): run is FinishedRun {
  return typeof run === 'object' && run !== null && 'endedAtMs' in run;
}

/** Options of the reads that may answer with a finished run. */
export interface FinishedReadOptions {
  /** Also answer for a finished run still within the outcome retention window. Default false. */
  readonly includeFinished?: boolean;
}

/** `listRuns` of finished runs: `status` names terminal states only. */
export interface FinishedRunListOptions {
  /** Only finished runs that ended this way (or these ways). */
  readonly status: TerminalStatus | readonly TerminalStatus[];
  /** Page size, default 100; 0 gives an empty page. */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: Uint8Array;
}

/** One page of finished runs, in run-id order; exhausted only when `nextCursor` is undefined. */
export interface FinishedRunListPage {
  readonly runs: FinishedRun[];
  readonly nextCursor: Uint8Array | undefined;
}

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set<TerminalStatus>(['succeeded', 'failed', 'cancelled']);

/** Outcome retention of each runtime (its context is built before this module sees it). */
const retentionOf = new WeakMap<RuntimeContext, { readonly ms: number; readonly reuse: RunIdReuse }>();

/**
 * Turns finished-run records on for the runtime of `ctx` (`retentionMs` > 0; Infinity keeps them
 * until deleted by hand), and has the registry remember submission times for them. With
 * `reuse` 'after-retention' the records also keep the final job id and the input hash, which a
 * resubmission of the id is answered with (runs/submit.ts).
 */
export function attachFinishedRuns(ctx: RuntimeContext, retentionMs: number, reuse: RunIdReuse = 'after-finish'): void {
  retentionOf.set(ctx, { ms: retentionMs, reuse });
  if (retentionMs <= 0) return;
  ctx.registry.trackSubmitTimes(ctx.clock, async (runId) => {
    const bytes = await ctx.queue.kvGet(runRecordKey(runId));
    if (bytes === undefined) return undefined;
    const record = decodeRunRecord(bytes);
    return { submittedAtMs: record.submittedAtMs, inputHashHex: toHex(record.inputHash) };
  });
}

/** The runtime's outcome retention in ms; 0 when records are off. */
export function finishedRunRetention(ctx: RuntimeContext): number {
  return retentionOf.get(ctx)?.ms ?? 0;
}

/** Whether a finished run keeps its id until its record is swept (`runIdReuse: 'after-retention'`). */
export function keepsFinishedRunIds(ctx: RuntimeContext): boolean {
  return retentionOf.get(ctx)?.reuse === 'after-retention';
}

/** What an ending path may know beyond the outcome (the run record it read, the delivery's tries and job). */
export interface EndingFacts {
  readonly submittedAtMs?: number;
  readonly attempts?: number;
  /** The job whose transition ends the run. */
  readonly jobId?: string;
  readonly inputHash?: Uint8Array;
}

/**
 * Waits, only where the record will keep the input hash, for the registry's background read of
 * the run record of `runId` (a run first seen at a claim): an ending built before it would keep
 * no hash, and a resubmission with another input would then go unrefused.
 */
export async function endingFactsRead(ctx: RuntimeContext, runId: string): Promise<void> {
  if (keepsFinishedRunIds(ctx)) await ctx.registry.get(runId)?.recordRead;
}

/** The facts an ending path reads from the run record it holds (`record` bytes of a `DurableRun`). */
export function factsOfRunRecord(record: Uint8Array, jobId: string): EndingFacts {
  let run;
  try {
    run = decodeRunRecord(record);
  } catch {
    // Details of the finished-run record only: a damaged run record must not keep the run from ending.
    return { jobId };
  }
  return { submittedAtMs: run.submittedAtMs, inputHash: run.inputHash, jobId };
}

/**
 * The two caller-KV writes of a run's ending (record and index entry), built without I/O.
 * `facts` win over what the registry remembers.
 */
export function finishedRunWrites(ctx: RuntimeContext, outcome: RunOutcome, facts: EndingFacts = {}): [Uint8Array, Uint8Array][] {
  const endedAtMs = Math.max(0, Math.floor(ctx.clock.now()));
  const entry = ctx.registry.get(outcome.runId);
  // The entry's delivery is the claim ending the run on the worker path; a waiting step has none.
  const delivered = entry?.delivery !== undefined && entry.currentStep === outcome.finalStep ? entry.delivery.job.attempts : undefined;
  const submittedAtMs = facts.submittedAtMs ?? entry?.submittedAtMs;
  let record: FinishedRunRecord = {
    status: outcome.status,
    result: outcome.status === 'succeeded' ? outcome.result : null,
    resultBytes: null,
    error: outcome.error,
    headers: outcome.headers,
    headersKept: true,
    finalStep: outcome.finalStep,
    endedAtMs,
    submittedAtMs: submittedAtMs === undefined ? null : Math.floor(submittedAtMs),
    attempts: facts.attempts ?? delivered ?? null,
    jobId: null,
    inputHash: null,
  };
  if (keepsFinishedRunIds(ctx)) {
    const hashHex = entry?.inputHash;
    record = { ...record, jobId: facts.jobId ?? entry?.currentJobId ?? null, inputHash: facts.inputHash ?? (hashHex === undefined ? null : fromHex(hashHex)) };
  }
  return [
    [finishedRunKey(ctx.queueName, outcome.runId), encodeFinishedRun(record)],
    [endedIndexKey(ctx.queueName, endedAtMs, outcome.runId), new Uint8Array(0)],
  ];
}

function finishedRunOf(runId: string, r: FinishedRunRecord): FinishedRun {
  const omitted: ('result' | 'headers')[] = [];
  if (r.status === 'succeeded' && r.result === null) omitted.push('result');
  if (!r.headersKept) omitted.push('headers');
  return {
    runId,
    status: r.status,
    result: r.result,
    error: r.error,
    headers: r.headers,
    finalStep: r.finalStep,
    endedAtMs: r.endedAtMs,
    submittedAtMs: r.submittedAtMs,
    attempts: r.attempts,
    resultBytes: r.status === 'succeeded' ? r.resultBytes : null,
    omitted,
  };
}

/**
 * The finished-run record of `runId` on the runtime whose steps go to `queueName`, or null (none
 * kept: never finished there, swept, or outcome retention off). It does not look at the active
 * run: an id submitted again keeps its previous record until the new run ends. Rejects with
 * INVALID_ARGUMENT (run id), CORRUPT_DATA (undecodable record), CLOSED or STORE_*.
 */
export async function readFinishedRun(source: Pick<WorkflowReadSource, 'kvGet'>, queueName: string, runId: string): Promise<FinishedRun | null> {
  validateRunId(runId);
  const record = await readFinishedRecord(source, queueName, runId);
  return record === null ? null : finishedRunOf(runId, record);
}

/** The stored record itself (with the fields only submission uses), or null. */
export async function readFinishedRecord(source: Pick<WorkflowReadSource, 'kvGet'>, queueName: string, runId: string): Promise<FinishedRunRecord | null> {
  const bytes = await source.kvGet(finishedRunKey(queueName, runId));
  return bytes === undefined ? null : decodeFinishedRun(bytes);
}

/** Throws INVALID_ARGUMENT unless `options` is undefined or `{ includeFinished?: boolean }`. */
export function wantsFinished(options: FinishedReadOptions | undefined): boolean {
  if (options === undefined) return false;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`read options must be an object. options=${show(options)}`, { reason: 'invalid_options' });
  }
  for (const key of Object.keys(options)) {
    if (key !== 'includeFinished') throw new InvalidArgumentError(`unknown read option. option=${JSON.stringify(key)} known=includeFinished`, { reason: 'invalid_options', option: key });
  }
  const v = options.includeFinished ?? false;
  if (typeof v !== 'boolean') throw new InvalidArgumentError(`includeFinished must be a boolean. includeFinished=${show(v)}`, { reason: 'invalid_options', option: 'includeFinished' });
  return v;
}

/** The terminal states of a `listRuns` status filter, or undefined when it names none. INVALID_ARGUMENT when it mixes active and terminal states. */
export function terminalFilter(status: unknown): ReadonlySet<TerminalStatus> | undefined {
  if (status === undefined) return undefined;
  const list: readonly unknown[] = Array.isArray(status) ? status : [status];
  const terminal = list.filter((s) => typeof s === 'string' && TERMINAL_STATUSES.has(s));
  if (terminal.length === 0) return undefined;
  if (terminal.length !== list.length) {
    throw new InvalidArgumentError(`a run listing is of active or of finished runs, not both. status=${show(list.map(String).join(','))}`, {
      reason: 'invalid_status',
      status: list.map(String).join(','),
    });
  }
  return new Set(terminal as TerminalStatus[]);
}

/**
 * Finished runs of the runtime whose steps go to `queueName` that ended in one of `wanted`, in
 * run-id order, one page. An id active again (submitted anew, or its dead step retried) is
 * skipped: it is not finished. Rejects with INVALID_ARGUMENT (limit, cursor), CORRUPT_DATA,
 * CLOSED or STORE_*.
 */
export async function listFinishedRuns(
  source: WorkflowReadSource,
  queueName: string,
  wanted: ReadonlySet<TerminalStatus>,
  limit: number,
  cursor: Uint8Array | undefined,
): Promise<FinishedRunListPage> {
  const runs: FinishedRun[] = [];
  if (limit === 0) return { runs, nextCursor: undefined };
  const prefix = finishedRunPrefix(queueName);
  for (;;) {
    const page = await source.kvScan(prefix, { cursor, limit: limit - runs.length });
    const rows = await Promise.all(
      page.entries.map(async ([key, value]) => {
        const runId = fromUtf8(key.subarray(prefix.length));
        const record = decodeFinishedRun(value);
        if (!wanted.has(record.status)) return undefined;
        const now = await readDurableRun(source, runId, queueName);
        return now.type === 'active' || now.type === 'dead' || now.type === 'queued' ? undefined : finishedRunOf(runId, record);
      }),
    );
    for (const row of rows) if (row) runs.push(row);
    cursor = page.nextCursor;
    if (cursor === undefined || runs.length >= limit) return { runs, nextCursor: cursor };
  }
}
