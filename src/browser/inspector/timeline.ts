/**
 * A run's timeline as the inspector shows it, from four sources: the active run's record (the
 * current step and its attempt history, `getRun`), what else the store keeps of the run (earlier
 * steps' jobs while the queue keeps done jobs, the terminal outcome: core `getRunTimeline`), what
 * this page saw happen (run events since it loaded), and what the app says about the run (step
 * names, steps still to come, how an ended run ended). Pure functions over plain data.
 */
import type { JobAttempt } from '../../core/queue/index.js';
import type { DurableRunState, FunctionCall, RunDetails, RunTimeline, RunWait, TerminalStatus } from '../../core/workflow/index.js';
import type { RunEvent, StepResultKind } from '../protocol.js';
import { isCancelMessage } from './format.js';

/** What an app tells the inspector about one step. */
export interface StepDescription {
  readonly name: string;
  /** A line shown under the step (e.g. what it produced). */
  readonly note?: string;
}

/** How a run ended. */
export interface RunEnding {
  readonly status: TerminalStatus;
  readonly error: string | null;
  /** The step the run ended on, when known. */
  readonly finalStep?: number;
  /** Epoch ms, when known. */
  readonly at?: number;
}

/** What an app tells the inspector about a run; every field is optional. */
export interface RunDescription {
  /** Shown in the run list and above the timeline instead of the bare run id. */
  readonly title?: string;
  readonly submittedAtMs?: number;
  /** The run's steps by number, when known: those past the current step are shown as still to come. */
  readonly steps?: readonly StepDescription[];
  /** How the run ended, for a run the store no longer lists (ended runs leave no run record). */
  readonly ended?: RunEnding;
  /** Correlation keys the run reads: a signal already buffered on one of them is shown. */
  readonly signalKeys?: readonly string[];
  /** Caller-KV prefixes (or exact keys) that belong to the run: their values are shown. */
  readonly kvPrefixes?: readonly string[];
}

/** One try of a step, as this page saw it happen. */
interface SeenAttempt {
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly startedAt: number;
  readonly interruptions: number;
  endedAt: number | null;
  result: StepResultKind | null;
  error: string | null;
  /** Another delivery of the step started while this one had not finished: a crash, reload or closed tab cut it off, when is unknown. */
  interrupted: boolean;
}

interface SeenStep {
  readonly attempts: SeenAttempt[];
  waiting: { readonly correlationKey: string; readonly until: number } | null;
  retryAt: number | null;
}

/** Run events folded per run and step (bounded: the oldest runs are forgotten first). */
export class RunObserver {
  private readonly runs = new Map<string, Map<number, SeenStep>>();
  private readonly endings = new Map<string, RunEnding>();
  /** A workflow function's calls by position, as its `function-call` events reported them (kept after the run ends, unlike its history). */
  private readonly functionCalls = new Map<string, Map<number, FunctionCall>>();

  constructor(private readonly maxRuns = 200) {}

  private callsOf(runId: string): Map<number, FunctionCall> {
    let calls = this.functionCalls.get(runId);
    if (!calls) {
      this.functionCalls.set(runId, (calls = new Map()));
      if (this.functionCalls.size > this.maxRuns) this.functionCalls.delete(this.functionCalls.keys().next().value as string);
    }
    return calls;
  }

  private step(runId: string, stepNumber: number): SeenStep {
    let steps = this.runs.get(runId);
    if (!steps) {
      this.runs.set(runId, (steps = new Map()));
      if (this.runs.size > this.maxRuns) this.runs.delete(this.runs.keys().next().value as string);
    }
    let step = steps.get(stepNumber);
    if (!step) steps.set(stepNumber, (step = { attempts: [], waiting: null, retryAt: null }));
    return step;
  }

