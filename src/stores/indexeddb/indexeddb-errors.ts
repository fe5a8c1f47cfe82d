import { isTaqubaError, StorePermissionError, StoreUnavailableError } from '../../core/errors.js';

/** The `name` of a DOMException (or any error-like object), if it has one. */
export function domErrorName(e: unknown): string | undefined {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

/*
 * Refusals the caller has to fix rather than retry: the origin's quota is full
 * (QuotaExceededError), or storage is denied to this context (NotAllowedError in some private
 * modes, SecurityError on an opaque origin or with storage blocked by the user).
 */
const PERMISSION_NAMES = new Set(['QuotaExceededError', 'NotAllowedError', 'SecurityError']);

/**
 * Maps an IndexedDB (or Blob read) failure to a library error, keeping the DOMException as
 * `cause`: quota and access refusals become STORE_PERMISSION, everything else (an aborted or
 * failed transaction, UnknownError from the backing store, an unreadable Blob) STORE_UNAVAILABLE.
 * Library errors pass through unchanged. `details.name` carries the DOMException's name.
 *
 * @internal exported for tests.
 */
export function toIndexedDbError(op: 'open' | 'get' | 'put' | 'delete' | 'list', subject: string, e: unknown): Error {
  if (isTaqubaError(e)) return e;
  const name = domErrorName(e) ?? 'unknown';
  const details = { op, name };
  const message = `indexeddb ${op} failed. ${subject} name=${name}`;
  if (PERMISSION_NAMES.has(name)) return new StorePermissionError(message, details, e);
  return new StoreUnavailableError(message, details, e);
}
