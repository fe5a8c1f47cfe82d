import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { describeKvEngineSuite } from '../core/kv/kv-engine.suite.js';

describeKvEngineSuite(
  'filesystem',
  async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-kv-'));
    return { store: new FileSystemObjectStore({ root }), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  { modelSteps: 600 },
);
