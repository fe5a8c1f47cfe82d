/**
 * A `ctx.step`'s retry policy and timeout, and the delay before each retry. Retries happen in the
 * process running the workflow (each attempt gets a fresh `AbortSignal`); a step that is still
 * failing when its attempts run out throws `StepFailedError` into the workflow, once and durably.
 */
import { InvalidArgumentError } from '../../errors.js';
import { checkOptions, numberRule, optionNames } from '../../options.js';
import { show } from '../../show.js';

/** Exponential backoff between the attempts of a step. */
export interface StepBackoff {
  /** Delay before the second attempt, in ms. Default 500. */
  readonly initialMs?: number;
  /** Each later delay is the previous one times this. Default 2. */
  readonly factor?: number;
  /** Delays never exceed this, in ms. Default 30,000. */
  readonly maxMs?: number;
}

export interface StepOptions {
  /** Attempts after the first one failed. Default 2 (three attempts in all); 0 runs the step once. */
  readonly retries?: number;
  readonly backoff?: StepBackoff;
  /** An attempt running longer than this fails (its `signal` aborts). Default: none. */
  readonly timeoutMs?: number;
}

export const DEFAULT_STEP_RETRIES = 2;
const DEFAULT_BACKOFF: Required<StepBackoff> = { initialMs: 500, factor: 2, maxMs: 30_000 };

const STEP_OPTION_NAMES = optionNames<StepOptions>({ retries: true, backoff: true, timeoutMs: true });
const BACKOFF_NAMES = optionNames<StepBackoff>({ initialMs: true, factor: true, maxMs: true });

function check(where: string, name: string, value: unknown, rule: { integer?: boolean; min?: number } = {}): void {
  if (value === undefined) return;
  const broken = numberRule(value, rule);
  if (broken !== undefined) throw new InvalidArgumentError(`${where}: ${name} ${broken}. ${name}=${show(value)}`, { reason: 'invalid_step_options', option: name });
}

/** Throws INVALID_ARGUMENT (reason `invalid_step_options`, or `unknown_option`) naming the option and the rule. */
export function checkStepOptions(options: unknown, where: string): StepOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`${where} must be an object. options=${show(options)}`, { reason: 'invalid_step_options' });
  }
  checkOptions(options, STEP_OPTION_NAMES, where, 'INVALID_ARGUMENT', { reason: 'invalid_step_options' });
  const o = options as StepOptions;
  check(where, 'retries', o.retries, { integer: true });
  check(where, 'timeoutMs', o.timeoutMs, { min: 1 });
  if (o.backoff !== undefined) {
    if (typeof o.backoff !== 'object' || o.backoff === null) throw new InvalidArgumentError(`${where}: backoff must be an object. backoff=${show(o.backoff)}`, { reason: 'invalid_step_options', option: 'backoff' });
    checkOptions(o.backoff, BACKOFF_NAMES, `${where} backoff`, 'INVALID_ARGUMENT', { reason: 'invalid_step_options' });
    check(where, 'backoff.initialMs', o.backoff.initialMs);
    check(where, 'backoff.factor', o.backoff.factor, { min: 1 });
    check(where, 'backoff.maxMs', o.backoff.maxMs);
  }
  return o;
}

/** A step's effective policy: its own options over the workflow's defaults over the library's. */
export interface StepPolicy {
  readonly attempts: number;
  readonly backoff: Required<StepBackoff>;
  readonly timeoutMs: number | undefined;
}

export function stepPolicy(defaults: StepOptions, own: StepOptions): StepPolicy {
  return {
    attempts: 1 + (own.retries ?? defaults.retries ?? DEFAULT_STEP_RETRIES),
    backoff: { ...DEFAULT_BACKOFF, ...defaults.backoff, ...own.backoff },
    timeoutMs: own.timeoutMs ?? defaults.timeoutMs,
  };
}

/** The delay before attempt `next` (2, 3, ...). */
export function retryDelay(policy: StepPolicy, next: number): number {
  const { initialMs, factor, maxMs } = policy.backoff;
  return Math.min(maxMs, initialMs * factor ** (next - 2));
}
