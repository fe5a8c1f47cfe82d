import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

describeObjectStoreConformance('MemoryObjectStore', async () => ({ store: new MemoryObjectStore() }));

describe('MemoryObjectStore', () => {
  it('rawBytes exposes the stored bytes so tests can corrupt them in place', async () => {
    const store = new MemoryObjectStore();
    await store.put('k', new Uint8Array([1, 2, 3]));
    store.rawBytes('k')![0] = 9;
    expect((await store.get('k'))!.data).toEqual(new Uint8Array([9, 2, 3]));
    expect(store.rawBytes('absent')).toBeUndefined();
  });

  it('a listing in progress sees later puts after its cursor and never repeats a key', async () => {
    const store = new MemoryObjectStore();
    for (const key of ['k/1', 'k/3', 'k/5']) await store.put(key, new Uint8Array(0));
    const seen: string[] = [];
    for await (const { key } of store.list('k/')) {
      seen.push(key);
      if (key === 'k/1') {
        await store.put('k/0', new Uint8Array(0)); // behind the cursor: not seen
        await store.put('k/4', new Uint8Array(0)); // ahead of the cursor: seen
        await store.delete('k/5');
      }
    }
    expect(seen).toEqual(['k/1', 'k/3', 'k/4']);
  });

  it('lists a page of a large store without visiting the rest', async () => {
    const store = new MemoryObjectStore();
    for (let i = 0; i < 20_000; i++) await store.put(`big/${String(i).padStart(6, '0')}`, new Uint8Array(0));
    const page: string[] = [];
    for await (const { key } of store.list('big/', { startAfter: 'big/010000' })) {
      page.push(key);
      if (page.length === 3) break;
    }
    expect(page).toEqual(['big/010001', 'big/010002', 'big/010003']);
  });
});
