import { IndexedDbObjectStore } from '../../../src/stores/indexeddb/index.js';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';

let counter = 0;

describeFencingSuite('indexeddb', async () => {
  const name = `kv-fence-${Date.now().toString(36)}-${counter++}`;
  const store = await IndexedDbObjectStore.open({ name });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await IndexedDbObjectStore.deleteDatabase(name);
    },
  };
});