  apply(event: RunEvent): void {
    switch (event.type) {
      case 'step-started': {
        const step = this.step(event.runId, event.stepNumber);
        step.waiting = null;
        step.retryAt = null;
        for (const a of step.attempts) if (a.endedAt === null) a.interrupted = true;
        step.attempts.push({ attempt: event.attempt, maxAttempts: event.maxAttempts, startedAt: event.at, interruptions: event.interruptions, endedAt: null, result: null, error: null, interrupted: false });
        // A run id that ended starts again: the calls seen of its earlier run are not the new run's.
        if (event.stepNumber === 0 && this.endings.has(event.runId)) this.functionCalls.delete(event.runId);
        break;
      }
      case 'function-call':
        this.callsOf(event.runId).set(event.call.position, event.call);
        break;
      case 'step-finished': {
        const open = [...this.step(event.runId, event.stepNumber).attempts].reverse().find((a) => a.attempt === event.attempt && a.endedAt === null);
        if (open) Object.assign(open, { endedAt: event.at, result: event.result, error: event.error });
        break;
      }
      case 'retry-scheduled':
        this.step(event.runId, event.stepNumber).retryAt = event.at + event.delayMs;
        break;
      case 'waiting-for-signal':
        this.step(event.runId, event.stepNumber).waiting = { correlationKey: event.correlationKey, until: event.at + event.timeoutMs };
        break;
      case 'terminal':
        this.endings.set(event.runId, { status: event.status, error: event.error, finalStep: event.finalStep, at: event.at });
        if (this.endings.size > this.maxRuns) this.endings.delete(this.endings.keys().next().value as string);
        for (const step of this.runs.get(event.runId)?.values() ?? []) {
          step.waiting = null;
          step.retryAt = null;
          // A try cut off by the end of the run (a cancel) never reports its own finish.
          for (const a of step.attempts) if (a.endedAt === null && !a.interrupted) Object.assign(a, { endedAt: event.at, result: event.status === 'cancelled' ? 'cancel' : null });
        }
        break;
    }
  }

  /** How the run ended, when this page saw its `terminal` event. */
  ending(runId: string): RunEnding | undefined {
    return this.endings.get(runId);
  }

  /** A step still running as far as this page saw (started, not finished, run not ended). */
  running(runId: string, stepNumber: number): boolean {
    return this.runs.get(runId)?.get(stepNumber)?.attempts.at(-1)?.endedAt === null;
  }

  /** A workflow function's calls this page saw reported, by position. */
  calls(runId: string): ReadonlyMap<number, FunctionCall> {
    return this.functionCalls.get(runId) ?? new Map();
  }

  /** What this page saw of each step of the run. */
  seen(runId: string): ReadonlyMap<number, SeenStep> {
    return this.runs.get(runId) ?? new Map();
  }

  /** Run ids this page saw events of, oldest first. */
  runIds(): string[] {
    return [...new Set([...this.runs.keys(), ...this.endings.keys(), ...this.functionCalls.keys()])];
  }
}

/** The state a timeline step is drawn in. */
export type StepPhase = 'done' | 'running' | 'waiting' | 'scheduled' | 'pending' | 'cancelling' | 'failed' | 'cancelled' | 'upcoming';

export interface TimelineAttempt {
  readonly attempt: number;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  /** What happened, in words ("completed", "failed, retried", "interrupted by a reload or crash", ...). */
  readonly outcome: string;
  readonly error: string | null;
}

export interface StepRow {
  readonly stepNumber: number;
  readonly name: string | null;
  readonly note: string | null;
  readonly phase: StepPhase;
  readonly attempts: readonly TimelineAttempt[];
  /** Set on the step that waits: the signal (with its timeout) or the time. */
  readonly waitingFor: RunWait | null;
  readonly maxAttempts: number | null;
}

const HISTORY_OUTCOME: Readonly<Record<JobAttempt['outcome'], string>> = {
  completed: 'completed',
  retried: 'failed, retried',
  dead_lettered: 'failed, dead-lettered',
  lease_expired: 'lease expired (the tab stopped renewing it)',
  interrupted: 'interrupted by a reload, crash or closed tab',
  requeued: 'requeued from the dead letters',
};

function seenOutcome(a: SeenAttempt): { outcome: string; error: string | null } {
  if (a.interrupted) return { outcome: HISTORY_OUTCOME.interrupted, error: null };
  switch (a.result) {
    case null:
      return { outcome: a.endedAt === null ? 'running' : 'ended', error: null };
    case 'continue':
    case 'succeed':
      return { outcome: 'completed', error: null };
    case 'cancel':
      return { outcome: 'cancelled', error: null };
    case 'fail':
      return { outcome: 'failed the run', error: a.error };
    case 'error':
      // The runtime aborts a cancelled step; its abort error names an internal job id.
      return isCancelMessage(a.error) ? { outcome: 'cancelled', error: null } : { outcome: 'failed', error: a.error };
  }
}

function fromSeen(step: SeenStep | undefined): TimelineAttempt[] {
  return (step?.attempts ?? []).map((a) => ({ attempt: a.attempt, startedAt: a.startedAt, endedAt: a.endedAt, ...seenOutcome(a) }));
}

/** Recorded by whoever noticed the cut-off try (the next writer, the reaper), long after it ended: no end time to show. */
const ENDED_UNSEEN: ReadonlySet<JobAttempt['outcome']> = new Set(['interrupted', 'lease_expired']);

