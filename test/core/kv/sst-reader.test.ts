/**
 * SstReader's store traffic: concurrent misses of one block share one ranged get (through the
 * block cache's loads in flight), and a forward walk reads ahead, while random reads fetch one
 * block each.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { BlockCache } from '../../../src/core/kv/tables/block-cache.js';
import type { VersionedEntry } from '../../../src/core/kv/entry.js';
import { tableObjectKey } from '../../../src/core/kv/format.js';
import type { BuiltTable } from '../../../src/core/kv/tables/sst-builder.js';
import { decodeBlockBody, type CachedBlock } from '../../../src/core/kv/tables/sst-format.js';
import { SstReader } from '../../../src/core/kv/tables/sst-reader.js';
import { writeSortedRun } from '../../../src/core/kv/tables/table-writer.js';
import { CountingObjectStore } from '../../../src/testing/counting-store.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';

const KEYS = 2000;
const key = (i: number): Uint8Array => utf8(`key-${String(i).padStart(5, '0')}`);
const value = (i: number): Uint8Array => utf8(`value-${i}-${'x'.repeat(30)}`);

/** One table of KEYS entries in ~256-byte blocks (about 200 blocks), stored in `store`. */
async function oneTable(store: ObjectStore): Promise<BuiltTable> {
  const entries: VersionedEntry[] = Array.from({ length: KEYS }, (_, i) => ({ key: key(i), seq: i + 1, kind: 'put' as const, value: value(i) }));
  const tables: BuiltTable[] = [];
  await writeSortedRun(store, 'kv', entries, { blockBytes: 256, warmBytes: 1024 * 1024, targetBytes: Number.POSITIVE_INFINITY, allocateId: () => 't1', stored: (t) => tables.push(t) });
  expect(tables).toHaveLength(1);
  return tables[0];
}

async function setup(cacheBytes = 1024 * 1024): Promise<{ store: CountingObjectStore; reader: SstReader; cache: BlockCache<CachedBlock>; blocks: number; table: BuiltTable }> {
  const store = new CountingObjectStore(new MemoryObjectStore());
  const table = await oneTable(store);
  const cache = new BlockCache<CachedBlock>(cacheBytes);
  // The index is handed over, so every ranged get counted below is a data block read.
  const reader = new SstReader(table.meta, tableObjectKey('kv', table.meta.id), store, cache, table.index);
  store.reset();
  return { store, reader, cache, blocks: table.index.blocks.offsets.length, table };
}

const reads = (store: CountingObjectStore): number => store.snapshot().rangedGet.calls;

