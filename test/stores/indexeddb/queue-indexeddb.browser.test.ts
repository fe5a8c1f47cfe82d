/**
 * The queue suites over IndexedDbObjectStore in real Chromium, a fresh database per queue.
 * The Node-only queue tests (worker-durability, records, unit tests) are not run here.
 */
import { indexedDbStore } from '../../support/browser-stores.js';
import { defineQueueSuites } from '../../core/queue/queue-suites.js';

const idb = indexedDbStore('test-queue');
defineQueueSuites(idb.name, idb.factory);
