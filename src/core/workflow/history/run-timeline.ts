/**
 * A run's timeline for inspectors (the CLI, the in-page inspector): everything the store still
 * holds about one run, active or terminated, step by step. Like the other run queries it reads
 * only durable records, so the writer and a read-only `WorkflowReader` answer alike.
 *
 * What survives depends on the writer's configuration, so every part is optional:
 * - step jobs: the current one always; earlier ones only while the queue keeps done jobs
 *   (`keepDoneMs`) and dead ones until dead retention purges them. Found by scanning the runtime
 *   queue's job spaces for the run-id header (bounded by `scanLimit`; `truncated` says so).
 * - a step's verdict and KV effects: only with step-output replay on (the replay records).
 * - memo entries: their scope and size; keys are stored hashed, so the names are not recoverable.
 * - signals: the key a step waited on (its job header), what arrived (the wake payload, or a
 *   buffered payload consumed for it while that record lives), the key's buffered signal now.
 * - the terminal outcome: the notification job's payload while it exists (a hook that observes
 *   the run), else the finished-run record while outcome retention keeps it, else a dead step
 *   job the run ended with; the time from the record, else the memo-retention marker.
 * - a workflow function's calls (function-timeline.ts): its workflow and version from a kept step
 *   job's payload, and while the run is active each `ctx` call of its history by name.
 */
import { utf8 } from '../../bytes.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { JobAttempt, JobPage, JobRecord, JobStatus, ListJobsOptions } from '../../queue/index.js';
import { DEFAULT_MEMO_PREFIX, HEADER_RUN_ID, HEADER_SIGNAL_DELIVERED, HEADER_SIGNAL_WAIT, HEADER_STEP, HEADER_TERMINAL } from '../constants.js';
import { getRun, type RunDetails, type WorkflowReadSource } from './inspection.js';
import { memoRunPrefix, parseMemoObjectName, parseTerminalMarkerKey, signalDeliveredKey, stepOutputRunPrefix, TERMINALS_PREFIX } from '../keys.js';
import type { Trigger } from '../steps/outcome.js';
import { decodeRunOutcome } from '../records.js';
import { openReplayRecord } from '../steps/replay.js';
import { userHeaders } from '../steps/step-headers.js';
import type { TerminalStatus } from '../runs/terminal-hook.js';
import { validateRunId } from '../validation.js';
import { readFinishedRun } from './finished-runs.js';
import { namedByHeaders, readFunctionTimeline, type FunctionTimeline } from './function-timeline.js';

/** A run-query source that can also list a queue's jobs by state (`Queue` and `QueueReader` both can). */
export interface RunTimelineSource extends WorkflowReadSource {
  listJobs(queue: string, status: JobStatus, options?: ListJobsOptions): Promise<JobPage>;
}

export interface RunTimelineOptions {
  /** The runtime's object store (memo entries and step-output records live there); without it those parts stay empty. */
  readonly store?: ObjectStore;
  /** The runtime's `memoPrefix`. Default `workflow-memo`. */
  readonly memoPrefix?: string;
  /** Most records scanned per job state and for terminal markers. Default 10,000. */
  readonly scanLimit?: number;
}

/** One queue job that carried a step of the run. */
export interface TimelineJob {
  readonly jobId: string;
  readonly status: JobStatus;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly interruptions: number;
  readonly enqueuedAt: number;
  readonly claimedAt: number | null;
  /** Only on kept done jobs. */
  readonly completedAt: number | null;
  readonly failedAt: number | null;
  /** While scheduled: when it becomes claimable (a delay, a retry backoff or a signal timeout). */
  readonly runAt: number | null;
  readonly lastError: string | null;
  /** Settled tries and interruptions, oldest first. */
  readonly history: readonly JobAttempt[];
}

/** The signal a step waited for, and what arrived. */
export interface TimelineSignal {
  /** Null when the key is not recorded (a signal buffered before the wait was consumed at registration, and the previous step's replay record is absent). */
  readonly correlationKey: string | null;
  /**
   * `waiting`: no signal yet; `woken`: a signal woke the parked step; `buffered`: a signal sent
   * before (or after) the wait was consumed for the step; `timed-out`: the step ran without one;
   * `unknown`: the step's records are gone.
   */
  readonly arrival: 'waiting' | 'woken' | 'buffered' | 'timed-out' | 'unknown';
  readonly arrivedAtMs: number | null;
  /** The payload that arrived, when still stored. */
  readonly payload: Uint8Array | null;
}

