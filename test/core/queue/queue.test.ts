import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineQueueLifecycleSuite } from './queue-lifecycle.suite.js';

const memory = () => new MemoryObjectStore();
defineQueueLifecycleSuite('memory store', memory);
import { defineQueueSettlementSuite } from './queue-settlement.suite.js';
defineQueueSettlementSuite('memory store', memory);
