/**
 * Where run events come from: the leader wraps the app's `StepRunner` and `TerminalHook` before
 * handing them to its runtime, so every event is reported by the worker that executes the step
 * (see `RunEvent` in protocol.ts for what each one promises), and `EventHub` fans them out to
 * this worker's subscribers (each a `MessagePort` held by a page client) and, on the leader, to
 * the other tabs.
 */
import type { Clock } from '../core/clock.js';
import type { FunctionCall } from '../core/workflow/functions/calls.js';
import { FunctionRunner } from '../core/workflow/functions/function-runner.js';
import { StepError } from '../core/workflow/steps/step-error.js';
import type { RunOutcome, Step, StepOutcome, StepRunnerObject, TerminalEffects, TerminalHook } from '../core/workflow/index.js';
import type { HubEvent, RunEvent, StepResultKind } from './protocol.js';
import { exportBytes } from './transfer-handlers.js';

/** What the runner wrapper needs to know about the executing runtime. */
export interface RunnerObservation {
  readonly executor: string;
  readonly clock: Clock;
  /** The queue's retry backoff after a failed attempt `attempt` (1-based). */
  backoffMs(attempt: number): number;
  emit(event: RunEvent): void;
}

const RESULT_KINDS = new Set<string>(['continue', 'succeed', 'fail', 'cancel']);

/**
 * `runner` reporting `step-started`, `step-finished`, `waiting-for-signal` and `retry-scheduled`,
 * and for the function runner of a `{ workflows }` runtime `function-call` as each `ctx` call is
 * recorded. The runner's outcome or error passes through unchanged; a failing listener never
 * affects it.
 */
export function observeRunner(runner: StepRunnerObject, o: RunnerObservation): StepRunnerObject {
  const emit = (event: RunEvent): void => {
    try {
      o.emit(event);
    } catch {
      // A subscriber's failure is not the step's.
    }
  };
  return {
    async runStep(step: Step): Promise<StepOutcome> {
      const base = { runId: step.runId, executor: o.executor };
      emit({ ...base, type: 'step-started', at: o.clock.now(), stepNumber: step.stepNumber, attempt: step.attempt, maxAttempts: step.maxAttempts, interruptions: step.interruptions, jobId: step.jobId });
      const onCall = (call: FunctionCall): void => emit({ ...base, type: 'function-call', at: o.clock.now(), stepNumber: step.stepNumber, call: call.value === null ? call : { ...call, value: exportBytes(call.value) } });
      let outcome: StepOutcome;
      try {
        outcome = await (runner instanceof FunctionRunner ? runner.runStep(step, onCall) : runner.runStep(step));
      } catch (e) {
        const err = StepError.from(e);
        emit({ ...base, type: 'step-finished', at: o.clock.now(), stepNumber: step.stepNumber, attempt: step.attempt, result: 'error', error: err.message });
        if (!err.isPermanent && step.attempt < step.maxAttempts && !step.signal.aborted) {
          emit({ ...base, type: 'retry-scheduled', at: o.clock.now(), stepNumber: step.stepNumber, nextAttempt: step.attempt + 1, delayMs: o.backoffMs(step.attempt), error: err.message });
        }
        throw e;
      }
      const type = (outcome as { type?: unknown } | null)?.type;
      const result: StepResultKind = typeof type === 'string' && RESULT_KINDS.has(type) ? (type as StepResultKind) : 'error';
      const reason = outcome?.type === 'fail' || outcome?.type === 'cancel' ? outcome.reason : result === 'error' ? 'the step returned an invalid outcome' : null;
      emit({ ...base, type: 'step-finished', at: o.clock.now(), stepNumber: step.stepNumber, attempt: step.attempt, result, error: reason });
      if (outcome?.type === 'continue' && outcome.when?.type === 'onSignal' && !step.signal.aborted) {
        const { correlationKey, timeoutMs } = outcome.when;
        emit({ ...base, type: 'waiting-for-signal', at: o.clock.now(), stepNumber: step.stepNumber + 1, correlationKey, timeoutMs });
      }
      return outcome;
    },
  };
}

/** Whether the app's hook wants `outcome` (a throwing `observes` counts as yes, as in the runtime). */
function hookObserves(hook: TerminalHook, outcome: RunOutcome): boolean {
  if (typeof hook.observes !== 'function') return true;
  try {
    return hook.observes(outcome) !== false;
  } catch {
    return true;
  }
}

/**
 * A hook that observes every outcome (so the host learns of every committed termination), calls
 * `onTerminal` for it, then hands it to the app's `hook` only if that hook observes it. The app's
 * hook keeps its semantics: its effects, retries and dead-lettering are unchanged.
 */
export function observeHook(hook: TerminalHook, onTerminal: (outcome: RunOutcome) => void): TerminalHook {
  return {
    observes: () => true,
    async onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
      try {
        onTerminal(outcome);
      } catch {
        // A subscriber's failure is not the hook's.
      }
      if (hookObserves(hook, outcome)) await hook.onTermination(outcome, effects);
    },
  };
}

/** The `terminal` event of a committed outcome. */
export function terminalEvent(outcome: RunOutcome, executor: string, at: number): RunEvent {
  return {
    type: 'terminal',
    runId: outcome.runId,
    executor,
    at,
    status: outcome.status,
    result: outcome.result === null ? null : exportBytes(outcome.result),
    error: outcome.error,
    finalStep: outcome.finalStep,
    headers: { ...outcome.headers },
  };
}

type Listener = (event: HubEvent) => void;

/** Fans events out to this worker's subscribers. */
export class EventHub {
  private readonly listeners = new Set<Listener>();

  /** Delivers `event` to every local subscriber. */
  deliver(event: HubEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // One broken subscriber must not starve the others.
      }
    }
  }

  /** Adds a listener; returns its removal. */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A port that receives every event from now on (for transfer to a page). The other side posts
   * `{ type: 'close' }` (or closes its port) to stop it.
   */
  openPort(): MessagePort {
    const { port1, port2 } = new MessageChannel();
    const stop = this.listen((event) => port1.postMessage(event));
    port1.onmessage = (ev: MessageEvent) => {
      if ((ev.data as { type?: unknown } | null)?.type === 'close') {
        stop();
        port1.close();
      }
    };
    return port2;
  }

  /** Drops every subscriber. */
  clear(): void {
    this.listeners.clear();
  }

  get size(): number {
    return this.listeners.size;
  }
}
