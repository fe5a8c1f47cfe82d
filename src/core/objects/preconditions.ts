import { PreconditionFailedError } from '../errors.js';
import type { ObjectVersion, PutOptions } from './object-store.js';

/** Whether a put with these options depends on the key's current version. */
export function hasPrecondition(options: PutOptions | undefined): boolean {
  return options?.ifNoneMatch === '*' || options?.ifMatch !== undefined;
}

/**
 * Throws PRECONDITION_FAILED (with `details.key`) unless a put with `options` may replace
 * `actual`, the key's current version (undefined when the key is absent): `ifNoneMatch: '*'`
 * needs no object, `ifMatch` exactly that version.
 */
export function checkPrecondition(key: string, options: PutOptions | undefined, actual: ObjectVersion | undefined): void {
  if (options?.ifNoneMatch === '*' && actual !== undefined) throw new PreconditionFailedError(`object already exists. key=${key}`, { key });
  const expected = options?.ifMatch;
  if (expected !== undefined && actual !== expected) {
    throw new PreconditionFailedError(`object version does not match. key=${key} expected=${expected} actual=${actual ?? 'absent'}`, { key });
  }
}
