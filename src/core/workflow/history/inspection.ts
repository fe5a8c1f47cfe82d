/**
 * Run queries: the active runs, one run in detail, the dead steps. They read only the durable
 * records (run records, step pointers, the step jobs and their attempt history), never the
 * in-process registry, so they answer alike for the store's writer (`WorkflowRuntime`) and for a
 * read-only `WorkflowReader` in another process or tab. One implementation over a
 * `WorkflowReadSource`, which the writer's `Queue` and a `QueueReader` both are; the browser host
 * and Node callers use these, never the record layout.
 *
 * Scope: every query answers for one runtime, named by its queue name (where its steps go):
 * several runtimes may share a queue handle, and each sees only the runs whose step job is on its
 * own queue (durable-run.ts).
 *
 * Consistency: a run is read in three snapshots (record, pointer, job); a settlement committing
 * between them is detected and the run read again (durable-run.ts). A listing is not a snapshot
 * across runs or pages: a run may advance while the page is read.
 *
 * Finished runs (finished-runs.ts) are answered from their records where a call asks for them:
 * `getRun` with `includeFinished`, `listRuns` with a terminal `status`. By default these queries
 * stay what they always were, active runs only, so a caller that reads null as "not active"
 * keeps working.
 */
import { equalBytes, fromUtf8, utf8 } from '../../bytes.js';
import { InvalidArgumentError } from '../../errors.js';
import type { JobAttempt, JobRecord, KvPage, KvScanOptions, PayloadError } from '../../queue/index.js';
import { HEADER_RUN_ID, HEADER_SIGNAL_WAIT, HEADER_STEP, HEADER_TERMINAL } from '../constants.js';
import { DURABLE_READ_ATTEMPTS, readDurableRun, readSettledRun, type DurableRun } from '../runs/durable-run.js';
import { show } from '../../show.js';
import { validateRunId } from '../validation.js';
import { flowQueuedKey, flowQueuedPrefix, RUNS_PREFIX, signalBufferKey } from '../keys.js';
import { decodeRunRecord } from '../records.js';
import { userHeaders } from '../steps/step-headers.js';
import { checkCorrelationKey } from '../steps/outcome.js';
import { listFinishedRuns, readFinishedRun, terminalFilter, type FinishedRun, type FinishedRunListOptions, type FinishedRunListPage } from './finished-runs.js';

/**
 * Where run queries read from: the writer's `Queue` or a `QueueReader` (both fit as they are).
 * A reader answers as of its last refresh.
 */
export interface WorkflowReadSource {
  kvGet(key: Uint8Array): Promise<Uint8Array | undefined>;
  kvScan(prefix: Uint8Array, options?: KvScanOptions): Promise<KvPage>;
  getJob(id: string): Promise<JobRecord | undefined>;
  deadJobs(queue: string, afterId: string | undefined, limit: number): Promise<JobRecord[]>;
  attemptHistory(id: string): Promise<JobAttempt[]>;
}

/**
 * An active run's state as the store records it (its current step job):
 * `pending` (claimable), `scheduled` (a delay or a retry backoff), `waiting-for-signal`,
 * `waiting-for-slot` (submitted with a concurrency key whose limit was reached: no step job yet,
 * it starts when an earlier run of the key ends), `running` (claimed), `cancelling` (claimed,
 * cancel requested), `dead` (the step was dead-lettered outside a worker; the runtime's
 * reconciliation fails the run at its next pass).
 */
export type DurableRunState = 'pending' | 'scheduled' | 'waiting-for-signal' | 'waiting-for-slot' | 'running' | 'cancelling' | 'dead';

const STATES: ReadonlySet<string> = new Set<DurableRunState>(['pending', 'scheduled', 'waiting-for-signal', 'waiting-for-slot', 'running', 'cancelling', 'dead']);

/** One active run in a listing. */
export interface RunSummary {
  readonly runId: string;
  /** Epoch ms of the submission, from the runtime clock. */
  readonly submittedAtMs: number;
  /**
   * The state, the step reached and the job carrying it; all three null when the run's records
   * stayed inconsistent across reads (a settlement kept moving it, or a record lost its pointer).
   */
  readonly state: DurableRunState | null;
  readonly currentStep: number | null;
  readonly jobId: string | null;
}

export interface RunListOptions {
  /**
   * Only runs in this state (or these states). Default: every active run. For finished runs pass
   * terminal states instead (`FinishedRunListOptions`); one listing never mixes the two.
   */
  readonly status?: DurableRunState | readonly DurableRunState[];
  /** Page size, default 100; 0 gives an empty page. */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: Uint8Array;
}

