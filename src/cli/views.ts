/** Human views of each command: aligned tables and a step-by-step run timeline. */
import type { QueueStats } from '../core/queue/index.js';
import type { DeadStep, RunWait } from '../core/workflow/history/inspection.js';
import type { RunTimeline, TimelineJob, TimelineSignal, TimelineStep, TimelineStepOutcome } from '../core/workflow/history/run-timeline.js';
import type { Trigger } from '../core/workflow/steps/outcome.js';
import { duration, relativeTime, showBytes, showValue, table, type Colors } from './format.js';
import type { JsonFinishedRun, JsonRun } from './json.js';
import { functionLines } from './function-view.js';

export interface ViewContext {
  readonly colors: Colors;
  readonly nowMs: number;
}

function stateColor(state: string | null, c: Colors): string {
  if (state === null) return c.dim('unsettled');
  switch (state) {
    case 'running':
    case 'succeeded':
    case 'done':
    case 'completed':
      return c.green(state);
    case 'dead':
    case 'failed':
    case 'dead_lettered':
      return c.red(state);
    case 'waiting-for-signal':
    case 'waiting-for-slot':
    case 'scheduled':
    case 'cancelling':
    case 'cancelled':
    case 'retried':
      return c.yellow(state);
    default:
      return state;
  }
}

export function waitText(wait: RunWait | null, v: ViewContext): string {
  if (wait === null) return '';
  if (wait.type === 'signal') return `signal ${JSON.stringify(wait.correlationKey)} (times out ${relativeTime(wait.timeoutAt, v.nowMs)})`;
  if (wait.type === 'slot') return `slot of ${JSON.stringify(wait.key)} (${wait.position} ahead)`;
  return `${wait.reason === 'retry' ? 'retry' : 'timer'} ${relativeTime(wait.at, v.nowMs)}`;
}

function jsonWaitText(run: JsonRun, v: ViewContext): string {
  const w = run.waitingFor;
  if (w === null) return '';
  if (w.type === 'slot') return waitText(w, v);
  return waitText(w.type === 'signal' ? { type: 'signal', correlationKey: w.correlationKey, timeoutAt: w.timeoutAtMs } : { type: 'timer', at: w.atMs, reason: w.reason }, v);
}

/** `showQueue`: a QUEUE column, when the runs come from several queues. */
export function runsView(runs: readonly JsonRun[], nextCursor: string | null, v: ViewContext, showQueue = false): string {
  if (runs.length === 0) return v.colors.dim('no active runs');
  const rows = runs.map((r) => [
    r.runId,
    ...(showQueue ? [r.queue] : []),
    stateColor(r.state, v.colors),
    r.currentStep === null ? '-' : String(r.currentStep),
    jsonWaitText(r, v) || v.colors.dim('-'),
    r.attempts === null ? '-' : `${r.attempts}/${r.maxAttempts}`,
    relativeTime(r.submittedAtMs, v.nowMs),
  ]);
  const out = table(['RUN', ...(showQueue ? ['QUEUE'] : []), 'STATE', 'STEP', 'WAITING FOR', 'ATTEMPTS', 'AGE'], rows, v.colors);
  return nextCursor === null ? out : `${out}\n${v.colors.dim(`more runs: --after ${nextCursor}`)}`;
}

/** Text on one line, cut at `max` characters. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** What a finished run ended with, short: its result, else its error. */
function outcomeText(r: JsonFinishedRun, c: Colors): string {
  if (r.status === 'succeeded') {
    if (r.result !== null) return r.result.text === null ? `<${r.result.size} bytes>` : JSON.stringify(oneLine(r.result.text, 40));
    return c.dim(r.resultSize === null ? '-' : `<${r.resultSize} bytes, not kept>`);
  }
  if (r.error === null) return c.dim(r.status === 'cancelled' ? 'external cancel' : '-');
  return r.status === 'failed' ? c.red(oneLine(r.error, 60)) : oneLine(r.error, 60);
}

/** `runs --status <finished states>`; `status` is what was asked for (the next page's command repeats it). */
export function finishedRunsView(runs: readonly JsonFinishedRun[], nextCursor: string | null, v: ViewContext, showQueue: boolean, status: readonly string[]): string {
  if (runs.length === 0) return v.colors.dim(`no finished runs (${status.join(', ')}) kept`);
  const rows = runs.map((r) => [
    r.runId,
    ...(showQueue ? [r.queue] : []),
    stateColor(r.status, v.colors),
    relativeTime(r.endedAtMs, v.nowMs),
    String(r.finalStep),
    outcomeText(r, v.colors),
  ]);
  const out = table(['RUN', ...(showQueue ? ['QUEUE'] : []), 'STATE', 'ENDED', 'STEP', 'RESULT / ERROR'], rows, v.colors);
  return nextCursor === null ? out : `${out}\n${v.colors.dim(`more runs: --status ${status.join(',')} --after ${nextCursor}`)}`;
}

