/** `Queue.commitEffects`: effects with no job transition, all or nothing. */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { b, makeHarness } from './harness.js';

describe('queue commitEffects', () => {
  it('applies enqueues, KV writes and KV deletes in one commit', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.kvPut(b('gone'), b('x'));
    const results = await q.commitEffects({
      enqueues: [{ queue: 'q', payload: b('p'), options: { dedupKey: 'k' } }],
      kvWrites: [[b('a'), b('1')]],
      kvDeletes: [b('gone')],
    });
    expect(results).toHaveLength(1);
    expect(results[0].type).toBe('new');
    expect(await q.kvGet(b('a'))).toEqual(b('1'));
    expect(await q.kvGet(b('gone'))).toBeUndefined();
    expect(await q.stats('q')).toMatchObject({ pending: 1 });
    // A dedup hit downgrades only the enqueue; the KV part still applies.
    const again = await q.commitEffects({ enqueues: [{ queue: 'q', payload: b('p2'), options: { dedupKey: 'k' } }], kvWrites: [[b('c'), b('3')]] });
    expect(again).toEqual([{ type: 'already_enqueued', id: results[0].id }]);
    expect(await q.kvGet(b('c'))).toEqual(b('3'));
    expect(await q.commitEffects({})).toEqual([]);
    await q.close();
  });

  it('rejects invalid effects with INVALID_ARGUMENT before writing anything', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await expect(q.commitEffects({ kvWrites: [[b('a'), b('1')]], enqueues: [{ queue: '', payload: b('p') }] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await q.kvGet(b('a'))).toBeUndefined();
    await q.close();
    await expect(q.commitEffects({})).rejects.toMatchObject({ code: 'CLOSED' });
  });
});
