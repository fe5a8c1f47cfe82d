/**
 * What a step decides: `StepOutcome` (continue, succeed, fail, cancel) and, for a continue,
 * the `Trigger` that says when the next step becomes claimable. Each is a plain discriminated
 * union with a same-named constructor object (`StepOutcome.continueNow(payload)`).
 */
import { InvalidArgumentError } from '../../errors.js';
import { numberRule } from '../../options.js';
import { show } from '../../show.js';

/** When the next step of a continuing run becomes claimable. */
export type Trigger =
  | { readonly type: 'immediate' }
  | { readonly type: 'after'; readonly delayMs: number }
  | { readonly type: 'onSignal'; readonly correlationKey: string; readonly timeoutMs: number };

/** The verdict of one step. `fail` and `cancel` are runner verdicts: they never dead-letter. */
export type StepOutcome =
  | { readonly type: 'continue'; readonly payload: Uint8Array; readonly when: Trigger }
  | { readonly type: 'succeed'; readonly result: Uint8Array }
  | { readonly type: 'fail'; readonly reason: string }
  | { readonly type: 'cancel'; readonly reason: string };

function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError(message, { reason: 'invalid_outcome' });
}

function checkDuration(ms: unknown, name: string): number {
  const rule = numberRule(ms);
  if (rule !== undefined) throw invalid(`${name} ${rule} (a duration in milliseconds). ${name}=${show(ms)}`);
  return ms as number;
}

function checkBytes(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw invalid(`${name} must be a Uint8Array. ${name}=${show(value)}`);
  return value;
}

function checkText(value: unknown, name: string): string {
  if (typeof value !== 'string') throw invalid(`${name} must be a string. ${name}=${show(value)}`);
  return value;
}

/** Throws INVALID_ARGUMENT (reason `invalid_correlation_key`) for an empty or non-string key. */
export function checkCorrelationKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidArgumentError(`correlation key must be a non-empty string. correlationKey=${show(key)}`, { reason: 'invalid_correlation_key' });
  }
  return key;
}

export const Trigger = {
  /** Claimable at once. */
  immediate: (): Trigger => ({ type: 'immediate' }),
  /** Claimable `delayMs` after the settlement (queue clock). */
  after: (delayMs: number): Trigger => ({ type: 'after', delayMs: checkDuration(delayMs, 'delayMs') }),
  /** Claimable when a signal for `correlationKey` arrives, or after `timeoutMs` without one. */
  onSignal: (correlationKey: string, timeoutMs: number): Trigger => ({
    type: 'onSignal',
    correlationKey: checkCorrelationKey(correlationKey),
    timeoutMs: checkDuration(timeoutMs, 'timeoutMs'),
  }),
} as const;

export const StepOutcome = {
  /** Run the next step with `payload` as soon as a worker is free. */
  continueNow: (payload: Uint8Array): StepOutcome => ({ type: 'continue', payload: checkBytes(payload, 'payload'), when: Trigger.immediate() }),
  /** Run the next step with `payload` after `delayMs`. */
  continueAfter: (payload: Uint8Array, delayMs: number): StepOutcome => ({ type: 'continue', payload: checkBytes(payload, 'payload'), when: Trigger.after(delayMs) }),
  /** Park the run until a signal for `correlationKey` arrives, or `timeoutMs` passes. */
  continueOnSignal: (payload: Uint8Array, correlationKey: string, timeoutMs: number): StepOutcome => ({
    type: 'continue',
    payload: checkBytes(payload, 'payload'),
    when: Trigger.onSignal(correlationKey, timeoutMs),
  }),
  /** Continue with an explicit trigger. */
  continueWith: (payload: Uint8Array, when: Trigger): StepOutcome => validateOutcome({ type: 'continue', payload, when }),
  /** The run succeeded with `result`. */
  succeed: (result: Uint8Array): StepOutcome => ({ type: 'succeed', result: checkBytes(result, 'result') }),
  /** The run failed (a runner verdict: acked, not dead-lettered). */
  fail: (reason: string): StepOutcome => ({ type: 'fail', reason: checkText(reason, 'reason') }),
  /** The runner cancels its own run (acked, effects kept). */
  cancel: (reason: string): StepOutcome => ({ type: 'cancel', reason: checkText(reason, 'reason') }),
} as const;

/**
 * Checks an outcome a runner returned (it may have built the object by hand). Returns it, or
 * throws INVALID_ARGUMENT (reason `invalid_outcome` or `invalid_correlation_key`).
 */
export function validateOutcome(outcome: unknown): StepOutcome {
  if (typeof outcome !== 'object' || outcome === null) throw invalid(`a step must return a StepOutcome. outcome=${show(outcome)}`);
  const o = outcome as Record<string, unknown>;
  switch (o.type) {
    case 'continue': {
      checkBytes(o.payload, 'payload');
      const when = o.when as Record<string, unknown> | null | undefined;
      if (typeof when !== 'object' || when === null) throw invalid(`continue needs a trigger. when=${show(when)}`);
      if (when.type === 'after') checkDuration(when.delayMs, 'delayMs');
      else if (when.type === 'onSignal') {
        checkCorrelationKey(when.correlationKey);
        checkDuration(when.timeoutMs, 'timeoutMs');
      } else if (when.type !== 'immediate') throw invalid(`unknown trigger type. type=${show(when.type)}`);
      return outcome as StepOutcome;
    }
    case 'succeed':
      checkBytes(o.result, 'result');
      return outcome as StepOutcome;
    case 'fail':
    case 'cancel':
      checkText(o.reason, 'reason');
      return outcome as StepOutcome;
    default:
      throw invalid(`unknown outcome type. type=${show(o.type)}`);
  }
}
