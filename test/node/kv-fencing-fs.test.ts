import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { describeFencingSuite } from '../core/kv/fencing.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
describeFencingSuite('filesystem', async () => {
  const root = await mkdtemp(join(tmpdir(), 'taquba-fence-'));
  return {
    store: new FileSystemObjectStore({ root, writerLock: false }),
    another: () => new FileSystemObjectStore({ root, writerLock: false }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
