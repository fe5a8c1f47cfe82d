/** The workflow-function suites over MemoryObjectStore (the reference store). */
import { memoryStore } from '../../../support/stores.js';
import { defineContextSuite } from './context.suite.js';
import { defineDeterminismSuite } from './determinism.suite.js';
import { defineHistorySuite } from './history.suite.js';
import { defineRestartsSuite } from './restarts.suite.js';
import { defineSignalsSuite } from './signals.suite.js';
import { defineSleepSuite } from './sleep.suite.js';
import { defineStartSuite } from './start.suite.js';
import { defineStepsSuite } from './steps.suite.js';
import { defineVersioningSuite } from './versioning.suite.js';

const memory = memoryStore();
defineStepsSuite(memory.name, memory.factory);
defineRestartsSuite(memory.name, memory.factory);
defineDeterminismSuite(memory.name, memory.factory);
defineSleepSuite(memory.name, memory.factory);
defineSignalsSuite(memory.name, memory.factory);
defineVersioningSuite(memory.name, memory.factory);
defineStartSuite(memory.name, memory.factory);
defineHistorySuite(memory.name, memory.factory);
defineContextSuite(memory.name, memory.factory);
