/**
 * The workflow suites over OpfsObjectStore in real Chromium, each store living in a dedicated
 * worker (opfs-worker-client.ts), a fresh directory per harness. The Node-only workflow unit
 * tests are not run here.
 */
import { opfsStore } from '../../support/browser-stores.js';
import { defineWorkflowSuites } from '../../core/workflow/workflow-suites.js';

const opfs = opfsStore('workflow');
defineWorkflowSuites(opfs.name, opfs.factory);
