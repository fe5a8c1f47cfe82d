/**
 * Layer 1: the object-store seam.
 *
 * Owns the `ObjectStore` contract (get, ranged get, conditional put, delete, ordered prefix
 * listing), the key rules every adapter enforces, the in-memory reference store, and two
 * wrappers: `CountingObjectStore` (I/O accounting) and `FaultyObjectStore` (a test tool that
 * injects failures, latency, torn writes and crashes).
 *
 * Errors: a failed precondition is PRECONDITION_FAILED (nothing written); a bad key, prefix or
 * range is INVALID_ARGUMENT; I/O failures are STORE_UNAVAILABLE (retry) or STORE_PERMISSION
 * (quota, credentials). Adapters keep the platform error as `cause`.
 *
 * Never: import a platform API (Node, DOM), or give a key a meaning that differs between adapters.
 * Every adapter must pass `test/core/objects/object-store.conformance.ts`.
 */
export type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from './object-store.js';
export type { AppendLog, AppendLogStore } from './append-log.js';
export { MemoryObjectStore } from './memory-store.js';
export { deleteObjects } from './delete-objects.js';
export { MAX_OBJECT_KEY_LENGTH, validateGetRange, validateKeyPrefixOption, validateListPrefix, validateObjectKey, validatePutData } from './keys.js';
export { CountingObjectStore } from './counting-store.js';
export type { ObjectStoreCounts, OperationCount } from './counting-store.js';
export { createSeededRandom, FaultyObjectStore } from './faulty-store.js';
export type { FaultCall, FaultMatch, FaultRule, FaultRuleHandle, FaultyObjectStoreOptions, ObjectOperation } from './faulty-store.js';
