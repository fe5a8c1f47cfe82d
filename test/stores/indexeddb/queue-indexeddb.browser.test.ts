/**
 * The queue suites (test/core/queue/*.suite.ts) over IndexedDbObjectStore in real Chromium: each
 * harness gets a fresh database with a unique name; databases are closed and deleted at the end.
 * The Node-only queue tests (worker-durability, records, unit tests) are not run here.
 */
import { afterAll } from 'vitest';
import { IndexedDbObjectStore } from '../../../src/stores/indexeddb/index.js';
import { defineQueueKvOffloadSuite } from '../../core/queue/queue-kv-offload.suite.js';
import { defineQueueLifecycleSuite } from '../../core/queue/queue-lifecycle.suite.js';
import { defineQueueOperationsSuite } from '../../core/queue/queue-operations.suite.js';
import { defineQueueSettlementSuite } from '../../core/queue/queue-settlement.suite.js';
import { defineQueueWorkerReaderSuite } from '../../core/queue/queue-worker-reader.suite.js';

const opened: { store: IndexedDbObjectStore; name: string }[] = [];
let counter = 0;
const idb = async (): Promise<IndexedDbObjectStore> => {
  const name = `test-queue-${Date.now().toString(36)}-${counter++}`;
  const store = await IndexedDbObjectStore.open({ name });
  opened.push({ store, name });
  return store;
};
afterAll(async () => {
  for (const { store, name } of opened.splice(0)) {
    await store.close().catch(() => undefined);
    await IndexedDbObjectStore.deleteDatabase(name).catch(() => undefined);
  }
});

defineQueueLifecycleSuite('indexeddb store', idb);
defineQueueSettlementSuite('indexeddb store', idb);
defineQueueOperationsSuite('indexeddb store', idb);
defineQueueKvOffloadSuite('indexeddb store', idb);
defineQueueWorkerReaderSuite('indexeddb store', idb);
