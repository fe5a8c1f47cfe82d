import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineQueueLifecycleSuite } from './queue-lifecycle.suite.js';

const memory = () => new MemoryObjectStore();
defineQueueLifecycleSuite('memory store', memory);
import { defineQueueSettlementSuite } from './queue-settlement.suite.js';
defineQueueSettlementSuite('memory store', memory);
import { defineQueueOperationsSuite } from './queue-operations.suite.js';
defineQueueOperationsSuite('memory store', memory);
import { defineQueueKvOffloadSuite } from './queue-kv-offload.suite.js';
defineQueueKvOffloadSuite('memory store', memory);
import { defineQueueWorkerReaderSuite } from './queue-worker-reader.suite.js';
defineQueueWorkerReaderSuite('memory store', memory);
