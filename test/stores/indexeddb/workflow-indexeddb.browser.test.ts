/**
 * The workflow suites over IndexedDbObjectStore in real Chromium, a fresh database per harness.
 * The Node-only workflow unit tests are not run here.
 */
import { indexedDbStore } from '../../support/browser-stores.js';
import { defineWorkflowSuites } from '../../core/workflow/workflow-suites.js';

const idb = indexedDbStore('test-workflow');
defineWorkflowSuites(idb.name, idb.factory);
