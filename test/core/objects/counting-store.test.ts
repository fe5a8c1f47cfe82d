import { describe, expect, it } from 'vitest';
import { deleteObjects, MemoryObjectStore } from '../../../src/core/objects/index.js';
import { CountingObjectStore } from '../../../src/testing/counting-store.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

const bytes = (n: number): Uint8Array => new Uint8Array(n);

describeObjectStoreConformance('CountingObjectStore', async () => ({ store: new CountingObjectStore(new MemoryObjectStore()) }));

describe('CountingObjectStore', () => {
  it('counts calls and bytes by kind, ranged gets apart from whole gets', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    await store.put('a', bytes(10));
    await store.put('b', bytes(5));
    await store.get('a');
    await store.get('missing');
    await store.get('a', { range: { offset: 2, length: 3 } });
    await store.delete('b');
    for await (const _ of store.list('')) void _;
    expect(store.snapshot()).toEqual({
      get: { calls: 2, failures: 0, bytes: 10 },
      rangedGet: { calls: 1, failures: 0, bytes: 3 },
      put: { calls: 2, failures: 0, bytes: 15 },
      append: { calls: 0, failures: 0, bytes: 0 },
      delete: { calls: 1, failures: 0, bytes: 0 },
      deleteMany: { calls: 0, failures: 0, bytes: 0, objects: 0 },
      list: { calls: 1, failures: 0, bytes: 0, objects: 1 },
    });
  });

  it('has deleteMany exactly when the inner store has it, and counts its requests and keys', async () => {
    expect(new CountingObjectStore(new MemoryObjectStore()).deleteMany).toBeUndefined();
    const batches: string[][] = [];
    const inner = new MemoryObjectStore() as MemoryObjectStore & { deleteMany(keys: readonly string[]): Promise<void> };
    inner.deleteMany = async (keys) => {
      batches.push([...keys]);
      for (const key of keys) await inner.delete(key);
    };
    const store = new CountingObjectStore(inner);
    await store.put('a', bytes(1));
    await store.put('b', bytes(1));
    await deleteObjects(store, ['a', 'b', 'c']);
    expect(batches).toEqual([['a', 'b', 'c']]);
    expect(store.snapshot().deleteMany).toEqual({ calls: 1, failures: 0, bytes: 0, objects: 3 });
    expect(store.snapshot().delete.calls).toBe(0);
    expect(await inner.get('a')).toBeUndefined();
  });

  it('counts rejected calls as failures', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    await store.put('a', bytes(1), { ifNoneMatch: '*' });
    await expect(store.put('a', bytes(4), { ifNoneMatch: '*' })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
    await expect(store.get('//')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(store.delete('')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect((async () => {
      for await (const _ of store.list('/x')) void _;
    })()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const counts = store.snapshot();
    expect(counts.put).toEqual({ calls: 2, failures: 1, bytes: 5 });
    expect(counts.get.failures).toBe(1);
    expect(counts.delete.failures).toBe(1);
    expect(counts.list.failures).toBe(1);
  });

  it('snapshot is a copy and reset zeroes every counter', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    await store.put('a', bytes(3));
    const before = store.snapshot();
    await store.put('b', bytes(3));
    expect(before.put.calls).toBe(1);
    store.reset();
    const zero = { calls: 0, failures: 0, bytes: 0 };
    expect(store.snapshot()).toEqual({ get: zero, rangedGet: zero, put: zero, append: zero, delete: zero, deleteMany: { ...zero, objects: 0 }, list: { ...zero, objects: 0 } });
    expect((await store.inner.get('b'))?.data.length).toBe(3);
  });
});
