import { isTaqubaError, TaqubaError } from '../../core/errors.js';
import { domErrorName, toDomStoreError, type DomStoreOperation } from '../shared/dom-errors.js';

/**
 * Maps an origin-private-file-system failure to a library error, keeping the DOMException as
 * `cause`: quota and access refusals become STORE_PERMISSION; a name the browser refuses
 * (TypeError) INVALID_ARGUMENT; everything else (a file locked by another context's access handle,
 * NoModificationAllowedError; a snapshot invalidated under a read, NotReadableError; InvalidStateError)
 * STORE_UNAVAILABLE. Library errors pass through unchanged. `details.name` carries the DOMException's name.
 *
 * @internal exported for tests.
 */
export function toOpfsError(op: DomStoreOperation, subject: string, e: unknown): Error {
  const mapped = toDomStoreError('opfs', op, subject, e);
  if (e instanceof TypeError && isTaqubaError(mapped, 'STORE_UNAVAILABLE')) {
    const details = { op, name: domErrorName(e) ?? 'unknown' };
    return new TaqubaError('INVALID_ARGUMENT', `opfs refused a file name. ${subject}`, { details, cause: e });
  }
  return mapped;
}