describe('SstReader: loads in flight', () => {
  it('two concurrent misses of one block cause one store read', async () => {
    const { store, reader } = await setup();
    // key 0 and key 1 share the first block.
    const [a, b] = await Promise.all([reader.get(key(0)), reader.get(key(1))]);
    expect(a?.value).toEqual(value(0));
    expect(b?.value).toEqual(value(1));
    expect(reads(store)).toBe(1);
  });

  it('shares the read even with the cache off, and then forgets the block', async () => {
    const { store, reader, cache } = await setup(0);
    await Promise.all([reader.get(key(0)), reader.get(key(1)), reader.get(key(2))]);
    expect(reads(store)).toBe(1);
    expect(cache.loadingCount).toBe(0);
    await reader.get(key(0));
    expect(reads(store)).toBe(2);
  });

  it('concurrent misses of different blocks read each block once', async () => {
    const { store, reader, table } = await setup();
    // The first two keys of block 50, and one key each of blocks 0 and 120.
    const first = (b: number): Uint8Array => table.index.blocks.firstKeys[b];
    const second = decodeBlockBody(table.warm[50].body, 'test').keys[1];
    expect(table.warm.length).toBeGreaterThan(120);
    await Promise.all([reader.get(first(50)), reader.get(second), reader.get(first(0)), reader.get(first(120))]);
    expect(reads(store)).toBe(3);
  });

  it('a failed load is forgotten: every waiter sees the failure and the next miss reads again', async () => {
    const memory = new MemoryObjectStore();
    const faulty = new FaultyObjectStore(memory);
    const table = await oneTable(faulty);
    const counting = new CountingObjectStore(faulty);
    const cache = new BlockCache<CachedBlock>(1024 * 1024);
    const reader = new SstReader(table.meta, tableObjectKey('kv', 't1'), counting, cache, table.index);
    faulty.addRule({ type: 'fail', ops: ['get'] });
    const results = await Promise.allSettled([reader.get(key(0)), reader.get(key(1))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(counting.snapshot().rangedGet.calls).toBe(1);
    expect(cache.loadingCount).toBe(0);
    expect((await reader.get(key(1)))?.value).toEqual(value(1));
    expect(counting.snapshot().rangedGet.calls).toBe(2);
  });

  it("a block evicted while loading (its table was deleted) is not cached when the load lands", async () => {
    const { reader, cache } = await setup();
    const pending = reader.get(key(0));
    for (let i = 0; i < 10 && cache.loadingCount === 0; i++) await Promise.resolve();
    expect(cache.loadingCount).toBe(1);
    cache.evictPrefix('t1:');
    await pending;
    expect(cache.usedBytes).toBe(0);
  });
});

describe('SstReader: read-ahead', () => {
  async function walk(reader: SstReader, fillCache: boolean): Promise<number> {
    let n = 0;
    for await (const e of reader.iterate(undefined, false, fillCache)) {
      expect(e.key).toEqual(key(n));
      n++;
    }
    return n;
  }

  it('a full walk reads many blocks per store read and caches them all', async () => {
    const { store, reader, cache, blocks } = await setup();
    expect(blocks).toBeGreaterThan(100);
    expect(await walk(reader, true)).toBe(KEYS);
    // 2, 4, 8, ... blocks per read, up to the read-ahead limit.
    expect(reads(store)).toBeLessThanOrEqual(10);
    expect(cache.usedBytes).toBeGreaterThan(0);
    store.reset();
    expect(await walk(reader, true)).toBe(KEYS);
    expect(reads(store)).toBe(0);
  });

  it('a walk that must not fill the cache (compaction) still reads ahead, and leaves nothing cached', async () => {
    const { store, reader, cache, blocks } = await setup();
    expect(await walk(reader, false)).toBe(KEYS);
    expect(reads(store)).toBeLessThanOrEqual(10);
    expect(reads(store)).toBeLessThan(blocks);
    expect(cache.usedBytes).toBe(0);
  });

  it('short iterations that continue where the last one stopped read ahead too (a claim cursor)', async () => {
    const { store, reader } = await setup();
    // Each pass takes 10 entries from where the previous one stopped, as a claim scan does.
    for (let from = 0; from < KEYS; from += 10) {
      let n = 0;
      for await (const e of reader.iterate(key(from), false, true)) {
        expect(e.key).toEqual(key(from + n));
        if (++n === 10) break;
      }
    }
    expect(reads(store)).toBeLessThanOrEqual(12);
  });

  it('random point reads fetch exactly their own block', async () => {
    const { store, reader, cache } = await setup();
    const picks = [1500, 20, 900, 300, 1990, 640];
    for (const i of picks) expect((await reader.get(key(i)))?.value).toEqual(value(i));
    expect(reads(store)).toBe(picks.length);
    expect(store.snapshot().rangedGet.bytes).toBeLessThan(picks.length * 300);
    expect(cache.usedBytes).toBeGreaterThan(0);
  });

  it('a read-ahead stops at a block that is already cached: no byte is read twice', async () => {
    const { store, reader, table } = await setup();
    const { offsets, lengths } = table.index.blocks;
    await reader.get(table.index.blocks.firstKeys[10]); // caches block 10
    expect(store.snapshot().rangedGet.bytes).toBe(lengths[10]);
    store.reset();
    expect(await walk(reader, true)).toBe(KEYS);
    const dataBytes = offsets[offsets.length - 1] + lengths[lengths.length - 1];
    expect(store.snapshot().rangedGet.bytes).toBe(dataBytes - lengths[10]);
  });
});