/** `queues`: each dead step's queue, for a QUEUE column (when they come from several queues). */
export function deadView(dead: readonly DeadStep[], v: ViewContext, queues?: readonly string[]): string {
  if (dead.length === 0) return v.colors.dim('no dead steps');
  const rows = dead.map((d, i) => [
    d.jobId,
    ...(queues ? [queues[i] ?? ''] : []),
    d.runId ?? '-',
    d.notification ? 'notification' : d.stepNumber === null ? '-' : String(d.stepNumber),
    `${d.attempts}/${d.maxAttempts}`,
    d.failedAt === null ? '-' : relativeTime(d.failedAt, v.nowMs),
    v.colors.red(d.payloadError ? `${d.lastError ?? ''} [${d.payloadError.message}]` : (d.lastError ?? '')),
  ]);
  return table(['JOB', ...(queues ? ['QUEUE'] : []), 'RUN', 'STEP', 'ATTEMPTS', 'FAILED', 'LAST ERROR'], rows, v.colors);
}

export function queuesView(queues: readonly QueueStats[], v: ViewContext): string {
  if (queues.length === 0) return v.colors.dim('no queues yet');
  const rows = queues.map((q) => [q.queue, String(q.pending), String(q.scheduled), String(q.claimed), String(q.done), q.dead > 0 ? v.colors.red(String(q.dead)) : '0']);
  return table(['QUEUE', 'PENDING', 'SCHEDULED', 'CLAIMED', 'DONE', 'DEAD'], rows, v.colors);
}

function triggerText(t: Trigger | null): string {
  if (t === null || t.type === 'immediate') return 'continue now';
  if (t.type === 'after') return `continue after ${duration(t.delayMs)}`;
  return `continue on signal ${JSON.stringify(t.correlationKey)} (timeout ${duration(t.timeoutMs)})`;
}

function outcomeLines(o: TimelineStepOutcome, v: ViewContext): string[] {
  const verdict = o.type === 'continue' ? triggerText(o.when) : o.type === 'succeed' ? 'succeed' : `${o.type}: ${o.reason ?? ''}`;
  const lines = [`outcome: ${verdict} ${v.colors.dim(`(recorded ${relativeTime(o.recordedAtMs, v.nowMs)})`)}`];
  for (const w of o.kvWrites) lines.push(`kv write ${showBytes(w.key)} = ${showBytes(w.value, 40)}`);
  for (const d of o.kvDeletes) lines.push(`kv delete ${showBytes(d)}`);
  return lines;
}

/** A function run's signal by its name (its correlation key is `<runId>#<name>`), any other by its key. */
function signalName(key: string, t: RunTimeline): string {
  const own = `${t.runId}#`;
  return t.workflowFunction && key.startsWith(own) ? key.slice(own.length) : JSON.stringify(key);
}

function signalLine(s: TimelineSignal, t: RunTimeline, v: ViewContext): string {
  const key = s.correlationKey === null ? 'signal' : `signal ${signalName(s.correlationKey, t)}`;
  const payload = s.payload === null ? '' : ` ${showBytes(s.payload)}`;
  const when = s.arrivedAtMs === null ? '' : ` ${v.colors.dim(relativeTime(s.arrivedAtMs, v.nowMs))}`;
  const arrival = s.arrival === 'woken' ? 'arrived' : s.arrival === 'buffered' ? 'arrived before the wait (buffered)' : s.arrival;
  return `${key}: ${arrival}${payload}${when}`;
}

function jobLines(j: TimelineJob, v: ViewContext): string[] {
  const times = [`enqueued ${relativeTime(j.enqueuedAt, v.nowMs)}`];
  if (j.completedAt !== null) times.push(`done ${relativeTime(j.completedAt, v.nowMs)} (took ${duration(j.completedAt - j.enqueuedAt)})`);
  if (j.failedAt !== null) times.push(`dead ${relativeTime(j.failedAt, v.nowMs)}`);
  if (j.runAt !== null && j.status === 'scheduled') times.push(`runs ${relativeTime(j.runAt, v.nowMs)}`);
  const lines = [`job ${j.jobId} ${stateColor(j.status, v.colors)} attempts ${j.attempts}/${j.maxAttempts}${j.interruptions ? `, ${j.interruptions} interrupted` : ''} · ${times.join(' · ')}`];
  for (const t of j.history) {
    const took = t.claimedAt === undefined ? '' : ` ${duration(t.recordedAt - t.claimedAt)}`;
    lines.push(`  try ${t.attempt} ${stateColor(t.outcome, v.colors)}${took} ${v.colors.dim(relativeTime(t.recordedAt, v.nowMs))}${t.error ? ` ${v.colors.red(t.error)}` : ''}`);
  }
  if (j.status === 'claimed' && j.claimedAt !== null) lines.push(`  try ${j.attempts} ${v.colors.green('running')} since ${relativeTime(j.claimedAt, v.nowMs)}`);
  if (j.lastError !== null && !j.history.some((t) => t.error === j.lastError)) lines.push(`  last error: ${v.colors.red(j.lastError)}`);
  return lines;
}

