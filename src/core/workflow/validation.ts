/**
 * Input checks of the workflow runtime: run ids, caller headers, caller KV keys and values. Each
 * throws INVALID_ARGUMENT before anything is written, with `details.reason` naming the rule
 * (`invalid_run_id`, `reserved_header`, `invalid_kv_key`, `reserved_kv_key`, `invalid_kv_value`,
 * `kv_value_too_large`) where it has one.
 */
import { utf8 } from '../bytes.js';
import { InvalidArgumentError } from '../errors.js';
import { MAX_KV_VALUE_SIZE } from '../queue/index.js';
import { show, showKey } from '../show.js';
import { MAX_RUN_ID_LEN, RESERVED_HEADER_PREFIX, RESERVED_KV_PREFIX } from './constants.js';

const RUN_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Whether `text` is a run id: 1..128 of `[A-Za-z0-9_-]`. */
export const isRunId = (text: string): boolean => text.length <= MAX_RUN_ID_LEN && RUN_ID_PATTERN.test(text);

/** Throws INVALID_ARGUMENT (reason `invalid_run_id`) unless `runId` is 1..128 of `[A-Za-z0-9_-]`. */
export function validateRunId(runId: unknown): asserts runId is string {
  let why: string | undefined;
  if (typeof runId !== 'string') why = 'not_a_string';
  else if (runId.length === 0) why = 'empty';
  else if (runId.length > MAX_RUN_ID_LEN) why = 'too_long';
  else if (!RUN_ID_PATTERN.test(runId)) why = 'invalid_character';
  if (why !== undefined) {
    throw new InvalidArgumentError(`invalid run id (${why.replaceAll('_', ' ')}); expected a string of 1..${MAX_RUN_ID_LEN} characters of [A-Za-z0-9_-]. runId=${show(runId)}`, {
      reason: 'invalid_run_id',
      runId: show(runId),
      why,
    });
  }
}

/** Throws INVALID_ARGUMENT (reason `reserved_header`) for a header in the reserved namespace. */
export function checkUserHeaders(headers: Readonly<Record<string, string>>): void {
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith(RESERVED_HEADER_PREFIX)) {
      throw new InvalidArgumentError(`header name uses the reserved prefix ${RESERVED_HEADER_PREFIX}. header=${show(k)}`, { reason: 'reserved_header', header: k });
    }
    if (typeof v !== 'string') throw new InvalidArgumentError(`header values must be strings. header=${show(k)} value=${show(v)}`, { header: k });
  }
}

const RESERVED_KV = utf8(RESERVED_KV_PREFIX);

/** A KV key as bytes: strings are UTF-8 encoded. */
export function kvKeyBytes(key: unknown, what = 'kv key'): Uint8Array {
  if (typeof key === 'string') return utf8(key);
  if (key instanceof Uint8Array) return key;
  throw new InvalidArgumentError(`${what} must be a string or a Uint8Array. key=${show(key)}`, { reason: 'invalid_kv_key' });
}

/** Throws INVALID_ARGUMENT (reason `reserved_kv_key`) for a key under `workflow/`. */
export function checkUserKvKey(key: Uint8Array): void {
  if (key.length < RESERVED_KV.length) return;
  for (let i = 0; i < RESERVED_KV.length; i++) if (key[i] !== RESERVED_KV[i]) return;
  throw new InvalidArgumentError(`kv key uses the reserved prefix ${RESERVED_KV_PREFIX}. key=${showKey(key)}`, { reason: 'reserved_kv_key', key: showKey(key) });
}

/** Throws INVALID_ARGUMENT (reason `kv_value_too_large`) for a non-bytes or oversized value. */
export function checkKvValue(key: Uint8Array, value: unknown): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new InvalidArgumentError(`kv value must be a Uint8Array. key=${showKey(key)} value=${show(value)}`, { reason: 'invalid_kv_value', key: showKey(key) });
  }
  if (value.length > MAX_KV_VALUE_SIZE) {
    throw new InvalidArgumentError(`kv value too large. key=${showKey(key)} size=${value.length} max=${MAX_KV_VALUE_SIZE}`, {
      reason: 'kv_value_too_large',
      key: showKey(key),
      size: value.length,
      max: MAX_KV_VALUE_SIZE,
    });
  }
}
