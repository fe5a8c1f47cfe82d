/**
 * Fresh tables start warm: a flush or compaction hands the tables it just stored (their index
 * and their first blocks) to the reader side, so the next reads of them cost no store round trip.
 * Guards the queue's claim latency: each claim used to read one cold block of a just-flushed
 * table.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { BlockCache } from '../../../src/core/kv/tables/block-cache.js';
import type { VersionedEntry } from '../../../src/core/kv/entry.js';
import { tableObjectKey } from '../../../src/core/kv/format.js';
import type { BuiltTable } from '../../../src/core/kv/tables/sst-builder.js';
import { decodeBlockBody, decodeIndex, type CachedBlock } from '../../../src/core/kv/tables/sst-format.js';
import { SstReader } from '../../../src/core/kv/tables/sst-reader.js';
import { writeSortedRun } from '../../../src/core/kv/tables/table-writer.js';
import { CountingObjectStore } from '../../../src/testing/counting-store.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';

const key = (i: number): Uint8Array => utf8(`key-${String(i).padStart(5, '0')}`);
const value = (i: number): Uint8Array => utf8(`value-${i}-${'x'.repeat(40)}`);

async function tableCount(store: CountingObjectStore): Promise<number> {
  let n = 0;
  for await (const _ of store.inner.list('kv/sst/')) n++;
  return n;
}

/** Reads every key by point get and by one full scan; returns the store reads that took. */
async function readAll(db: KvDb, store: CountingObjectStore, keys: number): Promise<number> {
  store.reset();
  for (let i = 0; i < keys; i++) expect(await db.get(key(i))).toEqual(value(i));
  let n = 0;
  for await (const _ of db.scan({ prefix: utf8('key-') })) n++;
  expect(n).toBe(keys);
  const c = store.snapshot();
  return c.get.calls + c.rangedGet.calls;
}

async function load(db: KvDb, keys: number): Promise<void> {
  for (let i = 0; i < keys; i += 50) {
    const ops = [];
    for (let j = i; j < Math.min(keys, i + 50); j++) ops.push({ type: 'put' as const, key: key(j), value: value(j) });
    await db.write(ops);
  }
  await db.whenIdle();
}

describe('table warming', () => {
  const engine = { memtableBytes: 8192, blockBytes: 256, maxRuns: 100 };

  it('serves a flushed table from the cache and the handed-over index: no store reads', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const db = await KvDb.open(store, { ...engine, blockCacheBytes: 4 * 1024 * 1024 });
    await load(db, 400);
    expect(await tableCount(store)).toBeGreaterThan(1);
    expect(await readAll(db, store, 400)).toBe(0);
    await db.close();
  });

  it('with the cache off the same reads go to the store (blocks are not kept anywhere else)', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const db = await KvDb.open(store, { ...engine, blockCacheBytes: 0 });
    await load(db, 400);
    expect(await tableCount(store)).toBeGreaterThan(1);
    const reads = await readAll(db, store, 400);
    expect(reads).toBeGreaterThan(0);
    // Only data blocks: the indexes of tables this writer wrote were handed over.
    expect(store.snapshot().rangedGet.calls).toBe(reads);
    await db.close();
  });

  it("serves a compaction's output from the cache: no store reads", async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const db = await KvDb.open(store, { ...engine, maxRuns: 2, blockCacheBytes: 4 * 1024 * 1024 });
    await load(db, 400);
    // Overwrite half the keys so the compaction has versions to drop, then let it settle.
    for (let i = 0; i < 400; i += 2) await db.write([{ type: 'put', key: key(i), value: value(i) }]);
    await db.whenIdle();
    expect(await tableCount(store)).toBeLessThanOrEqual(3);
    expect(await readAll(db, store, 400)).toBe(0);
    await db.close();
  });

  it('a reopened engine reads the same tables from the store (warming is in memory only)', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const db = await KvDb.open(store, { ...engine, blockCacheBytes: 4 * 1024 * 1024 });
    await load(db, 400);
    await db.close();
    const again = await KvDb.open(store, { ...engine, blockCacheBytes: 4 * 1024 * 1024 });
    expect(await readAll(again, store, 400)).toBeGreaterThan(0);
    await again.close();
  });
});

