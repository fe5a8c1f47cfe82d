import { toDomStoreError, type DomStoreOperation } from '../shared/dom-errors.js';

/**
 * Maps an IndexedDB (or Blob read) failure to a library error, keeping the DOMException as
 * `cause`: quota and access refusals become STORE_PERMISSION, everything else (an aborted or
 * failed transaction, UnknownError from the backing store, an unreadable Blob) STORE_UNAVAILABLE.
 * Library errors pass through unchanged. `details.name` carries the DOMException's name.
 *
 * @internal exported for tests.
 */
export function toIndexedDbError(op: DomStoreOperation, subject: string, e: unknown): Error {
  return toDomStoreError('indexeddb', op, subject, e);
}
