import { IndexedDbObjectStore } from '../../../src/stores/indexeddb/index.js';
import { describeKvEngineSuite } from '../../core/kv/kv-engine.suite.js';

let counter = 0;

describeKvEngineSuite(
  'indexeddb',
  async () => {
    const name = `kv-${Date.now().toString(36)}-${counter++}`;
    const store = await IndexedDbObjectStore.open({ name });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await IndexedDbObjectStore.deleteDatabase(name);
      },
    };
  },
  { modelSteps: 400 },
);
