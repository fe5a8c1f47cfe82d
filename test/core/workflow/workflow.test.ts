/** The workflow suites over MemoryObjectStore (the reference store). */
import { memoryStore } from '../../support/stores.js';
import { defineWorkflowSuites } from './workflow-suites.js';

const memory = memoryStore();
defineWorkflowSuites(memory.name, memory.factory);
