/** The fencing suite over OpfsObjectStore, each store living in a dedicated worker (see opfs-worker-client.ts). */
import { afterAll } from 'vitest';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';
import { OpfsWorkerClient } from './opfs-worker-client.js';

const client = new OpfsWorkerClient();
afterAll(() => client.terminate());
let counter = 0;

describeFencingSuite('opfs (in a dedicated worker)', async () => {
  const directory = `taquba-test/kv-fence-${Date.now().toString(36)}-${counter++}`;
  const store = await client.open(directory);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await client.call('deleteDirectory', directory);
    },
  };
});
