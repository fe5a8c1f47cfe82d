/**
 * Model-based fencing test on the memory store: random writers, random opens, store calls released
 * in an order fast-check picks, protocol steps failed on request (see fencing-model.ts).
 * Reproduce a failure with FC_SEED=<seed> FC_PATH=<path> from the failure message.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/index.js';
import { modelActionArb, modelParameters, runFencingModel } from './fencing-model.js';

describe('kv fencing model over memory', () => {
  it('every acknowledged write survives and no FENCED write appears, whatever the writers and the order of store calls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(modelActionArb, { minLength: 10, maxLength: 120 }), fc.integer({ min: 2, max: 3 }), (s, actions, writers) =>
        runFencingModel(async () => ({ store: new MemoryObjectStore() }), s, actions, writers),
      ),
      modelParameters(500, 30_000),
    );
  }, 60_000);
});
