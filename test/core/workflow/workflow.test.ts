import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineWorkflowBasicsSuite } from './workflow-basics.suite.js';

const memory = () => new MemoryObjectStore();
defineWorkflowBasicsSuite('memory store', memory);
import { defineWorkflowOutcomesSuite } from './workflow-outcomes.suite.js';
defineWorkflowOutcomesSuite('memory store', memory);
import { defineWorkflowSignalsSuite } from './workflow-signals.suite.js';
defineWorkflowSignalsSuite('memory store', memory);
import { defineWorkflowEffectsSuite } from './workflow-effects.suite.js';
defineWorkflowEffectsSuite('memory store', memory);
import { defineMemoSuite } from './memo.suite.js';
defineMemoSuite('memory store', memory);
