/**
 * Layer 1: the object-store seam.
 *
 * Owns the `ObjectStore` contract (get, ranged get, conditional put, delete, ordered prefix
 * listing), the key rules every adapter enforces and the in-memory reference store. The test
 * wrappers around a store (`CountingObjectStore`, `FaultyObjectStore`) live in src/testing/.
 *
 * Errors: a failed precondition is PRECONDITION_FAILED (nothing written); a bad key, prefix or
 * range is INVALID_ARGUMENT; I/O failures are STORE_UNAVAILABLE (retry) or STORE_PERMISSION
 * (quota, credentials). Adapters keep the platform error as `cause`.
 *
 * Never: import a platform API (Node, DOM), or give a key a meaning that differs between adapters.
 * Every adapter must pass `test/core/objects/object-store.conformance.ts`.
 */
export type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from './object-store.js';
export type { AppendLog, AppendLogStore, SealFlag, SealFlagStore } from './append-log.js';
export { MemoryObjectStore } from './memory-store.js';
export { deleteObjects } from './delete-objects.js';
export { MAX_OBJECT_KEY_LENGTH, validateGetRange, validateKeyPrefixOption, validateListPrefix, validateObjectKey, validatePutData } from './keys.js';