describe('writeSortedRun warming', () => {
  const entries = (n: number): VersionedEntry[] =>
    Array.from({ length: n }, (_, i) => ({ key: key(i), seq: i + 1, kind: 'put' as const, value: value(i) }));

  async function write(warmBytes: number, n = 300): Promise<{ store: MemoryObjectStore; tables: BuiltTable[] }> {
    const store = new MemoryObjectStore();
    const tables: BuiltTable[] = [];
    let id = 1;
    await writeSortedRun(store, 'kv', entries(n), { blockBytes: 256, targetBytes: 4096, allocateId: () => `t${id++}`, warmBytes, stored: (t) => tables.push(t) });
    return { store, tables };
  }

  it('hands over exactly the blocks and index a reader would load from the store', async () => {
    const { store, tables } = await write(1024 * 1024);
    expect(tables.length).toBeGreaterThan(1);
    for (const t of tables) {
      const stored = (await store.get(tableObjectKey('kv', t.meta.id)))!.data;
      const index = decodeIndex(stored.subarray(t.meta.indexOffset, t.meta.indexOffset + t.meta.indexLength), 'test');
      expect(t.index.blocks).toEqual(index);
      expect(t.warm.length).toBe(index.offsets.length);
      // A reader with an empty cache and no handed-over index reads the same entries.
      const reader = new SstReader(t.meta, tableObjectKey('kv', t.meta.id), store, new BlockCache<CachedBlock>(0));
      const read: VersionedEntry[] = [];
      for await (const e of reader.iterate(undefined, false, false)) read.push(e);
      const warmed = t.warm.map((s) => decodeBlockBody(s.body, 'test')).flatMap((b) => b.keys.map((k, i) => ({ key: k, seq: b.seqs[i], kind: b.kinds[i], value: b.values[i] })));
      expect(warmed).toEqual(read);
    }
  });

  it('stops at the budget: a prefix of the first table, nothing beyond', async () => {
    const { tables } = await write(1500);
    const first = tables[0];
    expect(first.warm.length).toBeGreaterThan(0);
    expect(first.warm.length).toBeLessThan(first.index.blocks.offsets.length);
    const bytes = first.warm.reduce((n, b) => n + b.bytes, 0);
    // The budget is checked before each block, so it is exceeded by at most one block.
    expect(bytes - first.warm[first.warm.length - 1].bytes).toBeLessThan(1500);
    for (const t of tables.slice(1)) expect(t.warm).toEqual([]);
  });

  it('keeps no blocks without a budget, but still hands over the index', async () => {
    const { tables } = await write(0);
    for (const t of tables) {
      expect(t.warm).toEqual([]);
      expect(t.index.blocks.offsets.length).toBeGreaterThan(0);
    }
  });
});

describe('writeSortedRun slicing', () => {
  // A table write is background work: it must let timers and I/O callbacks run while it builds,
  // or every claim and commit waits behind it.
  const entries = (n: number): VersionedEntry[] =>
    Array.from({ length: n }, (_, i) => ({ key: key(i), seq: i + 1, kind: 'put' as const, value: value(i) }));

  async function ticksDuring(source: Iterable<VersionedEntry> | AsyncIterable<VersionedEntry>): Promise<number> {
    let ticks = 0;
    let done = false;
    const tick = (): void => {
      if (done) return;
      ticks++;
      setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    let id = 1;
    await writeSortedRun(new MemoryObjectStore(), 'kv', source, { blockBytes: 256, targetBytes: Number.POSITIVE_INFINITY, allocateId: () => `t${id++}` });
    done = true;
    return ticks;
  }

  it('lets timers run while it builds a table from a memtable', async () => {
    expect(await ticksDuring(entries(5000))).toBeGreaterThanOrEqual(5);
  });

  it('lets timers run while it builds from an async source that never waits (a cached compaction input)', async () => {
    async function* source(): AsyncGenerator<VersionedEntry> {
      yield* entries(5000);
    }
    expect(await ticksDuring(source())).toBeGreaterThanOrEqual(5);
  });
});
