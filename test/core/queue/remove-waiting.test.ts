/** `Queue.removeWaitingWith` (debounce's swap of a run's scheduled first step): a waiting job only, never a claimed one. */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { b, makeHarness } from './harness.js';

describe('queue removeWaitingWith', () => {
  it('removeWaitingWith: a scheduled job goes with its effects (its dedup key free again); a claimed or settled one stays, nothing applied', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const scheduled = await q.enqueue('q', b('p'), { dedupKey: 'd', runAt: q.clock.now() + 60_000 });
    const effects = { enqueues: [{ queue: 'q', payload: b('next'), options: { dedupKey: 'd' } }], kvWrites: [[b('swapped'), b('1')]] as [Uint8Array, Uint8Array][] };
    expect(await q.removeWaitingWith(scheduled, effects)).toBe(true);
    expect(await q.getJob(scheduled)).toBeUndefined();
    expect(await q.kvGet(b('swapped'))).toEqual(b('1'));
    expect(await q.stats('q')).toMatchObject({ pending: 1, scheduled: 0 });

    const claim = (await q.claim('q', 60_000))!;
    expect(await q.removeWaitingWith(claim.id, { kvWrites: [[b('claimed'), b('1')]] })).toBe(false);
    expect(await q.getJob(claim.id)).toMatchObject({ status: 'claimed', cancelRequested: false });
    expect(await q.kvGet(b('claimed'))).toBeUndefined();
    await q.ack(claim);
    expect(await q.removeWaitingWith(claim.id, {})).toBe(false);
    await q.close();
  });
});