/** One page of active runs, in run-id order; the listing is exhausted only when `nextCursor` is undefined. */
export interface RunListPage {
  readonly runs: RunSummary[];
  readonly nextCursor: Uint8Array | undefined;
}

/** What a parked run waits for. */
export type RunWait =
  /** A durable signal on `correlationKey`; the step runs without one at `timeoutAt` (epoch ms). */
  | { readonly type: 'signal'; readonly correlationKey: string; readonly timeoutAt: number }
  /** A time: a runner-requested delay, or the backoff before a retry of a failed try. */
  | { readonly type: 'timer'; readonly at: number; readonly reason: 'delay' | 'retry' }
  /** A slot of concurrency key `key`: `position` runs of the key wait before it (0: it is next). */
  | { readonly type: 'slot'; readonly key: string; readonly position: number };

/** One active run in detail: its current step and that step's tries. */
export interface RunDetails {
  readonly runId: string;
  readonly submittedAtMs: number;
  readonly state: DurableRunState;
  /** The step the run has reached (zero-based). */
  readonly currentStep: number;
  /** The queue job carrying the current step. */
  readonly jobId: string;
  /** `Step.attempt` of the current step's try in progress or last made (0 before the first claim). */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Deliveries of the current step cut off by a crash, reload or closed tab (not counted as attempts). */
  readonly interruptions: number;
  /** The current step's last failure, or null. */
  readonly lastError: string | null;
  /** Set while the step is scheduled: the signal or time it waits for. */
  readonly waitingFor: RunWait | null;
  /** The run's headers (the submitted ones, without the runtime's reserved headers). */
  readonly headers: Readonly<Record<string, string>>;
  /** When the current step's job was first enqueued, claimed most recently, dead-lettered (epoch ms). */
  readonly enqueuedAt: number;
  readonly claimedAt: number | null;
  readonly failedAt: number | null;
  /** The current step's settled tries and interruptions, oldest first. */
  readonly history: readonly JobAttempt[];
}

/** A job in the runtime queue's dead-letter space (a step out of attempts, a permanent step error, a failed notification). */
export interface DeadStep {
  readonly jobId: string;
  /** Null for a dead job without a run id header (not a step of this runtime). */
  readonly runId: string | null;
  readonly stepNumber: number | null;
  /** True for a terminal-hook notification job. */
  readonly notification: boolean;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly interruptions: number;
  readonly lastError: string | null;
  /** Epoch ms when the job entered the dead space. */
  readonly failedAt: number | null;
  /** Set when the job's offloaded payload object is missing or corrupt (the job is listed anyway). */
  readonly payloadError: PayloadError | null;
}

export interface DeadStepListOptions {
  /** The last `jobId` of the previous page. */
  readonly afterJobId?: string;
  /** Page size, 1..1000, default 50. */
  readonly limit?: number;
}

/** Largest page `listDeadSteps` serves. */
export const DEAD_STEP_PAGE_MAX = 1000;
const RUN_PAGE_DEFAULT = 100;
const DEAD_PAGE_DEFAULT = 50;
/** How far `getRun` looks down a concurrency key's list for a waiting run's position. */
const WAITING_POSITION_SCAN = 1000;

function stateOf(job: JobRecord): DurableRunState {
  switch (job.status) {
    case 'claimed':
      return job.cancelRequested ? 'cancelling' : 'running';
    case 'scheduled':
      return job.headers[HEADER_SIGNAL_WAIT] !== undefined ? 'waiting-for-signal' : 'scheduled';
    case 'dead':
      return 'dead';
    default:
      return 'pending';
  }
}

function waitOf(job: JobRecord): RunWait | null {
  if (job.status !== 'scheduled' || job.runAt === undefined) return null;
  const key = job.headers[HEADER_SIGNAL_WAIT];
  if (key !== undefined) return { type: 'signal', correlationKey: key, timeoutAt: job.runAt };
  // A nacked try keeps its job (attempts counted, error kept); a delayed next step is a fresh job.
  return { type: 'timer', at: job.runAt, reason: job.attempts > 0 && job.lastError !== undefined ? 'retry' : 'delay' };
}

