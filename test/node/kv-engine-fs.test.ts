import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { describeKvEngineSuite } from '../core/kv/kv-engine.suite.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
describeKvEngineSuite(
  'filesystem',
  async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-kv-'));
    return { store: new FileSystemObjectStore({ root, writerLock: false }), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  { modelSteps: 600 },
);
