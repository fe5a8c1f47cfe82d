/**
 * The queue suites over FileSystemObjectStore on a real temp directory per queue. The suites
 * reopen a queue while the old handle is still open (a simulated crash, or a new writer fencing
 * the old one), all in this one process; the store's per-engine writer lock would refuse that
 * second open, so these stores are built with `writerLock: false` and the engine's own fencing is
 * what the suites exercise (the lock has its own tests in fs-store.test.ts and process-lock.test.ts).
 */
import { fsStore } from '../../support/stores.js';
import { defineQueueSuites } from './queue-suites.js';

const fs = fsStore({ writerLock: false });
defineQueueSuites(fs.name, fs.factory);
