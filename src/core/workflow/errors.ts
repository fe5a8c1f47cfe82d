/**
 * Workflow errors. Every one is a `TaqubaError` with an existing stable code; `details.reason`
 * names the exact rule for callers that want it (INVALID_ARGUMENT: `invalid_run_id`,
 * `reserved_header`, `reserved_kv_key`, `conflicting_kv_effect`, `effects_sealed`,
 * `kv_value_too_large`, `serialization`, `invalid_outcome`; CORRUPT_DATA: `inconsistent_run_state`,
 * `undecodable_record`, `invalid_step_job`).
 */
import { toHex, utf8 } from '../bytes.js';
import { CorruptDataError, InvalidArgumentError, TaqubaError, type ErrorCode, type ErrorDetails } from '../errors.js';
import { MAX_KV_VALUE_SIZE } from '../queue/index.js';
import { MAX_RUN_ID_LEN, RESERVED_HEADER_PREFIX, RESERVED_KV_PREFIX } from './constants.js';

/** A run id was submitted again with a different input (registry or durable record). */
export class InputMismatchError extends TaqubaError {
  constructor(runId: string) {
    super('INPUT_MISMATCH', `run id already submitted with a different input. runId=${runId}`, { details: { runId } });
    this.name = 'InputMismatchError';
  }
}

/** Shortens a value for a message. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value instanceof Uint8Array) return `bytes(${value.length})`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Object.prototype.toString.call(value);
}

/** A key for messages: UTF-8 text when printable, else hex. */
export function showKey(key: Uint8Array): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(key);
    // eslint-disable-next-line no-control-regex
    if (!/[\u0000-\u001f\u007f]/.test(text)) return show(text);
  } catch {
    // not UTF-8
  }
  return `0x${toHex(key)}`;
}

const RUN_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

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

export function corrupt(message: string, details: ErrorDetails, cause?: unknown): CorruptDataError {
  return new CorruptDataError(message, details, cause);
}

/**
 * Codes a caller cannot fix by retrying: a step that throws one of these fails its run at once
 * instead of burning its retries. Everything else (store outages, CLOSED, FENCED, TIMEOUT, plain
 * errors) is transient.
 */
const PERMANENT_CODES = new Set<ErrorCode>(['INVALID_ARGUMENT', 'INVALID_CONFIG', 'INPUT_MISMATCH', 'CORRUPT_DATA', 'NOT_FOUND', 'ALREADY_EXISTS', 'INTERNAL']);

/** Whether a library error should dead-letter a step rather than retry it. */
export function isPermanentCode(code: ErrorCode): boolean {
  return PERMANENT_CODES.has(code);
}
