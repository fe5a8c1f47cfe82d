import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineWorkflowBasicsSuite } from './workflow-basics.suite.js';

const memory = () => new MemoryObjectStore();
defineWorkflowBasicsSuite('memory store', memory);
import { defineWorkflowOutcomesSuite } from './workflow-outcomes.suite.js';
defineWorkflowOutcomesSuite('memory store', memory);
