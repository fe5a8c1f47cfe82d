/**
 * Workflow errors. Every one is a `TaqubaError` with an existing stable code; `details.reason`
 * names the exact rule for callers that want it (INVALID_ARGUMENT: `invalid_run_id`,
 * `reserved_header`, `reserved_kv_key`, `conflicting_kv_effect`, `effects_sealed`,
 * `kv_value_too_large`, `serialization`, `invalid_outcome`; CORRUPT_DATA: `inconsistent_run_state`,
 * `undecodable_record`, `invalid_step_job`).
 */
import { CorruptDataError, TaqubaError, type ErrorCode, type ErrorDetails } from '../errors.js';

/** A run id was submitted again with a different input (registry or durable record). */
export class InputMismatchError extends TaqubaError {
  constructor(runId: string) {
    super('INPUT_MISMATCH', `run id already submitted with a different input. runId=${runId}`, { details: { runId } });
    this.name = 'InputMismatchError';
  }
}

/** A CORRUPT_DATA error for a workflow record or job that fails its checks. */
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
