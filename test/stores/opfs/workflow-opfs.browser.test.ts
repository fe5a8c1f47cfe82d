/**
 * The workflow suites (test/core/workflow/*.suite.ts, including the memo suite) over
 * OpfsObjectStore in real Chromium, each store living in a dedicated worker (opfs-worker-client.ts): a fresh directory per harness;
 * stores are closed and directories deleted at the end. The Node-only workflow unit tests are not run here.
 */
import { afterAll } from 'vitest';
import { OpfsWorkerClient, type WorkerOpfsStore } from './opfs-worker-client.js';
import { defineMemoSuite } from '../../core/workflow/memo.suite.js';
import { defineWorkflowBasicsSuite } from '../../core/workflow/workflow-basics.suite.js';
import { defineWorkflowEffectsSuite } from '../../core/workflow/workflow-effects.suite.js';
import { defineWorkflowOutcomesSuite } from '../../core/workflow/workflow-outcomes.suite.js';
import { defineWorkflowSignalsSuite } from '../../core/workflow/workflow-signals.suite.js';

const client = new OpfsWorkerClient();
const opened: { store: WorkerOpfsStore; directory: string }[] = [];
let counter = 0;
const opfs = async (): Promise<WorkerOpfsStore> => {
  const directory = `taquba-test/workflow-${Date.now().toString(36)}-${counter++}`;
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

defineWorkflowBasicsSuite('opfs store (in a dedicated worker)', opfs);
defineWorkflowOutcomesSuite('opfs store (in a dedicated worker)', opfs);
defineWorkflowSignalsSuite('opfs store (in a dedicated worker)', opfs);
defineWorkflowEffectsSuite('opfs store (in a dedicated worker)', opfs);
defineMemoSuite('opfs store (in a dedicated worker)', opfs);
