/**
 * `Queue.commitEffects`: effects with no job transition, all or nothing. And the effects' internal
 * `onCommitted` hooks (what the workflow runtime's flow cache relies on): run once the effects
 * committed, before the call returns, and never when they were not applied.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
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

  it('onCommitted runs once the effects committed, before the call returns; never when they were not applied', async () => {
    const h = await makeHarness(() => new FaultyObjectStore(new MemoryObjectStore()));
    const q = await h.open();
    const calls: string[] = [];
    // The hook sees the committed value, and the call has not returned yet.
    let returned = false;
    await q.commitEffects({ kvWrites: [[b('a'), b('1')]], onCommitted: [() => void calls.push(`a ${returned}`)] });
    returned = true;
    expect(calls).toEqual(['a false']);
    // Invalid effects: nothing applied, no hook.
    await expect(q.commitEffects({ kvWrites: [[b('x'), b('1')]], enqueues: [{ queue: '', payload: b('p') }], onCommitted: [() => void calls.push('invalid')] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });

    // A nack applies its effects only when it dead-letters the job.
    await q.enqueue('retried', b('p'), { maxAttempts: 2 });
    await q.nackWith((await q.claim('retried', 10_000))!, 'retry', { kvWrites: [[b('n1'), b('1')]], onCommitted: [() => void calls.push('retried')] });
    expect(await q.kvGet(b('n1'))).toBeUndefined();
    await q.enqueue('last', b('p'), { maxAttempts: 1 });
    await q.nackWith((await q.claim('last', 10_000))!, 'last', { kvWrites: [[b('n2'), b('1')]], onCommitted: [() => void calls.push('dead-lettered')] });
    expect(await q.kvGet(b('n2'))).toEqual(b('1'));
    expect(calls).toEqual(['a false', 'dead-lettered']);

    // A commit whose WAL write fails: not acknowledged, no hook (the engine fails; nothing more commits).
    h.store.addRule({ type: 'fail', ops: ['put'], count: Infinity });
    await expect(q.commitEffects({ kvWrites: [[b('lost'), b('1')]], onCommitted: [() => void calls.push('lost')] })).rejects.toThrow();
    expect(calls).toEqual(['a false', 'dead-lettered']);
    await q.close().catch(() => undefined);
  });
});
