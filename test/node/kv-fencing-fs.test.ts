/**
 * The fencing suite over FileSystemObjectStore, on both WAL paths (append log, WAL objects); the
 * newer writers open their own store on the same root.
 */
import { FileSystemObjectStore } from '../../src/node/index.js';
import { fsStore } from '../support/stores.js';
import { describeFencingSuite } from '../core/kv/fencing.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
for (const appendLogs of [true, false]) {
  const fs = fsStore({ writerLock: false, appendLogs });
  describeFencingSuite(`filesystem (${appendLogs ? 'append-log WAL' : 'WAL objects'})`, async () => {
    const store = await fs.factory();
    return { store, another: () => new FileSystemObjectStore({ root: store.root, writerLock: false, appendLogs }) };
  });
}
