/**
 * The queue suites over OpfsObjectStore in real Chromium, each store living in a dedicated worker
 * (opfs-worker-client.ts), a fresh directory per queue. The Node-only queue tests
 * (worker-durability, records, unit tests) are not run here.
 */
import { opfsStore } from '../../support/browser-stores.js';
import { defineQueueSuites } from '../../core/queue/queue-suites.js';

const opfs = opfsStore('queue');
defineQueueSuites(opfs.name, opfs.factory);
