/**
 * The workflow suites (test/core/workflow/*.suite.ts, including the memo suite) over
 * IndexedDbObjectStore in real Chromium: a fresh database with a unique name per harness; databases
 * are closed and deleted at the end. The Node-only workflow unit tests are not run here.
 */
import { afterAll } from 'vitest';
import { IndexedDbObjectStore } from '../../../src/stores/indexeddb/index.js';
import { defineMemoSuite } from '../../core/workflow/memo.suite.js';
import { defineWorkflowBasicsSuite } from '../../core/workflow/workflow-basics.suite.js';
import { defineWorkflowEffectsSuite } from '../../core/workflow/workflow-effects.suite.js';
import { defineWorkflowOutcomesSuite } from '../../core/workflow/workflow-outcomes.suite.js';
import { defineWorkflowSignalsSuite } from '../../core/workflow/workflow-signals.suite.js';

const opened: { store: IndexedDbObjectStore; name: string }[] = [];
let counter = 0;
const idb = async (): Promise<IndexedDbObjectStore> => {
  const name = `test-workflow-${Date.now().toString(36)}-${counter++}`;
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

defineWorkflowBasicsSuite('indexeddb store', idb);
defineWorkflowOutcomesSuite('indexeddb store', idb);
defineWorkflowSignalsSuite('indexeddb store', idb);
defineWorkflowEffectsSuite('indexeddb store', idb);
defineMemoSuite('indexeddb store', idb);
