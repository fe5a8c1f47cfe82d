import { isTaqubaError, StorePermissionError, StoreUnavailableError, TaqubaError } from '../../core/errors.js';

/** The `name` of a DOMException (or any error-like object), if it has one. */
export function domErrorName(e: unknown): string | undefined {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

/*
 * Refusals the caller has to fix rather than retry: the origin's quota is full
 * (QuotaExceededError, thrown by a sync access handle's write or by createWritable), or the file
 * system is denied to this context (NotAllowedError, SecurityError: storage blocked by the user
 * or an opaque origin).
 */
const PERMISSION_NAMES = new Set(['QuotaExceededError', 'NotAllowedError', 'SecurityError']);

/**
 * Maps an origin-private-file-system failure to a library error, keeping the DOMException as
 * `cause`: quota and access refusals become STORE_PERMISSION; a name the browser refuses
 * (TypeError) INVALID_ARGUMENT; everything else (a file locked by another context's access handle,
 * NoModificationAllowedError; a snapshot invalidated under a read, NotReadableError; InvalidStateError)
 * STORE_UNAVAILABLE. Library errors pass through unchanged. `details.name` carries the DOMException's name.
 *
 * @internal exported for tests.
 */
export function toOpfsError(op: 'open' | 'get' | 'put' | 'delete' | 'list', subject: string, e: unknown): Error {
  if (isTaqubaError(e)) return e;
  const name = domErrorName(e) ?? 'unknown';
  const details = { op, name };
  const message = `opfs ${op} failed. ${subject} name=${name}`;
  if (PERMISSION_NAMES.has(name)) return new StorePermissionError(message, details, e);
  if (e instanceof TypeError) return new TaqubaError('INVALID_ARGUMENT', `opfs refused a file name. ${subject}`, { details, cause: e });
  return new StoreUnavailableError(message, details, e);
}
