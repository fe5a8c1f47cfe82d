/** The queue suites over MemoryObjectStore (the reference store). */
import { memoryStore } from '../../support/stores.js';
import { defineQueueSuites } from './queue-suites.js';

const memory = memoryStore();
defineQueueSuites(memory.name, memory.factory);
