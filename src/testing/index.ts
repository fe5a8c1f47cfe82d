/**
 * `taquba-workflow/testing`: tools for testing code built on this library. A clock that moves
 * only when told to, and store wrappers that inject faults or count I/O around a real store.
 */
export { MockClock } from '../core/clock.js';
export { CountingObjectStore, FaultyObjectStore, createSeededRandom } from '../core/objects/index.js';
export type { FaultRule, FaultRuleHandle, FaultyObjectStoreOptions, ObjectStoreCounts } from '../core/objects/index.js';
