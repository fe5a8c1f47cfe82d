/**
 * The page's picture of one run, from what the runtime stores (`client.runTimeline`: the run's
 * state, what it waits for, the workflow's recorded calls, how it ended) and what the demo logged
 * (attempts of each step, model calls). The run's state comes from the runtime only, in the same
 * words as the inspector, so the two never disagree; the demo's logs add what the runtime does not
 * keep (outputs, every attempt with its error, interruptions). Pure functions over plain data.
 */
import type { WorkflowClient } from 'taquba-workflow/browser';
import { SERVER_HOST, SIGNALS, stepLabel, type AgentResult } from '../shared/agent-state.js';
import type { AttemptRecord, ModelCallRecord, RunRecord } from '../shared/demo-db.js';

export type RunTimeline = Awaited<ReturnType<WorkflowClient['runTimeline']>>;
type FunctionCall = NonNullable<RunTimeline['workflowFunction']>['calls'][number];

/** A run's state as the runtime reports it (`ended`: finished, its outcome no longer kept). */
export type RunState = 'pending' | 'running' | 'cancelling' | 'waiting-for-signal' | 'waiting-for-slot' | 'scheduled' | 'dead' | 'succeeded' | 'failed' | 'cancelled' | 'ended';

/** The inspector's words for each state (`<taquba-inspector>` shows the same badge). */
export const STATE_TEXT: Readonly<Record<RunState, string>> = {
  pending: 'Pending',
  running: 'Running',
  cancelling: 'Cancelling',
  'waiting-for-signal': 'Waiting for a signal',
  'waiting-for-slot': 'Waiting for a slot',
  scheduled: 'Scheduled',
  dead: 'Dead-lettered',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  ended: 'Ended',
};

const ACTIVE: ReadonlySet<RunState> = new Set<RunState>(['pending', 'running', 'cancelling', 'waiting-for-signal', 'waiting-for-slot', 'scheduled', 'dead']);

/** Where a handed-off run went (`client.handOff`): the run is read there once it was delivered. */
export interface RunLocation {
  /** The server's URL the hand-off named. */
  readonly movedTo: string | null;
  /** The server confirmed it has the run. */
  readonly delivered: boolean;
  /** The step the run had reached when it left this browser. */
  readonly atStep: number;
  /** The server answered the page's last probe. */
  readonly serverAnswers: boolean;
}

/** Everything the panel shows about a run, read at `now`. */
export interface RunSnapshot {
  readonly runId: string;
  /** This browser's record of the run (absent for a run started elsewhere, picked in the inspector). */
  readonly record: RunRecord | undefined;
  readonly timeline: RunTimeline;
  readonly attempts: readonly AttemptRecord[];
  readonly calls: readonly ModelCallRecord[];
  /** An `approve` signal was sent and waits, buffered, for the run to read it. */
  readonly approvalBuffered: boolean;
  /** The host id of the tab that executes runs now. */
  readonly leader: string | null;
  /** A succeeded run's value. */
  readonly result: AgentResult | null;
  /** Set when the run was handed off to the server (its timeline is then the server's). */
  readonly location: RunLocation | null;
}

export function stateOf(s: RunSnapshot): RunState {
  return s.timeline.active?.state ?? s.timeline.terminal?.status ?? 'ended';
}

export const isActive = (s: RunSnapshot): boolean => ACTIVE.has(stateOf(s));

/** The signal the run waits for now, by name, and until when. */
export function waitingFor(s: RunSnapshot): { readonly name: string; readonly until: number } | null {
  const wait = s.timeline.active?.waitingFor;
  if (wait?.type !== 'signal') return null;
  const own = `${s.runId}#`;
  return wait.correlationKey.startsWith(own) ? { name: wait.correlationKey.slice(own.length), until: wait.timeoutAt } : null;
}

const callsOf = (s: RunSnapshot): readonly FunctionCall[] => s.timeline.workflowFunction?.calls ?? [];

/** The approval timed out once and the run escalated (or is escalating). */
export function escalated(s: RunSnapshot): boolean {
  return callsOf(s).some((c) => (c.kind === 'wait' && c.name === SIGNALS.approve && c.status === 'timed-out') || (c.kind === 'step' && c.name === 'escalate')) || s.attempts.some((a) => a.step === 'escalate');
}

/**
 * Where the run is with its approval: `before` it (a decision now is kept until it gets there),
 * `waiting` for it, a decision `sent-early` and kept, `decided` (the run read it), or `ended`.
 */
export type ApprovalStage = 'before' | 'waiting' | 'sent-early' | 'decided' | 'ended';

export function approvalStage(s: RunSnapshot): ApprovalStage {
  const state = stateOf(s);
  if (!ACTIVE.has(state) || state === 'cancelling') return 'ended';
  if (waitingFor(s)?.name === SIGNALS.approve) return 'waiting';
  const last = callsOf(s).filter((c) => c.kind === 'wait' && c.name === SIGNALS.approve).at(-1);
  // A wait recorded that the run no longer waits on: its signal arrived (a timeout escalates and waits again).
  if (last && last.status !== 'timed-out') return 'decided';
  return s.approvalBuffered ? 'sent-early' : 'before';
}

