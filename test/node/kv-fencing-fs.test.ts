import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { describeFencingSuite } from '../core/kv/fencing.suite.js';

describeFencingSuite('filesystem', async () => {
  const root = await mkdtemp(join(tmpdir(), 'taquba-fence-'));
  return {
    store: new FileSystemObjectStore({ root }),
    another: () => new FileSystemObjectStore({ root }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
