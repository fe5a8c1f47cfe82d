/**
 * Input checks shared by every entry point. Each throws INVALID_ARGUMENT (or INVALID_CONFIG for
 * open-time options) with a message naming the offending value, before any write happens.
 */
import { utf8 } from '../bytes.js';
import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
import { MAX_JOB_ID_LEN, MAX_KV_VALUE_SIZE, MAX_QUEUE_NAME_LEN } from './constants.js';

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;
// Control characters would make names unprintable in listings and logs.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Object.prototype.toString.call(value);
}

/** A queue name: a non-empty string of at most 255 UTF-8 bytes without control characters. */
export function validateQueueName(queue: unknown): asserts queue is string {
  if (typeof queue !== 'string' || queue.length === 0) {
    throw new InvalidArgumentError(`queue name must be a non-empty string. queue=${show(queue)}`, { queue: show(queue), reason: 'empty' });
  }
  const bytes = utf8(queue).length;
  if (bytes > MAX_QUEUE_NAME_LEN) {
    throw new InvalidArgumentError(`queue name longer than ${MAX_QUEUE_NAME_LEN} bytes. queue=${show(queue)} bytes=${bytes}`, {
      queue: show(queue),
      reason: 'too_long',
      bytes,
    });
  }
  if (CONTROL.test(queue)) {
    throw new InvalidArgumentError(`queue name contains a control character. queue=${show(queue)}`, { queue: show(queue), reason: 'control_character' });
  }
}

/** A caller-chosen job id: 1..128 characters of `[A-Za-z0-9_-]`. */
export function validateJobId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidArgumentError(`job id must be a non-empty string. id=${show(id)}`, { id: show(id), reason: 'empty' });
  }
  if (id.length > MAX_JOB_ID_LEN) {
    throw new InvalidArgumentError(`job id longer than ${MAX_JOB_ID_LEN} characters. id=${show(id)} length=${id.length}`, {
      id: show(id),
      reason: 'too_long',
    });
  }
  if (!ID_PATTERN.test(id)) {
    throw new InvalidArgumentError(`job id may only contain [A-Za-z0-9_-]. id=${show(id)}`, { id: show(id), reason: 'invalid_character' });
  }
}

/** A job id used for lookups: any non-empty string (ids are never interpreted). */
export function validateLookupId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new InvalidArgumentError(`job id must be a non-empty string. id=${show(id)}`, { id: show(id) });
  }
}

export function validatePayload(payload: unknown, what = 'payload'): asserts payload is Uint8Array {
  if (!(payload instanceof Uint8Array)) {
    throw new InvalidArgumentError(`${what} must be a Uint8Array. ${what}=${show(payload)}`, { what, type: show(payload) });
  }
}

/** A duration in milliseconds: finite and not negative. */
export function validateDuration(ms: unknown, name: string): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(`${name} must be a finite, non-negative number of milliseconds. ${name}=${show(ms)}`, { name, value: show(ms) });
  }
}

/** A count or limit: a non-negative safe integer. */
export function validateCount(n: unknown, name: string): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new InvalidArgumentError(`${name} must be a non-negative integer. ${name}=${show(n)}`, { name, value: show(n) });
  }
}

/** A timestamp in epoch milliseconds. */
export function validateTimestamp(ms: unknown, name: string): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(`${name} must be a finite epoch time in milliseconds. ${name}=${show(ms)}`, { name, value: show(ms) });
  }
}

export function validatePriority(priority: unknown): asserts priority is number {
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > 0xffffffff) {
    throw new InvalidArgumentError(`priority must be an integer in [0, 2^32). priority=${show(priority)}`, { value: show(priority) });
  }
}

export function validateMaxAttempts(n: unknown): asserts n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(`maxAttempts must be an integer of at least 1. maxAttempts=${show(n)}`, { value: show(n) });
  }
}

export function validateHeaders(headers: unknown): asserts headers is Record<string, string> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new InvalidArgumentError(`headers must be an object of strings. headers=${show(headers)}`, { value: show(headers) });
  }
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v !== 'string') {
      throw new InvalidArgumentError(`header values must be strings. header=${show(k)} value=${show(v)}`, { header: k, value: show(v) });
    }
  }
}

export function validateDedupKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidArgumentError(`dedup key must be a non-empty string. dedupKey=${show(key)}`, { value: show(key) });
  }
}

export function validateKvKey(key: unknown, name = 'key'): asserts key is Uint8Array {
  if (!(key instanceof Uint8Array)) {
    throw new InvalidArgumentError(`kv ${name} must be a Uint8Array. ${name}=${show(key)}`, { name, type: show(key) });
  }
}

/** A caller KV value: bytes, at most MAX_KV_VALUE_SIZE long. */
export function validateKvValue(value: unknown): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new InvalidArgumentError(`kv value must be a Uint8Array. value=${show(value)}`, { type: show(value) });
  }
  if (value.length > MAX_KV_VALUE_SIZE) {
    throw new InvalidArgumentError(`kv value too large. size=${value.length} max=${MAX_KV_VALUE_SIZE}`, {
      reason: 'kv_value_too_large',
      size: value.length,
      max: MAX_KV_VALUE_SIZE,
    });
  }
}

/** Open-time duration option; INVALID_CONFIG on failure. */
export function configDuration(ms: unknown, name: string, { allowZero = true } = {}): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || (!allowZero && ms === 0)) {
    throw new InvalidConfigError(`${name} must be a finite${allowZero ? ', non-negative' : ', positive'} number of milliseconds. ${name}=${show(ms)}`, {
      name,
      value: show(ms),
    });
  }
  return ms;
}

export { show as describeValue };