function stepBlock(s: TimelineStep, t: RunTimeline, v: ViewContext): string[] {
  const current = t.active?.currentStep === s.step;
  const label = current ? stateColor(t.active!.state, v.colors) : s.jobs[0] ? stateColor(s.jobs[0].status, v.colors) : v.colors.dim('no job kept');
  // A workflow function's underlying steps are its executions (one per sleep or wait), not its steps.
  const lines = [`${v.colors.bold(`${t.workflowFunction ? 'execution' : 'step'} ${s.step}`)}  ${label}`];
  const body: string[] = [];
  if (s.signal) body.push(signalLine(s.signal, t, v));
  for (const j of s.jobs) body.push(...jobLines(j, v));
  if (s.outcome) body.push(...outcomeLines(s.outcome, v));
  const memo = t.memo.filter((m) => m.scope === s.step);
  if (memo.length > 0) body.push(`memo: ${memo.map((m) => `${m.keyHash.slice(0, 12)}… (${m.size} bytes)`).join(', ')}`);
  return [...lines, ...body.map((l) => `  ${l}`)];
}

/** Why finished steps show so little, and the writer's options that keep more. */
const KEEP_MORE_HINT =
  "hint: finished step jobs are deleted at ack by default; Queue.open with queueConfigs: { 'workflow-steps': { keepDoneMs: 86_400_000 } } keeps their tries a day, and the runtime option stepOutputReplay keeps each step's verdict and KV effects";

/** `queue`: the queue the run was found on, named in the first line. */
export function timelineView(t: RunTimeline, v: ViewContext, queue?: string): string {
  const c = v.colors;
  if (t.status === 'unknown') return c.dim(`run ${t.runId}: nothing stored (never submitted, or its traces were removed)`);
  const a = t.active;
  const on = queue === undefined ? '' : ` · queue ${queue}`;
  const fn = t.workflowFunction;
  const position = fn ? `execution ${a?.currentStep}` : `step ${a?.currentStep}`;
  const head = a
    ? `${c.bold(`run ${t.runId}`)}  active${on} · ${stateColor(a.state, c)} · ${position} · submitted ${relativeTime(a.submittedAtMs, v.nowMs)}`
    : `${c.bold(`run ${t.runId}`)}  terminated${on}${t.terminatedAtMs === null ? '' : ` ${relativeTime(t.terminatedAtMs, v.nowMs)}`}`;
  const lines = [head];
  // A function's calls say what it waits for, by name; a retry's backoff is the execution's own.
  if (a?.waitingFor && (!fn || (a.waitingFor.type === 'timer' && a.waitingFor.reason === 'retry'))) lines.push(`waiting for ${waitText(a.waitingFor, v)}`);
  const headers = Object.entries(t.headers);
  if (headers.length > 0) lines.push(`headers: ${headers.map(([k, val]) => `${k}=${val}`).join(' ')}`);
  if (fn) lines.push(...functionLines(fn, a !== null, v));
  for (const s of t.steps) lines.push(...stepBlock(s, t, v));
  const runMemo = t.memo.filter((m) => m.scope === 'run');
  if (runMemo.length > 0) lines.push(`run memo: ${runMemo.map((m) => `${m.keyHash.slice(0, 12)}… (${m.size} bytes)`).join(', ')}`);
  if (t.terminal) {
    // A function's result is a value-codec value; a StepRunner's, the runner's bytes.
    const result = (bytes: Uint8Array): string => (fn ? showValue(bytes, 120) : showBytes(bytes));
    const detail = t.terminal.result ? ` result ${result(t.terminal.result)}` : t.terminal.error ? ` ${t.terminal.error}` : '';
    lines.push(`${c.bold('outcome')}: ${stateColor(t.terminal.status, c)} at ${fn ? 'execution' : 'step'} ${t.terminal.finalStep}${detail}`);
  } else if (!a) lines.push(c.dim('outcome: not kept (no finished-run record, terminal notification or dead step left in the store: outcomeRetentionMs 0, or swept)'));
  if (t.truncated) lines.push(c.dim('(scan limit reached: older traces may be missing)'));
  if (t.steps.some((s) => s.jobs.length === 0 && s.step !== a?.currentStep)) lines.push(c.dim(KEEP_MORE_HINT));
  return lines.join('\n');
}
