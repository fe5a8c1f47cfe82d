/**
 * The `--json` schema (`taquba-cli/1`, documented in docs/cli.md): every command prints one
 * document `{ schema, command, ...}` on stdout (`watch` prints one per line); an error prints
 * `{ schema, error: { code, message, hint } }` on stderr. Times are epoch milliseconds (`…AtMs`),
 * byte values `{ size, text, base64 }` (`text` null when the bytes are not UTF-8 text). Fields are
 * only ever added within a schema version, never renamed or removed.
 */
import type { JobAttempt, QueueStats } from '../core/queue/index.js';
import type { FinishedRun } from '../core/workflow/history/finished-runs.js';
import type { DeadStep, RunDetails, RunSummary, RunWait } from '../core/workflow/history/inspection.js';
import type { RunTimeline, TimelineJob, TimelineSignal, TimelineStep, TimelineStepOutcome } from '../core/workflow/history/run-timeline.js';
import type { Trigger } from '../core/workflow/steps/outcome.js';
import type { FunctionCall } from '../core/workflow/functions/calls.js';
import type { FunctionTimeline } from '../core/workflow/history/function-timeline.js';
import { decodeValue } from '../core/codec.js';
import { bytesText, valueJson } from './format.js';

export const JSON_SCHEMA = 'taquba-cli/1';

export interface JsonBytes {
  readonly size: number;
  readonly text: string | null;
  readonly base64: string;
}

export const jsonBytes = (bytes: Uint8Array): JsonBytes => ({ size: bytes.length, text: bytesText(bytes) ?? null, base64: Buffer.from(bytes).toString('base64') });

export type JsonWait =
  | { type: 'signal'; correlationKey: string; timeoutAtMs: number }
  | { type: 'timer'; atMs: number; reason: 'delay' | 'retry' }
  | { type: 'slot'; key: string; position: number }
  | null;

export function jsonWait(wait: RunWait | null): JsonWait {
  if (wait === null) return null;
  if (wait.type === 'slot') return { type: 'slot', key: wait.key, position: wait.position };
  return wait.type === 'signal' ? { type: 'signal', correlationKey: wait.correlationKey, timeoutAtMs: wait.timeoutAt } : { type: 'timer', atMs: wait.at, reason: wait.reason };
}

/** One row of `runs` (and `watch`): the summary, completed with the details when the run could be read; `queue` is the queue its steps go to. */
export function jsonRun(summary: RunSummary, details: RunDetails | null, queue: string) {
  return {
    runId: summary.runId,
    queue,
    state: details?.state ?? summary.state,
    currentStep: details?.currentStep ?? summary.currentStep,
    jobId: details?.jobId ?? summary.jobId,
    attempts: details?.attempts ?? null,
    maxAttempts: details?.maxAttempts ?? null,
    interruptions: details?.interruptions ?? null,
    lastError: details?.lastError ?? null,
    waitingFor: jsonWait(details?.waitingFor ?? null),
    submittedAtMs: summary.submittedAtMs,
    headers: details?.headers ?? {},
  };
}
export type JsonRun = ReturnType<typeof jsonRun>;

/**
 * One row of `runs --status <finished states>`: a finished run from its record (kept for the
 * writer's `outcomeRetentionMs`); `queue` is the queue its steps went to. `result` is null but
 * for `succeeded`, and then too when the record left it out (over 64 KiB: `resultSize` still
 * gives its length, `omitted` names it).
 */
export function jsonFinishedRun(run: FinishedRun, queue: string) {
  return {
    runId: run.runId,
    queue,
    status: run.status,
    finalStep: run.finalStep,
    attempts: run.attempts,
    result: run.result === null ? null : jsonBytes(run.result),
    resultSize: run.resultBytes,
    error: run.error,
    endedAtMs: run.endedAtMs,
    submittedAtMs: run.submittedAtMs,
    headers: run.headers,
    omitted: [...run.omitted],
  };
}
export type JsonFinishedRun = ReturnType<typeof jsonFinishedRun>;

const jsonTry = (a: JobAttempt) => ({
  attempt: a.attempt,
  outcome: a.outcome,
  claimedAtMs: a.claimedAt ?? null,
  recordedAtMs: a.recordedAt,
  durationMs: a.claimedAt === undefined ? null : a.recordedAt - a.claimedAt,
  error: a.error ?? null,
});

const jsonJob = (j: TimelineJob) => ({
  jobId: j.jobId,
  status: j.status,
  attempts: j.attempts,
  maxAttempts: j.maxAttempts,
  interruptions: j.interruptions,
  enqueuedAtMs: j.enqueuedAt,
  claimedAtMs: j.claimedAt,
  completedAtMs: j.completedAt,
  failedAtMs: j.failedAt,
  runAtMs: j.runAt,
  lastError: j.lastError,
  tries: j.history.map(jsonTry),
});

