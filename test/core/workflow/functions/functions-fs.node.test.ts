/**
 * The core workflow-function suites on the filesystem store, over a temp directory per test: the
 * store a Node process restarts on. The suites reopen queues in this process to simulate a new
 * process, which the store's writer lock would refuse with LOCKED: it is off here.
 */
import { fsStore } from '../../../support/stores.js';
import { defineDeterminismSuite } from './determinism.suite.js';
import { defineHistorySuite } from './history.suite.js';
import { defineRestartsSuite } from './restarts.suite.js';
import { defineSignalsSuite } from './signals.suite.js';
import { defineSleepSuite } from './sleep.suite.js';
import { defineStepsSuite } from './steps.suite.js';
import { defineVersioningSuite } from './versioning.suite.js';

const fs = fsStore({ writerLock: false });
defineStepsSuite(fs.name, fs.factory);
defineRestartsSuite(fs.name, fs.factory);
defineDeterminismSuite(fs.name, fs.factory);
defineSleepSuite(fs.name, fs.factory);
defineSignalsSuite(fs.name, fs.factory);
defineVersioningSuite(fs.name, fs.factory);
defineHistorySuite(fs.name, fs.factory);
