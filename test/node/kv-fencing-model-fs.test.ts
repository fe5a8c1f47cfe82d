/**
 * The fencing model (test/core/kv/fencing-model.ts) on the filesystem store, a smaller run: every
 * schedule gets its own temporary directory.
 */
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { modelActionArb, modelParameters, runFencingModel } from '../core/kv/fencing-model.js';

// Several writers of one engine meet in this process (fencing is under test), so the store's
// writer lock, which would refuse the second with LOCKED first, is off.
describe('kv fencing model over the filesystem', () => {
  it.each([
    ['append-log WAL', true, 60],
    ['WAL objects', false, 30],
  ] as const)('%s: every acknowledged write survives and no FENCED write appears, whatever the writers and the order of store calls', async (_, appendLogs, runs) => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(modelActionArb, { minLength: 10, maxLength: 80 }), fc.integer({ min: 2, max: 3 }), (s, actions, writers) =>
        runFencingModel(
          async () => {
            const root = await mkdtemp(join(tmpdir(), 'taquba-fence-model-'));
            return { store: new FileSystemObjectStore({ root, writerLock: false, appendLogs }), cleanup: () => rm(root, { recursive: true, force: true }) };
          },
          s,
          actions,
          writers,
        ),
      ),
      modelParameters(runs, 20_000),
    );
  }, 60_000);
});