const jsonSignal = (s: TimelineSignal | null) =>
  s === null ? null : { correlationKey: s.correlationKey, arrival: s.arrival, arrivedAtMs: s.arrivedAtMs, payload: s.payload === null ? null : jsonBytes(s.payload) };

const jsonTrigger = (t: Trigger | null) =>
  t === null ? null : t.type === 'onSignal' ? { type: 'signal', correlationKey: t.correlationKey, timeoutMs: t.timeoutMs } : t.type === 'after' ? { type: 'delay', delayMs: t.delayMs } : { type: 'immediate' };

const jsonOutcome = (o: TimelineStepOutcome | null) =>
  o === null
    ? null
    : {
        type: o.type,
        next: jsonTrigger(o.when),
        reason: o.reason,
        recordedAtMs: o.recordedAtMs,
        kvWrites: o.kvWrites.map((w) => ({ key: jsonBytes(w.key), value: jsonBytes(w.value) })),
        kvDeletes: o.kvDeletes.map(jsonBytes),
      };

function jsonStep(s: TimelineStep, timeline: RunTimeline) {
  return {
    step: s.step,
    jobs: s.jobs.map(jsonJob),
    signal: jsonSignal(s.signal),
    outcome: jsonOutcome(s.outcome),
    memo: timeline.memo.filter((m) => m.scope === s.step).map((m) => ({ keyHash: m.keyHash, size: m.size })),
  };
}

/** A value-codec value as plain JSON (bytes as their size, BigInt as text, Map and Set as arrays), or null when it does not decode. */
function plainValue(bytes: Uint8Array): unknown {
  try {
    const value = decodeValue(bytes);
    return value === undefined ? null : JSON.parse(valueJson(value));
  } catch {
    return null;
  }
}

const jsonCall = (call: FunctionCall) => ({
  position: call.position,
  kind: call.kind,
  name: call.name,
  status: call.status,
  value: call.value === null ? null : plainValue(call.value),
  valueBytes: call.value === null ? null : jsonBytes(call.value),
  untilMs: call.untilMs,
  error: call.error,
  attempts: call.attempts,
  retried: call.retried,
});

const jsonFunction = (fn: FunctionTimeline | null) => (fn === null ? null : { name: fn.name, version: fn.version, calls: fn.calls.map(jsonCall) });

/** The `run` document's body; `queue` is the queue the run was found on (null: nothing stored on any). */
export function jsonTimeline(t: RunTimeline, queue: string | null) {
  const a = t.active;
  return {
    runId: t.runId,
    queue,
    status: t.status,
    state: a?.state ?? null,
    currentStep: a?.currentStep ?? null,
    waitingFor: jsonWait(a?.waitingFor ?? null),
    submittedAtMs: a?.submittedAtMs ?? null,
    headers: t.headers,
    steps: t.steps.map((s) => jsonStep(s, t)),
    runMemo: t.memo.filter((m) => m.scope === 'run').map((m) => ({ keyHash: m.keyHash, size: m.size })),
    terminal: t.terminal === null ? null : { status: t.terminal.status, error: t.terminal.error, result: t.terminal.result === null ? null : jsonBytes(t.terminal.result), finalStep: t.terminal.finalStep, source: t.terminal.source },
    workflowFunction: jsonFunction(t.workflowFunction),
    terminatedAtMs: t.terminatedAtMs,
    truncated: t.truncated,
  };
}

export const jsonDead = (d: DeadStep, queue: string) => ({
  jobId: d.jobId,
  queue,
  runId: d.runId,
  step: d.stepNumber,
  notification: d.notification,
  attempts: d.attempts,
  maxAttempts: d.maxAttempts,
  interruptions: d.interruptions,
  lastError: d.lastError,
  failedAtMs: d.failedAt,
  payloadError: d.payloadError === null ? null : { code: d.payloadError.code, object: d.payloadError.object, message: d.payloadError.message },
});

export const jsonQueue = (q: QueueStats) => ({ queue: q.queue, pending: q.pending, scheduled: q.scheduled, claimed: q.claimed, done: q.done, dead: q.dead });

/**
 * One document of a command, with the fields every document has. `queue` is the queue the
 * command was narrowed to (`--queue`, or the queue of the run or job it acted on), or null when
 * it looked on every queue of the store.
 */
export function document(command: string, context: { store: string; path: string; queue: string | null; nowMs: number }, body: Record<string, unknown>): string {
  return JSON.stringify({ schema: JSON_SCHEMA, command, store: context.store, path: context.path, queue: context.queue, nowMs: context.nowMs, ...body });
}

export const errorDocument = (code: string, message: string, hint: string | null): string => JSON.stringify({ schema: JSON_SCHEMA, error: { code, message, hint } });
