/**
 * The workflow suites on the filesystem store, over a temp directory per test: what the browser
 * and S3 projects run on their stores, here for the store a Node process restarts on (restarts,
 * crash recovery, cancellation of runs an earlier process left parked).
 *
 * The suites reopen queues in this process to simulate crashes (an abandoned writer, then a new
 * one), which the store's writer lock would refuse with LOCKED: it is off here.
 */
import { fsStore } from '../../support/stores.js';
import { defineWorkflowSuites } from './workflow-suites.js';

const fs = fsStore({ writerLock: false });
defineWorkflowSuites(fs.name, fs.factory);
