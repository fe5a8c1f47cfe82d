/** Registers every shared queue suite (the *.suite.ts files here) for one store. */
import type { StoreFactory } from './harness.js';
import { defineQueueKvOffloadSuite } from './queue-kv-offload.suite.js';
import { defineQueueLifecycleSuite } from './queue-lifecycle.suite.js';
import { defineQueueOperationsSuite } from './queue-operations.suite.js';
import { defineQueueSettlementSuite } from './queue-settlement.suite.js';
import { defineQueueWorkerReaderSuite } from './queue-worker-reader.suite.js';

export function defineQueueSuites(name: string, factory: StoreFactory): void {
  defineQueueLifecycleSuite(name, factory);
  defineQueueSettlementSuite(name, factory);
  defineQueueOperationsSuite(name, factory);
  defineQueueKvOffloadSuite(name, factory);
  defineQueueWorkerReaderSuite(name, factory);
}