/** A step's verdict as its step-output replay record keeps it. */
export interface TimelineStepOutcome {
  readonly type: 'continue' | 'succeed' | 'fail' | 'cancel';
  /** For `continue`: when the next step runs. */
  readonly when: Trigger | null;
  /** For `fail` and `cancel`. */
  readonly reason: string | null;
  readonly recordedAtMs: number;
  /** Caller-KV writes and deletes the step committed with its settlement. */
  readonly kvWrites: readonly { readonly key: Uint8Array; readonly value: Uint8Array }[];
  readonly kvDeletes: readonly Uint8Array[];
}

export interface TimelineStep {
  /** Zero-based step number. */
  readonly step: number;
  /** The jobs that carried this step still stored (usually one; more when the run id was reused). */
  readonly jobs: readonly TimelineJob[];
  readonly signal: TimelineSignal | null;
  readonly outcome: TimelineStepOutcome | null;
}

/** A memo entry of the run (its key is stored as a SHA-256 hash). */
export interface TimelineMemoEntry {
  /** The step whose `step.memo` wrote it, or `run` for `step.runMemo`. */
  readonly scope: number | 'run';
  readonly keyHash: string;
  readonly size: number;
}

export interface TimelineTerminal {
  readonly status: TerminalStatus;
  readonly error: string | null;
  readonly result: Uint8Array | null;
  readonly finalStep: number;
  /**
   * `notification`: the terminal notification job's payload; `record`: the finished-run record
   * (outcome retention); `dead-step`: the dead step job the run failed with.
   */
  readonly source: 'record' | 'notification' | 'dead-step';
}

export interface RunTimeline {
  readonly runId: string;
  /** `active` while the run record exists, `terminated` when only traces remain, `unknown` when the store holds nothing of it. */
  readonly status: 'active' | 'terminated' | 'unknown';
  /** The active run's details (null once terminated). */
  readonly active: RunDetails | null;
  /** The run's headers, without the runtime's reserved ones (from the newest record that has them). */
  readonly headers: Readonly<Record<string, string>>;
  /** Steps with any stored trace, in step order. */
  readonly steps: readonly TimelineStep[];
  readonly memo: readonly TimelineMemoEntry[];
  readonly terminal: TimelineTerminal | null;
  /**
   * Set for a run of a workflow function (`defineWorkflow`): its workflow, version and, while the
   * run is active, the `ctx` calls of its history by name (its `steps` are then its executions:
   * one per durable sleep or signal wait, not the workflow's steps). Null for a StepRunner run.
   */
  readonly workflowFunction: FunctionTimeline | null;
  /** When the run terminated, from its finished-run record or the memo-retention marker (null when neither is kept). */
  readonly terminatedAtMs: number | null;
  /** A scan stopped at `scanLimit`: older traces may be missing. */
  readonly truncated: boolean;
}

const DEFAULT_SCAN_LIMIT = 10_000;
const PAGE = 500;
const STATUSES: readonly JobStatus[] = ['pending', 'scheduled', 'claimed', 'done', 'dead'];

function timelineJob(job: JobRecord, history: readonly JobAttempt[]): TimelineJob {
  return {
    jobId: job.id,
    status: job.status,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    interruptions: job.interruptions,
    enqueuedAt: job.enqueuedAt,
    claimedAt: job.claimedAt ?? null,
    completedAt: job.completedAt ?? null,
    failedAt: job.failedAt ?? null,
    runAt: job.runAt ?? null,
    lastError: job.lastError ?? null,
    history,
  };
}

/** The run's jobs on the runtime queue (steps and notification), scanning each state up to `limit` records. */
async function findRunJobs(source: RunTimelineSource, queueName: string, runId: string, limit: number): Promise<{ jobs: JobRecord[]; truncated: boolean }> {
  const jobs: JobRecord[] = [];
  let truncated = false;
  for (const status of STATUSES) {
    let cursor: Uint8Array | undefined;
    let scanned = 0;
    do {
      const page = await source.listJobs(queueName, status, { cursor, limit: Math.min(PAGE, limit - scanned) });
      scanned += page.jobs.length;
      for (const job of page.jobs) if (job.headers[HEADER_RUN_ID] === runId) jobs.push(job);
      cursor = page.nextCursor;
      if (cursor !== undefined && scanned >= limit) truncated = true;
    } while (cursor !== undefined && scanned < limit);
  }
  return { jobs, truncated };
}

