/**
 * A workflow function's `ctx` call as inspectors and pages see it: built from its history event
 * (history.ts) and the failed attempts recorded for a step. The same shape serves the durable
 * timeline (`RunTimeline.workflowFunction`) and the live `function-call` events of the browser
 * host, so a page can fold both into one view.
 */
import { decodeValue, encodeValue } from '../../codec.js';
import type { ChildOutcome } from './children.js';
import type { Event, FailedAttempt } from './history.js';
import { decodeSignalValue } from './signal-value.js';

/** What a `ctx` call was. */
export type FunctionCallKind = Event['kind'];

/**
 * `done`: a step's value is recorded, a sleep is over, a signal arrived, a child succeeded, a
 * value was drawn; `failed`: a step ran out of attempts, a child failed or was cancelled;
 * `retrying`: a step's attempt failed and its next one is due at `untilMs`; `sleeping`: the run
 * waits for this sleep to end; `waiting`: no signal (or child outcome) yet; `timed-out`: the
 * wait ended without a signal.
 */
export type FunctionCallStatus = 'done' | 'failed' | 'retrying' | 'sleeping' | 'waiting' | 'timed-out';

/** An attempt of a step that failed and was retried. */
export interface StepFailure {
  readonly attempt: number;
  readonly error: string;
  /** When it failed (epoch ms). */
  readonly atMs: number;
}

/** One `ctx` call of a workflow function's history. */
export interface FunctionCall {
  /** The call's place in the history (0 for the function's first `ctx` call). */
  readonly position: number;
  readonly kind: FunctionCallKind;
  /** The step's or the signal's name, `<workflow> (<child run id>)` for an invoke; empty for sleep, now, random and uuid. */
  readonly name: string;
  readonly status: FunctionCallStatus;
  /** The value in the value codec's encoding (`callValue` decodes it): a step's result, a signal's value, what now/random/uuid drew; else null. */
  readonly value: Uint8Array | null;
  /** A sleep's end, a signal wait's timeout, a retrying step's next attempt (epoch ms); else null. */
  readonly untilMs: number | null;
  /** A failed step's last error, a retrying step's latest one, a failed child's outcome; else null. */
  readonly error: string | null;
  /** A step's attempts so far: the one that succeeded, all of a failed step's, the failed ones of a retrying step; else null. */
  readonly attempts: number | null;
  /** A step's attempts that failed and were retried, oldest first (a failed step's last error is `error`); else empty. */
  readonly retried: readonly StepFailure[];
}

const NONE: readonly StepFailure[] = Object.freeze([]);

const stepFailures = (failures: readonly FailedAttempt[]): readonly StepFailure[] => (failures.length === 0 ? NONE : failures.map(({ attempt, error, atMs }) => ({ attempt, error, atMs })));

/** A signal payload as a value-codec encoding: `encodeSignalValue`'s, or raw bytes handed over as text. */
function signalValue(payload: Uint8Array): Uint8Array {
  try {
    return encodeValue(decodeSignalValue(payload));
  } catch {
    return payload;
  }
}

/**
 * The call recorded as `e` at `position`: `sleeping` says the run waits for this sleep to end,
 * `failures` are the step's retried attempts.
 */
export function callOf(position: number, e: Event, sleeping: boolean, failures: readonly FailedAttempt[]): FunctionCall {
  const base = { position, kind: e.kind, name: e.name, value: null, untilMs: null, error: null, attempts: null, retried: NONE };
  switch (e.kind) {
    case 'step': {
      const retried = stepFailures(failures);
      return 'failed' in e
        ? { ...base, status: 'failed', error: e.failed.message, attempts: e.failed.attempts, retried }
        : { ...base, status: 'done', value: e.value, attempts: failures.length + 1, retried };
    }
    case 'sleep':
      return { ...base, status: sleeping ? 'sleeping' : 'done', untilMs: e.untilMs };
    case 'wait':
      if (e.value === undefined) return { ...base, status: 'waiting', untilMs: e.untilMs };
      return e.value === null ? { ...base, status: 'timed-out', untilMs: e.untilMs } : { ...base, status: 'done', untilMs: e.untilMs, value: signalValue(e.value) };
    case 'invoke': {
      // The child's run id shows as the value while it runs; its outcome once it ended.
      const child = { ...base, name: `${e.name} (${e.childRunId})` };
      if (e.value === undefined) return { ...child, status: 'waiting' };
      const outcome = decodeSignalValue(e.value) as ChildOutcome;
      if (outcome.status === 'succeeded') return { ...child, status: 'done', value: outcome.result };
      return { ...child, status: 'failed', error: outcome.error === null ? outcome.status : `${outcome.status}: ${outcome.error}` };
    }
    default:
      return { ...base, status: 'done', value: encodeValue(e.value) };
  }
}

/** The step at `position` with no outcome yet whose attempts `failures` (at least one) failed: it retries. */
export function retryingCall(position: number, failures: readonly FailedAttempt[]): FunctionCall {
  const last = failures[failures.length - 1]!;
  return { position, kind: 'step', name: last.name, status: 'retrying', value: null, untilMs: last.retryAtMs, error: last.error, attempts: failures.length, retried: stepFailures(failures) };
}

/** A call's value decoded with the value codec (a step's result, a signal's value, a drawn value), or undefined when it has none. */
export function callValue(call: Pick<FunctionCall, 'value'>): unknown {
  return call.value === null ? undefined : decodeValue(call.value);
}