function statusFilter(status: RunListOptions['status']): ReadonlySet<DurableRunState> | undefined {
  if (status === undefined) return undefined;
  const list: readonly unknown[] = typeof status === 'string' ? [status] : Array.isArray(status) ? status : [status];
  for (const s of list) {
    if (typeof s !== 'string' || !STATES.has(s)) {
      throw new InvalidArgumentError(`unknown run state; expected an active state (${[...STATES].join(', ')}) or a terminal one (succeeded, failed, cancelled). status=${show(s)}`, {
        reason: 'invalid_status',
        status: show(s),
      });
    }
  }
  return new Set(list as DurableRunState[]);
}

function checkLimit(limit: unknown, what: string, min: number, max: number): asserts limit is number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < min || limit > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in ${min}..${max}`;
    throw new InvalidArgumentError(`${what} limit must be an integer ${range}. limit=${show(limit)}`, { reason: 'invalid_limit' });
  }
}

/** A listed run, read again through its pointer and job; undefined once it terminated or when another runtime owns it. */
async function summarize(source: WorkflowReadSource, queueName: string, key: Uint8Array, value: Uint8Array): Promise<RunSummary | undefined> {
  const runId = fromUtf8(key).slice(RUNS_PREFIX.length);
  const record = decodeRunRecord(value);
  let run: DurableRun = { type: 'moved' };
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS && run.type === 'moved'; attempt++) run = await readDurableRun(source, runId, queueName);
  if (run.type === 'absent' || run.type === 'foreign') return undefined;
  // A listing reports a run that will not settle rather than failing the page (its queue is
  // unknown then, so another runtime's run can show up this way).
  if (run.type === 'moved') return { runId, submittedAtMs: record.submittedAtMs, state: null, currentStep: null, jobId: null };
  if (run.type === 'queued') return { runId, submittedAtMs: decodeRunRecord(run.record).submittedAtMs, state: 'waiting-for-slot', currentStep: 0, jobId: run.jobId };
  // The id may have been terminated and submitted again since the scan: report the record read last.
  return { runId, submittedAtMs: decodeRunRecord(run.record).submittedAtMs, state: stateOf(run.job), currentStep: run.step, jobId: run.job.id };
}

/**
 * Active runs (those with a run record) of the runtime whose steps go to `queueName`, in run-id
 * order, one page. With `status`, runs in other states are skipped (as are other runtimes'
 * runs), so a page may read many more runs than it returns. A `status` of terminal states lists
 * finished runs instead (`listFinishedRuns`). Rejects with INVALID_ARGUMENT (bad limit, status or
 * cursor), CORRUPT_DATA (an undecodable run record, step pointer or finished-run record), CLOSED
 * or STORE_*.
 */
export function listRuns(source: WorkflowReadSource, queueName: string, options: FinishedRunListOptions): Promise<FinishedRunListPage>;
export function listRuns(source: WorkflowReadSource, queueName: string, options?: RunListOptions | FinishedRunListOptions): Promise<RunListPage | FinishedRunListPage>;
export function listRuns(source: WorkflowReadSource, queueName: string, options?: RunListOptions): Promise<RunListPage>;
export async function listRuns(source: WorkflowReadSource, queueName: string, options: RunListOptions | FinishedRunListOptions = {}): Promise<RunListPage | FinishedRunListPage> {
  const limit = options.limit ?? RUN_PAGE_DEFAULT;
  checkLimit(limit, 'run page', 0, Number.MAX_SAFE_INTEGER);
  const finished = terminalFilter(options.status);
  if (finished) return listFinishedRuns(source, queueName, finished, limit, options.cursor);
  const wanted = statusFilter(options.status as RunListOptions['status']);
  const runs: RunSummary[] = [];
  if (limit === 0) return { runs, nextCursor: undefined };
  let cursor = options.cursor;
  for (;;) {
    // Never more than the page still lacks, so every page ends on a scan boundary (a valid cursor).
    const page = await source.kvScan(utf8(RUNS_PREFIX), { cursor, limit: limit - runs.length });
    const rows = await Promise.all(page.entries.map(([key, value]) => summarize(source, queueName, key, value)));
    for (const row of rows) if (row && (wanted === undefined || (row.state !== null && wanted.has(row.state)))) runs.push(row);
    cursor = page.nextCursor;
    if (cursor === undefined || runs.length >= limit) return { runs, nextCursor: cursor };
  }
}

/**
 * One active run of the runtime whose steps go to `queueName` in detail, or null when no run of
 * this id is active there (never submitted, terminated: its id is released, or another runtime's). A run whose step was dead-lettered outside a worker is still
 * active (`dead`) until reconciliation fails it. Rejects with INVALID_ARGUMENT (run id),
 * CORRUPT_DATA (undecodable records, or records that stayed inconsistent across reads), CLOSED or
 * STORE_*.
 */
export async function getRun(source: WorkflowReadSource, queueName: string, runId: string): Promise<RunDetails | null> {
  validateRunId(runId);
  const run = await readSettledRun(source, runId, queueName);
  if (run.type === 'absent' || run.type === 'foreign') return null;
  const record = decodeRunRecord(run.record);
  if (run.type === 'queued') return queuedRunDetails(source, queueName, run, record.submittedAtMs);
  const { job, step } = run;
  const history = await source.attemptHistory(job.id);
  return {
    runId,
    submittedAtMs: record.submittedAtMs,
    state: stateOf(job),
    currentStep: step,
    jobId: job.id,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    interruptions: job.interruptions,
    lastError: job.lastError ?? null,
    waitingFor: waitOf(job),
    headers: userHeaders(job.headers),
    enqueuedAt: job.enqueuedAt,
    claimedAt: job.claimedAt ?? null,
    failedAt: job.failedAt ?? null,
    history,
  };
}

/** A run waiting for a concurrency slot, as `getRun` reports it (its step 0 has no job yet). */
async function queuedRunDetails(source: WorkflowReadSource, queueName: string, run: Extract<DurableRun, { type: 'queued' }>, submittedAtMs: number): Promise<RunDetails> {
  const ahead = await source.kvScan(flowQueuedPrefix(queueName, run.key), { limit: WAITING_POSITION_SCAN });
  const position = ahead.entries.findIndex(([key]) => equalBytes(key, flowQueuedKey(queueName, run.key, run.seq)));
  return {
    runId: run.run.runId,
    submittedAtMs,
    state: 'waiting-for-slot',
    currentStep: 0,
    jobId: run.jobId,
    attempts: 0,
    maxAttempts: run.run.maxAttempts,
    interruptions: 0,
    lastError: null,
    // Beyond the scan the position is only known to be at least its size.
    waitingFor: { type: 'slot', key: run.key, position: position === -1 ? ahead.entries.length : position },
    headers: { ...run.run.headers },
    enqueuedAt: submittedAtMs,
    claimedAt: null,
    failedAt: null,
    history: [],
  };
}

/**
 * `getRun`, also answering for a finished run from its record when `includeFinished` is set and
 * no run of this id is active (see finished-runs.ts). Rejects as `getRun`, and with CORRUPT_DATA
 * for an undecodable finished-run record.
 */
export async function getRunOrFinished(source: WorkflowReadSource, queueName: string, runId: string, includeFinished: boolean): Promise<RunDetails | FinishedRun | null> {
  const active = await getRun(source, queueName, runId);
  if (active !== null || !includeFinished) return active;
  // The run may have ended after the read above: its record committed with its ending.
  return readFinishedRun(source, queueName, runId);
}

/**
 * One page of the runtime queue's dead jobs, in job-id order (oldest first). A job whose payload
 * object is unreadable is listed with `payloadError`, never failing the page. Rejects with
 * INVALID_ARGUMENT (limit outside 1..1000, bad job id), CLOSED or STORE_*.
 */
export async function listDeadSteps(source: WorkflowReadSource, queueName: string, options: DeadStepListOptions = {}): Promise<DeadStep[]> {
  const limit = options.limit ?? DEAD_PAGE_DEFAULT;
  checkLimit(limit, 'dead step page', 1, DEAD_STEP_PAGE_MAX);
  const jobs = await source.deadJobs(queueName, options.afterJobId, limit);
  return jobs.map((job) => {
    const step = job.headers[HEADER_STEP];
    return {
      jobId: job.id,
      runId: job.headers[HEADER_RUN_ID] ?? null,
      stepNumber: step === undefined ? null : Number(step),
      notification: job.headers[HEADER_TERMINAL] !== undefined,
      attempts: job.attempts,
      maxAttempts: job.maxAttempts,
      interruptions: job.interruptions,
      lastError: job.lastError ?? null,
      failedAt: job.failedAt ?? null,
      payloadError: job.payloadError === undefined ? null : { ...job.payloadError },
    };
  });
}

/**
 * The signal buffered on `correlationKey` (sent before any run waited for it), or null. An
 * inspector shows it beside the run that will read it. Rejects with INVALID_ARGUMENT (key),
 * CLOSED or STORE_*.
 */
export async function readBufferedSignal(source: Pick<WorkflowReadSource, 'kvGet'>, correlationKey: string): Promise<Uint8Array | null> {
  checkCorrelationKey(correlationKey);
  return (await source.kvGet(signalBufferKey(correlationKey))) ?? null;
}
