/** `Queue.takeWaiting` (internal, the run hand-off's removal): only a waiting job as read, never a claimed one. */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { b, makeHarness } from './harness.js';

describe('queue takeWaiting', () => {
  it('removes a waiting job as read with its effects; leaves a claimed or changed one and its effects alone', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const id = await q.enqueue('q', b('p'), { dedupKey: 'k' });
    await q.kvPut(b('record'), b('r1'));
    const effects = { kvWrites: [[b('moved'), b('yes')]] as [Uint8Array, Uint8Array][], kvDeletes: [b('record')] };

    // Another record than the one read, or a caller-KV entry that changed: nothing happens.
    expect(await q.takeWaiting(id, { accept: (job) => job.attempts === 1 }, effects)).toBe('changed');
    expect(await q.takeWaiting(id, { accept: () => true, expectKv: [[b('record'), b('r0')]] }, effects)).toBe('changed');
    expect(await q.kvGet(b('moved'))).toBeUndefined();

    // Claimed: left running, no cancel request.
    const claim = (await q.claim('q', 60_000))!;
    expect(await q.takeWaiting(id, { accept: () => true }, effects)).toBe('claimed');
    expect(await q.getJob(id)).toMatchObject({ status: 'claimed', cancelRequested: false });
    await q.nack(claim, 'again');

    expect(await q.takeWaiting(id, { accept: (job) => job.attempts === 1, expectKv: [[b('record'), b('r1')]] }, effects)).toBe('taken');
    expect(await q.getJob(id)).toBeUndefined();
    expect(await q.kvGet(b('moved'))).toEqual(b('yes'));
    expect(await q.kvGet(b('record'))).toBeUndefined();
    expect(await q.stats('q')).toMatchObject({ pending: 0, scheduled: 0, claimed: 0 });
    // The dedup entry went with it.
    expect(await q.enqueue('q', b('p'), { dedupKey: 'k' })).not.toBe(id);
    expect(await q.takeWaiting(id, { accept: () => true }, effects)).toBe('not_found');
    await q.close();
  });
});