async function replayOutcomes(store: ObjectStore, prefix: string, runId: string): Promise<Map<number, TimelineStepOutcome>> {
  const out = new Map<number, TimelineStepOutcome>();
  const base = stepOutputRunPrefix(prefix, runId);
  for await (const info of store.list(base)) {
    const step = Number(info.key.slice(base.length).split('/')[0]);
    if (!Number.isSafeInteger(step)) continue;
    const obj = await store.get(info.key);
    const record = obj && openReplayRecord(obj.data, info.key);
    if (!record) continue;
    const previous = out.get(step);
    if (previous && previous.recordedAtMs >= record.storedAtMs) continue;
    const o = record.outcome;
    out.set(step, {
      type: o.type,
      when: o.type === 'continue' ? o.when : null,
      reason: o.type === 'fail' || o.type === 'cancel' ? o.reason : null,
      recordedAtMs: record.storedAtMs,
      kvWrites: record.effects.writes.map(([key, value]) => ({ key, value })),
      kvDeletes: record.effects.deletes,
    });
  }
  return out;
}

async function memoEntries(store: ObjectStore, prefix: string, runId: string): Promise<TimelineMemoEntry[]> {
  const base = memoRunPrefix(prefix, runId);
  const out: TimelineMemoEntry[] = [];
  for await (const info of store.list(base)) {
    const name = parseMemoObjectName(info.key.slice(base.length));
    if (name) out.push({ ...name, size: info.size });
  }
  return out;
}

