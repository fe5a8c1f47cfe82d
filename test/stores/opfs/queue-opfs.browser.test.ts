/**
 * The queue suites (test/core/queue/*.suite.ts) over OpfsObjectStore in real Chromium, each store living in a dedicated worker (opfs-worker-client.ts): each harness
 * gets a fresh directory with a unique name; stores are closed and directories deleted at the end.
 * The Node-only queue tests (worker-durability, records, unit tests) are not run here.
 */
import { afterAll } from 'vitest';
import { OpfsWorkerClient, type WorkerOpfsStore } from './opfs-worker-client.js';
import { defineQueueKvOffloadSuite } from '../../core/queue/queue-kv-offload.suite.js';
import { defineQueueLifecycleSuite } from '../../core/queue/queue-lifecycle.suite.js';
import { defineQueueOperationsSuite } from '../../core/queue/queue-operations.suite.js';
import { defineQueueSettlementSuite } from '../../core/queue/queue-settlement.suite.js';
import { defineQueueWorkerReaderSuite } from '../../core/queue/queue-worker-reader.suite.js';

const client = new OpfsWorkerClient();
const opened: { store: WorkerOpfsStore; directory: string }[] = [];
let counter = 0;
const opfs = async (): Promise<WorkerOpfsStore> => {
  const directory = `taquba-test/queue-${Date.now().toString(36)}-${counter++}`;
  const store = await client.open(directory);
  opened.push({ store, directory });
  return store;
};
afterAll(async () => {
  for (const { store, directory } of opened.splice(0)) {
    await store.close().catch(() => undefined);
    await client.call('deleteDirectory', directory).catch(() => undefined);
  }
  client.terminate();
});

defineQueueLifecycleSuite('opfs store (in a dedicated worker)', opfs);
defineQueueSettlementSuite('opfs store (in a dedicated worker)', opfs);
defineQueueOperationsSuite('opfs store (in a dedicated worker)', opfs);
defineQueueKvOffloadSuite('opfs store (in a dedicated worker)', opfs);
defineQueueWorkerReaderSuite('opfs store (in a dedicated worker)', opfs);
