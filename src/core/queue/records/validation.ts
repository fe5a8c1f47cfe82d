/**
 * Input checks shared by every entry point. Each throws INVALID_ARGUMENT (or INVALID_CONFIG for
 * open-time options) with a message naming the offending value, before any write happens.
 */
import { utf8 } from '../../bytes.js';
import { InvalidArgumentError, InvalidConfigError } from '../../errors.js';
import { numberRule } from '../../options.js';
import { show } from '../../show.js';
import { MAX_JOB_ID_LEN, MAX_KV_VALUE_SIZE, MAX_QUEUE_NAME_LEN } from '../constants.js';

const ID_PATTERN = /^[A-Za-z0-9_-]+$/;
// Control characters would make names unprintable in listings and logs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A queue name: a non-empty string of at most 255 UTF-8 bytes without control characters. */
export function validateQueueName(queue: unknown): asserts queue is string {
  if (typeof queue !== 'string' || queue.length === 0) {
    const reason = typeof queue === 'string' ? 'empty' : 'not_a_string';
    throw new InvalidArgumentError(`queue name must be a non-empty string${reason === 'empty' ? '' : `, not ${typeof queue}`}. queue=${show(queue)}`, { queue: show(queue), reason });
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
    const reason = typeof id === 'string' ? 'empty' : 'not_a_string';
    throw new InvalidArgumentError(`job id must be a non-empty string${reason === 'empty' ? '' : `, not ${typeof id}`}. id=${show(id)}`, { id: show(id), reason });
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
    const reason = typeof id === 'string' ? 'empty' : 'not_a_string';
    throw new InvalidArgumentError(`job id must be a non-empty string${reason === 'empty' ? '' : `, not ${typeof id}`}. id=${show(id)}`, { id: show(id), reason });
  }
}

export function validatePayload(payload: unknown, what = 'payload'): asserts payload is Uint8Array {
  if (!(payload instanceof Uint8Array)) {
    throw new InvalidArgumentError(`${what} must be a Uint8Array. ${what}=${show(payload)}`, { what, type: show(payload) });
  }
}

/** A duration in milliseconds: finite and not negative. */
export function validateDuration(ms: unknown, name: string): asserts ms is number {
  const rule = numberRule(ms);
  if (rule !== undefined) {
    throw new InvalidArgumentError(`${name} ${rule} (a duration in milliseconds). ${name}=${show(ms)}`, { name, value: show(ms), rule });
  }
}

/** A count or limit: a non-negative safe integer. */
export function validateCount(n: unknown, name: string): asserts n is number {
  const rule = numberRule(n, { integer: true });
  if (rule !== undefined) {
    throw new InvalidArgumentError(`${name} ${rule} (a count). ${name}=${show(n)}`, { name, value: show(n), rule });
  }
}

/** A timestamp in epoch milliseconds. */
export function validateTimestamp(ms: unknown, name: string): asserts ms is number {
  const rule = numberRule(ms);
  if (rule !== undefined) {
    throw new InvalidArgumentError(`${name} ${rule} (an epoch time in milliseconds). ${name}=${show(ms)}`, { name, value: show(ms), rule });
  }
}

export function validatePriority(priority: unknown): asserts priority is number {
  const rule = numberRule(priority, { integer: true }) ?? ((priority as number) > 0xffffffff ? 'must be below 2^32' : undefined);
  if (rule !== undefined) {
    throw new InvalidArgumentError(`priority ${rule} (an integer in [0, 2^32)). priority=${show(priority)}`, { value: show(priority), rule });
  }
}

export function validateMaxAttempts(n: unknown): asserts n is number {
  const rule = numberRule(n, { integer: true, min: 1 });
  if (rule !== undefined) {
    throw new InvalidArgumentError(`maxAttempts ${rule} (an integer of at least 1). maxAttempts=${show(n)}`, { value: show(n), rule });
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
  const rule = numberRule(ms) ?? (!allowZero && ms === 0 ? 'must be positive' : undefined);
  if (rule !== undefined) {
    throw new InvalidConfigError(`${name} ${rule} (a${allowZero ? '' : ' positive'} duration in milliseconds). ${name}=${show(ms)}`, { name, value: show(ms), rule });
  }
  return ms as number;
}

