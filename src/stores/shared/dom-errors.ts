import { isTaqubaError, StorePermissionError, StoreUnavailableError } from '../../core/errors.js';

/** The `name` of a DOMException (or any error-like object), if it has one. */
export function domErrorName(e: unknown): string | undefined {
  const name = (e as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** What a browser store was doing when it failed (`details.op`). */
export type DomStoreOperation = 'open' | 'get' | 'put' | 'delete' | 'list';

/*
 * Refusals the caller has to fix rather than retry: the origin's quota is full
 * (QuotaExceededError: an IndexedDB transaction, a sync access handle's write, createWritable),
 * or storage is denied to this context (NotAllowedError in some private modes, SecurityError on
 * an opaque origin or with storage blocked by the user).
 */
const PERMISSION_NAMES = new Set(['QuotaExceededError', 'NotAllowedError', 'SecurityError']);

/**
 * Maps a failure of a browser storage API (IndexedDB, the origin private file system, a Blob
 * read) to a library error, keeping the DOMException as `cause`: quota and access refusals become
 * STORE_PERMISSION, everything else STORE_UNAVAILABLE. Library errors pass through unchanged.
 * The message is `<store> <op> failed. <subject> name=<name>`; `details` is `{ op, name }`, the
 * name being the DOMException's (or 'unknown').
 */
export function toDomStoreError(store: string, op: DomStoreOperation, subject: string, e: unknown): Error {
  if (isTaqubaError(e)) return e;
  const name = domErrorName(e) ?? 'unknown';
  const details = { op, name };
  const message = `${store} ${op} failed. ${subject} name=${name}`;
  if (PERMISSION_NAMES.has(name)) return new StorePermissionError(message, details, e);
  return new StoreUnavailableError(message, details, e);
}
