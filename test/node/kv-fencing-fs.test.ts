/** The fencing suite over FileSystemObjectStore; the newer writers open their own store on the same root. */
import { FileSystemObjectStore } from '../../src/node/index.js';
import { fsStore } from '../support/stores.js';
import { describeFencingSuite } from '../core/kv/fencing.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
const fs = fsStore({ writerLock: false });
describeFencingSuite('filesystem', async () => {
  const store = await fs.factory();
  return { store, another: () => new FileSystemObjectStore({ root: store.root, writerLock: false }) };
});