function historyAttempts(history: readonly JobAttempt[]): TimelineAttempt[] {
  return history.map((h) => ({ attempt: h.attempt, startedAt: h.claimedAt ?? null, endedAt: ENDED_UNSEEN.has(h.outcome) ? null : h.recordedAt, outcome: HISTORY_OUTCOME[h.outcome], error: h.error ?? null }));
}

/** The tries of step `n` the store kept (its done or dead jobs), oldest first. */
function fromStored(stored: RunTimeline | null | undefined, n: number): TimelineAttempt[] {
  return (stored?.steps.find((s) => s.step === n)?.jobs ?? []).flatMap((job) => historyAttempts(job.history));
}

/** How the run ended, from the store's terminal record (notification job or dead step), when kept. */
export function storedEnding(stored: RunTimeline | null | undefined): RunEnding | undefined {
  const t = stored?.terminal;
  return t ? { status: t.status, error: t.error, finalStep: t.finalStep, ...(stored!.terminatedAtMs === null ? {} : { at: stored!.terminatedAtMs }) } : undefined;
}

function fromHistory(details: RunDetails): TimelineAttempt[] {
  const out = historyAttempts(details.history);
  if ((details.state === 'running' || details.state === 'cancelling') && details.claimedAt !== null) {
    out.push({ attempt: details.attempts, startedAt: details.claimedAt, endedAt: null, outcome: details.state === 'cancelling' ? 'stopping: cancel requested' : 'running', error: null });
  }
  return out;
}

function currentPhase(state: DurableRunState, seenRunning: boolean): StepPhase {
  switch (state) {
    case 'running':
      return 'running';
    case 'cancelling':
      return 'cancelling';
    case 'waiting-for-signal':
    case 'waiting-for-slot':
      return 'waiting';
    case 'scheduled':
      return 'scheduled';
    case 'dead':
      return 'failed';
    case 'pending':
      // The executing tab claimed it but the claim is not durable yet: its events say it runs.
      return seenRunning ? 'running' : 'pending';
  }
}

const ENDED_PHASE: Readonly<Record<TerminalStatus, StepPhase>> = { succeeded: 'done', failed: 'failed', cancelled: 'cancelled' };

export interface TimelineInput {
  readonly runId: string;
  /** The store's record of the active run; null for an ended (or unknown) run. */
  readonly details: RunDetails | null;
  readonly observer: RunObserver;
  readonly description?: RunDescription;
  readonly ending?: RunEnding;
  /** What the store keeps of the run (`runTimeline`), when read. */
  readonly stored?: RunTimeline | null;
}

/** Steps 0..n of the run: done, the current one, and those still to come when the app named them. */
export function buildTimeline(input: TimelineInput): StepRow[] {
  const { details, observer, description, ending, runId, stored } = input;
  const seen = observer.seen(runId);
  const named = description?.steps ?? [];
  const current = details?.currentStep ?? ending?.finalStep ?? (seen.size > 0 ? Math.max(...seen.keys()) : named.length > 0 ? 0 : -1);
  const last = Math.max(current, ending ? current : named.length - 1, ...seen.keys());
  const steps: StepRow[] = [];
  for (let n = 0; n <= last; n++) {
    const about = named[n];
    const base = { stepNumber: n, name: about?.name ?? null, note: about?.note ?? null };
    // What this page saw (which tells a cancel from a completion), unless the store kept more
    // tries of the step: those this page missed (before it loaded, cut off in a tab that died).
    const kept = fromStored(stored, n);
    const saw = fromSeen(seen.get(n));
    let attempts = kept.length > saw.length ? kept : saw;
    // The attempts allowed, as the executing runtime reported them when the step started (or its kept job says).
    const seenMax = seen.get(n)?.attempts.at(-1)?.maxAttempts ?? stored?.steps.find((s) => s.step === n)?.jobs.at(-1)?.maxAttempts ?? null;
    if (n < current) {
      steps.push({ ...base, phase: 'done', attempts, waitingFor: null, maxAttempts: seenMax });
    } else if (n === current && details) {
      if (details.history.length > 0 || details.state === 'running' || details.state === 'cancelling') attempts = fromHistory(details);
      steps.push({ ...base, phase: currentPhase(details.state, observer.running(runId, n)), attempts, waitingFor: details.waitingFor, maxAttempts: details.maxAttempts });
    } else if (n === current && ending) {
      steps.push({ ...base, phase: ENDED_PHASE[ending.status], attempts, waitingFor: null, maxAttempts: seenMax });
    } else if (n === current) {
      steps.push({ ...base, phase: observer.running(runId, n) ? 'running' : 'pending', attempts, waitingFor: null, maxAttempts: seenMax });
    } else {
      steps.push({ ...base, phase: 'upcoming', attempts: [], waitingFor: null, maxAttempts: null });
    }
  }
  return steps;
}
