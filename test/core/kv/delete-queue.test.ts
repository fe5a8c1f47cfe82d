import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/index.js';
import { CountingObjectStore } from '../../../src/testing/counting-store.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { DeleteQueue } from '../../../src/core/kv/gc/delete-queue.js';

/** A memory store with a batch delete, as S3 has. */
function batchingStore(): MemoryObjectStore & { deleteMany(keys: readonly string[]): Promise<void> } {
  const store = new MemoryObjectStore() as MemoryObjectStore & { deleteMany(keys: readonly string[]): Promise<void> };
  store.deleteMany = async (keys) => {
    for (const key of keys) await store.delete(key);
  };
  return store;
}

async function fill(store: MemoryObjectStore, n: number): Promise<string[]> {
  const keys = Array.from({ length: n }, (_, i) => `wal/${String(i).padStart(5, '0')}`);
  for (const key of keys) await store.put(key, new Uint8Array(1));
  return keys;
}

async function count(store: MemoryObjectStore): Promise<number> {
  let n = 0;
  for await (const _ of store.list('')) n++;
  return n;
}

describe('DeleteQueue', () => {
  it('uses batch requests of at most 1000 keys when the store has deleteMany', async () => {
    const inner = batchingStore();
    const keys = await fill(inner, 2500);
    const store = new CountingObjectStore(inner);
    const queue = new DeleteQueue(store);
    queue.add(keys.slice(0, 10));
    queue.add(keys.slice(10));
    await queue.idle();
    expect(await count(inner)).toBe(0);
    const counts = store.snapshot();
    expect(counts.delete.calls).toBe(0);
    expect(counts.deleteMany.objects).toBe(2500);
    // The first add starts a request for its 10 keys; the rest goes in 1000-key batches.
    expect(counts.deleteMany.calls).toBe(4);
  });

  it('falls back to single deletes, and survives failed ones (orphans are collected at open)', async () => {
    const inner = new MemoryObjectStore();
    const keys = await fill(inner, 100);
    const faulty = new FaultyObjectStore(inner);
    faulty.addRule({ type: 'fail', ops: ['delete'], nth: 5, count: 3 });
    const store = new CountingObjectStore(faulty);
    const queue = new DeleteQueue(store);
    queue.add(keys);
    await queue.idle();
    expect(store.snapshot().delete).toMatchObject({ calls: 100, failures: 3 });
    expect(await count(inner)).toBe(3);
  });

  it('a failed batch is dropped and the queue carries on', async () => {
    const inner = batchingStore();
    const keys = await fill(inner, 20);
    const faulty = new FaultyObjectStore(inner);
    faulty.addRule({ type: 'fail', ops: ['delete'] });
    const queue = new DeleteQueue(faulty);
    queue.add(keys.slice(0, 10));
    await queue.idle();
    queue.add(keys.slice(10));
    await queue.idle();
    expect(await count(inner)).toBe(10);
  });
});
