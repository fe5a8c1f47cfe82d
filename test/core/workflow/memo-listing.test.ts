/**
 * `MemoStore.listEntries`: the memo entries of one run as they exist in the object store, by
 * scope, named when the caller knows the key, a damaged entry listed without a value (and
 * reported), other runs' entries and step-output records left out, a bad run id refused.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { MemoStore } from '../../../src/core/workflow/index.js';

describe('MemoStore.listEntries', () => {
  it('lists a run’s entries by scope with their values, naming the known keys', async () => {
    const store = new MemoryObjectStore();
    const warnings: string[] = [];
    const memos = new MemoStore(store, 'memo-prefix', (message) => warnings.push(message));
    await memos.newMemo('run-1', 3).put('model-call', new Uint8Array([3]));
    await memos.newMemo('run-1', 0).put('model-call', new Uint8Array([0]));
    await memos.newMemo('run-1', 0).put('unnamed', new Uint8Array([1]));
    await memos.newRunMemo('run-1').put('budget', new Uint8Array([9]));
    await memos.newMemo('run-10', 0).put('model-call', new Uint8Array([7]));
    await store.put('memo-prefix/step-outputs/run-1/0/abc', new Uint8Array([5]));

    const entries = await memos.listEntries('run-1', ['model-call', 'budget']);
    expect(entries.map((e) => [e.scope, e.key, e.value === null ? null : [...e.value]])).toEqual([
      [0, 'model-call', [0]],
      [0, null, [1]],
      [3, 'model-call', [3]],
      ['run', 'budget', [9]],
    ]);
    expect(entries[1]!.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(warnings).toEqual([]);
  });

  it('lists a damaged entry without its value and reports it; refuses a bad run id', async () => {
    const store = new MemoryObjectStore();
    const warnings: string[] = [];
    const memos = new MemoStore(store, 'p', (message) => warnings.push(message));
    await memos.newMemo('run-2', 1).put('k', new Uint8Array([1, 2, 3]));
    const listed: { key: string }[] = [];
    for await (const object of store.list('p/memos/run-2/')) listed.push(object);
    const [info] = listed;
    const damaged = (await store.get(info!.key))!.data.slice();
    damaged[damaged.length - 1] ^= 0xff;
    await store.put(info!.key, damaged);

    expect(await memos.listEntries('run-2', ['k'])).toEqual([{ scope: 1, key: 'k', keyHash: expect.any(String), value: null }]);
    expect(warnings).toEqual([expect.stringContaining(`object=${info!.key}`)]);
    await expect(memos.listEntries('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