/** The step that ran out of attempts while the run waits for `retry`. */
export function failedStep(s: RunSnapshot): { readonly step: string; readonly attempts: number | null; readonly error: string | null } | null {
  if (waitingFor(s)?.name !== SIGNALS.retry) return null;
  const failed = callsOf(s).filter((c) => c.kind === 'step' && c.status === 'failed').at(-1);
  return failed ? { step: failed.name, attempts: failed.attempts, error: failed.error } : null;
}

export type AttemptStatus = 'completed' | 'failed' | 'cancelled' | 'interrupted' | 'running';

export interface AttemptView {
  /** 1 for the step's first attempt in this run, counting across reloads. */
  readonly n: number;
  readonly status: AttemptStatus;
  readonly startedAt: number;
  /** How long it took (completed, failed, cancelled). */
  readonly durationMs: number | null;
  /** How long an interrupted attempt ran at least (until its last sign of life). */
  readonly ranAtLeastMs: number | null;
  readonly error: string | null;
  /** A failed attempt with attempts left: the backoff before the next one. */
  readonly retryInMs: number | null;
}

/** `recording`: its attempt completed and the step's value is being recorded. */
export type StepStatus = 'done' | 'recording' | 'running' | 'retrying' | 'failed' | 'interrupted' | 'cancelled';

export interface StepView {
  readonly step: string;
  readonly label: string;
  readonly status: StepStatus;
  readonly attempts: readonly AttemptView[];
  readonly output: string | null;
  /** Model calls made for this step, and answers served from the run's history instead. */
  readonly modelCalls: number;
  readonly memoHits: number;
  /** For a handed-off run: where the step ran (by the host its attempts were logged by). */
  readonly ranOn: 'this browser' | 'the server' | null;
}

function attemptView(a: AttemptRecord, n: number, running: boolean): AttemptView {
  const ended = a.endedAt !== null;
  const status: AttemptStatus = a.outcome ?? (running ? 'running' : 'interrupted');
  return {
    n,
    status,
    startedAt: a.startedAt,
    durationMs: ended ? a.endedAt! - a.startedAt : null,
    ranAtLeastMs: status === 'interrupted' ? a.lastSeenAt - a.startedAt : null,
    error: a.error,
    retryInMs: a.retryInMs,
  };
}

/** The run's steps in order, each with its attempts (from the demo's log) and status (from the run's history when it has one). */
export function stepsOf(s: RunSnapshot): StepView[] {
  const active = isActive(s);
  const state = stateOf(s);
  const history = new Map<string, FunctionCall>();
  for (const c of callsOf(s)) if (c.kind === 'step') history.set(c.name, c);
  const order = [...new Set([...callsOf(s).filter((c) => c.kind === 'step').map((c) => c.name), ...[...s.attempts].sort((a, b) => a.startedAt - b.startedAt).map((a) => a.step)])];
  const researchCalls = s.record?.researchCalls ?? null;
  return order.map((step): StepView => {
    const logged = s.attempts.filter((a) => a.step === step).sort((a, b) => a.startedAt - b.startedAt);
    // The server's attempts are its own (it executes a run that moved there), the tabs' the leader's.
    const executor = (a: AttemptRecord): boolean => (s.location !== null && s.location.delivered ? a.host === SERVER_HOST : a.host === s.leader);
    const attempts = logged.map((a, i) => attemptView(a, i + 1, i === logged.length - 1 && active && executor(a) && (state === 'running' || state === 'cancelling' || state === 'pending')));
    const last = attempts.at(-1);
    // A step that failed for good runs again after Retry (a later call of the same name): the
    // failure is over once more attempts were logged than the recorded failures used.
    const failures = callsOf(s).filter((c) => c.kind === 'step' && c.name === step && c.status === 'failed');
    const staleFailure = logged.length > failures.reduce((sum, c) => sum + (c.attempts ?? 0), 0);
    const recorded = history.get(step)?.status === 'failed' && staleFailure ? undefined : history.get(step)?.status;
    let status: StepStatus;
    if (last?.status === 'running') status = 'running';
    else if (recorded === 'done') status = 'done';
    else if (last === undefined) status = recorded === 'failed' ? 'failed' : active ? 'running' : 'done';
    else if (last.status === 'completed') status = active ? 'recording' : 'done';
    else if (last.status === 'failed') status = active && last.retryInMs !== null ? 'retrying' : 'failed';
    else status = last.status;
    const completed = [...logged].reverse().find((a) => a.outcome === 'completed');
    const calls = s.calls.filter((c) => c.step === step);
    return {
      step,
      label: stepLabel(step, researchCalls),
      status,
      attempts,
      output: completed?.output ?? null,
      modelCalls: calls.filter((c) => !c.memoHit).length,
      memoHits: calls.filter((c) => c.memoHit).length,
      // A run moves only between executions, so a step ran all here or all there.
      ranOn: s.location === null || logged.length === 0 ? null : logged.every((a) => a.host === SERVER_HOST) ? 'the server' : 'this browser',
    };
  });
}

/** The draft's text, once written. */
export function draftOf(s: RunSnapshot): string | null {
  return s.result?.draft ?? stepsOf(s).find((v) => v.step === 'draft' && v.output !== null)?.output ?? null;
}

/** How the run ended, in words for a person (a cancel is not a failure; an Error's class name is not news). */
export function endReason(s: RunSnapshot): string | null {
  const t = s.timeline.terminal;
  if (s.timeline.active || !t) return null;
  if (t.status === 'cancelled') return 'Cancelled on request.';
  return t.error ? `Reason: ${t.error.replace(/^Error: /, '')}` : null;
}