async function terminatedAt(source: WorkflowReadSource, runId: string, limit: number): Promise<{ at: number | null; truncated: boolean }> {
  let cursor: Uint8Array | undefined;
  let scanned = 0;
  let at: number | null = null;
  do {
    const page = await source.kvScan(utf8(TERMINALS_PREFIX), { cursor, limit: Math.min(PAGE, limit - scanned) });
    scanned += page.entries.length;
    for (const [key] of page.entries) {
      const marker = parseTerminalMarkerKey(key);
      if (marker?.runId === runId) at = marker.terminatedAtMs;
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined && scanned < limit);
  return { at, truncated: cursor !== undefined };
}

async function signalOf(source: WorkflowReadSource, runId: string, step: number, job: JobRecord | undefined, previous: TimelineStepOutcome | undefined): Promise<TimelineSignal | null> {
  const awaitedKey = previous?.when?.type === 'onSignal' ? previous.when.correlationKey : null;
  if (!job) return awaitedKey === null ? null : { correlationKey: awaitedKey, arrival: 'unknown', arrivedAtMs: null, payload: null };
  const waitKey = job.headers[HEADER_SIGNAL_WAIT];
  const correlationKey = waitKey ?? awaitedKey;
  const consumedAtRegistration = job.headers[HEADER_SIGNAL_DELIVERED] !== undefined;
  if (waitKey === undefined && !consumedAtRegistration) return awaitedKey === null ? null : { correlationKey, arrival: 'unknown', arrivedAtMs: null, payload: null };
  if (job.wokenAt !== undefined) return { correlationKey, arrival: 'woken', arrivedAtMs: job.wokenAt, payload: job.wakePayload ?? new Uint8Array(0) };
  if (consumedAtRegistration) {
    // Buffered before the wait began: consumed into a delivered record, deleted when the step is acknowledged.
    return { correlationKey, arrival: 'buffered', arrivedAtMs: job.enqueuedAt, payload: (await source.kvGet(signalDeliveredKey(runId, step))) ?? null };
  }
  if (job.status === 'scheduled') return { correlationKey, arrival: 'waiting', arrivedAtMs: null, payload: null };
  const late = await source.kvGet(signalDeliveredKey(runId, step));
  if (late !== undefined) return { correlationKey, arrival: 'buffered', arrivedAtMs: job.claimedAt ?? null, payload: late };
  return { correlationKey, arrival: 'timed-out', arrivedAtMs: null, payload: null };
}

/** The newest job first (a reused run id leaves an older incarnation's jobs behind). */
const newestFirst = (a: JobRecord, b: JobRecord): number => b.enqueuedAt - a.enqueuedAt || (a.id < b.id ? 1 : -1);

/**
 * The timeline of `runId` on the runtime whose steps go to `queueName`: see the module comment
 * for what is kept and where it comes from. Never null: a run the store knows nothing of comes
 * back with status `unknown` and no steps. Rejects with INVALID_ARGUMENT (run id), CORRUPT_DATA
 * (undecodable records), CLOSED or STORE_*.
 */
export async function getRunTimeline(source: RunTimelineSource, queueName: string, runId: string, options: RunTimelineOptions = {}): Promise<RunTimeline> {
  validateRunId(runId);
  const limit = options.scanLimit ?? DEFAULT_SCAN_LIMIT;
  const prefix = options.memoPrefix ?? DEFAULT_MEMO_PREFIX;
  const [active, finished, found, markers, outcomes, memo] = await Promise.all([
    getRun(source, queueName, runId),
    readFinishedRun(source, queueName, runId),
    findRunJobs(source, queueName, runId, limit),
    terminatedAt(source, runId, limit),
    options.store ? replayOutcomes(options.store, prefix, runId) : Promise.resolve(new Map<number, TimelineStepOutcome>()),
    options.store ? memoEntries(options.store, prefix, runId) : Promise.resolve([]),
  ]);
  const stepJobs = new Map<number, JobRecord[]>();
  let notification: JobRecord | undefined;
  for (const job of found.jobs.sort(newestFirst)) {
    if (job.headers[HEADER_TERMINAL] !== undefined) {
      notification ??= job;
      continue;
    }
    const step = Number(job.headers[HEADER_STEP]);
    if (!Number.isSafeInteger(step)) continue;
    stepJobs.set(step, [...(stepJobs.get(step) ?? []), job]);
  }
  const numbers = new Set<number>([...stepJobs.keys(), ...outcomes.keys(), ...memo.flatMap((m) => (m.scope === 'run' ? [] : [m.scope]))]);
  if (active) numbers.add(active.currentStep);
  for (const [step, outcome] of outcomes) if (outcome.type === 'continue') numbers.add(step + 1);
  const steps: TimelineStep[] = [];
  for (const step of [...numbers].sort((a, b) => a - b)) {
    const jobs = stepJobs.get(step) ?? [];
    const timelineJobs = await Promise.all(jobs.map(async (job) => timelineJob(job, await source.attemptHistory(job.id))));
    steps.push({ step, jobs: timelineJobs, signal: await signalOf(source, runId, step, jobs[0], outcomes.get(step - 1)), outcome: outcomes.get(step) ?? null });
  }

  const fn = await readFunctionTimeline(source, queueName, runId, active, found.jobs, limit);

  let terminal: TimelineTerminal | null = null;
  const notificationOutcome = notification && notification.payloadError === undefined ? decodeRunOutcome(notification.payload) : undefined;
  // While the id is active again, a record is its earlier run's ending: not this run's outcome.
  const record = active ? null : finished;
  if (notificationOutcome) {
    // The same outcome as the record (one transaction wrote both); kept first as it always was.
    const o = notificationOutcome;
    terminal = { status: o.status, error: o.error, result: o.result, finalStep: o.finalStep, source: 'notification' };
  } else if (record) {
    terminal = { status: record.status, error: record.error, result: record.result, finalStep: record.finalStep, source: 'record' };
  } else if (!active) {
    const last = [...stepJobs.entries()].sort(([a], [b]) => b - a)[0];
    const dead = last?.[1].find((j) => j.status === 'dead');
    if (last && dead) terminal = { status: 'failed', error: dead.lastError ?? null, result: null, finalStep: last[0], source: 'dead-step' };
  }
  // Notification jobs carry only reserved headers; the run's own are on its step jobs and in the outcome.
  const newestStepJob = found.jobs.find((j) => j.headers[HEADER_TERMINAL] === undefined);
  const headersFrom =
    active?.headers ?? (record?.omitted.includes('headers') === false ? record.headers : notificationOutcome?.headers ? notificationOutcome.headers : newestStepJob ? userHeaders(newestStepJob.headers) : {});
  const anything = active !== null || record !== null || steps.length > 0 || memo.length > 0 || notification !== undefined || markers.at !== null;
  return {
    runId,
    status: active ? 'active' : anything ? 'terminated' : 'unknown',
    active,
    headers: headersFrom,
    steps,
    memo,
    terminal,
    // An ended run whose step jobs are gone is still named by its headers (the finished-run record keeps them).
    workflowFunction: fn.timeline ?? namedByHeaders(headersFrom),
    terminatedAtMs: record?.endedAtMs ?? markers.at,
    truncated: found.truncated || markers.truncated || fn.truncated,
  };
}
