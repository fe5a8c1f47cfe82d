/**
 * `taquba-workflow/testing`: tools for testing code built on this library (and the library's own
 * tests). A clock that moves only when told to, a step to unit-test a runner with, store wrappers
 * that inject faults or count I/O around a real store, and a seeded random source for
 * reproducible fault schedules. None of these
 * belongs in production code, so the root entry does not export them.
 */
export { MockClock } from '../core/clock.js';
// A `Step` without a runtime, for unit-testing a StepRunner.
export { detachedStep, type DetachedStepInit } from '../core/workflow/steps/step.js';
export { CountingObjectStore } from './counting-store.js';
export type { ObjectStoreCounts, OperationCount } from './counting-store.js';
export { FaultyObjectStore, createSeededRandom } from './faulty-store.js';
export type { FaultCall, FaultMatch, FaultRule, FaultRuleHandle, FaultyObjectStoreOptions, ObjectOperation } from './faulty-store.js';
// The fault hook of `KvDbOptions.faults`: called at the engine's named protocol steps.
export type { FaultHook } from '../core/kv/index.js';
