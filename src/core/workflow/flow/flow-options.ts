/**
 * Flow control per key, as a submission names it: `concurrency` (at most `limit` runs of the key
 * active at once; the others wait, in submission order), `rateLimit` (at most `limit` runs of the
 * key start in any window of `periodMs`; the others are scheduled for the earliest start that
 * keeps the limit) and `debounce` (a burst of submissions of the key becomes one run with the
 * last input, started `periodMs` after the last one). Keys are the caller's strings (a user, a
 * tenant, a document) and are scoped to the runtime's queue name.
 *
 * Every rule broken is INVALID_ARGUMENT with reason `invalid_flow_control`, `details.field` the
 * option (`concurrency.limit`) and a message naming the value and the rule.
 */
import { InvalidArgumentError } from '../../errors.js';
import { checkOptions, optionNames } from '../../options.js';
import { show } from '../../show.js';

/** At most `limit` runs with this key active at once (from their admission to their ending). */
export interface ConcurrencyLimit {
  /** 1..256 characters. */
  readonly key: string;
  /** A positive integer. The latest submission's limit is the key's limit from then on. */
  readonly limit: number;
}

/** At most `limit` runs with this key start in any window of `periodMs` milliseconds. */
export interface RateLimit {
  /** 1..256 characters. */
  readonly key: string;
  /** An integer in 1..1000. */
  readonly limit: number;
  /** A positive integer. */
  readonly periodMs: number;
}

/** Submissions with this key within `periodMs` of each other become one run, with the last input. */
export interface Debounce {
  /** 1..256 characters. */
  readonly key: string;
  /** The quiet period: the run starts this many ms after the last submission. A positive integer. */
  readonly periodMs: number;
}

/** The flow-control fields of a submission (`RunSpec`, `StartOptions`). */
export interface FlowControl {
  readonly concurrency?: ConcurrencyLimit;
  readonly rateLimit?: RateLimit;
  readonly debounce?: Debounce;
}

/** Flow keys are at most this many characters. */
export const MAX_FLOW_KEY_LENGTH = 256;
/** A rate limit keeps the start time of each of its last `limit` runs, so `limit` is capped. */
export const MAX_RATE_LIMIT = 1000;
/** Periods are at most a year (a longer one is a mistake in units). */
export const MAX_FLOW_PERIOD_MS = 365 * 24 * 60 * 60 * 1000;

const CONCURRENCY_FIELDS = optionNames<ConcurrencyLimit>({ key: true, limit: true });
const RATE_LIMIT_FIELDS = optionNames<RateLimit>({ key: true, limit: true, periodMs: true });
const DEBOUNCE_FIELDS = optionNames<Debounce>({ key: true, periodMs: true });

function invalid(field: string, value: unknown, rule: string): InvalidArgumentError {
  return new InvalidArgumentError(`${field} ${rule}. ${field}=${show(value)}`, { reason: 'invalid_flow_control', field, value: show(value) });
}

/** Throws unless `key` is a well-formed string of 1..256 characters. */
export function checkFlowKey(key: unknown, field: string): asserts key is string {
  if (typeof key !== 'string') throw invalid(field, key, 'must be a string');
  if (key.length === 0) throw invalid(field, key, 'must not be empty');
  if (key.length > MAX_FLOW_KEY_LENGTH) throw invalid(field, key, `must be at most ${MAX_FLOW_KEY_LENGTH} characters (it has ${key.length})`);
  try {
    // Keys become segments of KV keys (URI-encoded): a lone surrogate has no UTF-8 form.
    encodeURIComponent(key);
  } catch {
    throw invalid(field, key, 'must be well-formed text (it holds a lone surrogate)');
  }
}

function checkCount(value: unknown, field: string, max: number): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalid(field, value, 'must be an integer');
  if (value < 1) throw invalid(field, value, 'must be at least 1');
  if (value > max) throw invalid(field, value, `must be at most ${max}`);
}

function checkObject(value: unknown, field: string, known: readonly string[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(field, value, 'must be an object');
  checkOptions(value, known, `run spec ${field}`, 'INVALID_ARGUMENT', { reason: 'invalid_flow_control', field });
}

/**
 * The flow control of a submission, checked; undefined when it names none. Debounce coalesces
 * submissions into a run that has not started yet, which a concurrency queue or a rate schedule
 * would hold or move on their own terms, so it stands alone; a rate limit sets the start time,
 * so it takes no `runAt`.
 */
export function checkFlowControl(spec: FlowControl & { readonly runAt?: number }): FlowControl | undefined {
  const { concurrency, rateLimit, debounce } = spec;
  if (concurrency === undefined && rateLimit === undefined && debounce === undefined) return undefined;
  if (concurrency !== undefined) {
    checkObject(concurrency, 'concurrency', CONCURRENCY_FIELDS);
    checkFlowKey(concurrency.key, 'concurrency.key');
    checkCount(concurrency.limit, 'concurrency.limit', Number.MAX_SAFE_INTEGER);
  }
  if (rateLimit !== undefined) {
    checkObject(rateLimit, 'rateLimit', RATE_LIMIT_FIELDS);
    checkFlowKey(rateLimit.key, 'rateLimit.key');
    checkCount(rateLimit.limit, 'rateLimit.limit', MAX_RATE_LIMIT);
    checkCount(rateLimit.periodMs, 'rateLimit.periodMs', MAX_FLOW_PERIOD_MS);
    if (spec.runAt !== undefined) throw invalid('runAt', spec.runAt, 'cannot be combined with rateLimit (the rate limit schedules the start)');
  }
  if (debounce !== undefined) {
    checkObject(debounce, 'debounce', DEBOUNCE_FIELDS);
    checkFlowKey(debounce.key, 'debounce.key');
    checkCount(debounce.periodMs, 'debounce.periodMs', MAX_FLOW_PERIOD_MS);
    if (concurrency !== undefined || rateLimit !== undefined) {
      throw invalid('debounce', debounce, 'cannot be combined with concurrency or rateLimit (a debounced run is held by its quiet period alone)');
    }
    if (spec.runAt !== undefined) throw invalid('runAt', spec.runAt, 'cannot be combined with debounce (the quiet period sets the start)');
  }
  return {
    ...(concurrency === undefined ? {} : { concurrency: { key: concurrency.key, limit: concurrency.limit } }),
    ...(rateLimit === undefined ? {} : { rateLimit: { key: rateLimit.key, limit: rateLimit.limit, periodMs: rateLimit.periodMs } }),
    ...(debounce === undefined ? {} : { debounce: { key: debounce.key, periodMs: debounce.periodMs } }),
  };
}
