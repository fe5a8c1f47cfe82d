/**
 * Scans answer synchronously from cached blocks: a table cursor returns entries (not promises)
 * while its blocks are cached, so a scan's only microtask turns are its own yields. Guards the
 * queue's claim latency in a busy process: every turn a scan takes lets all other queued
 * microtasks run first.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { BlockCache } from '../../../src/core/kv/tables/block-cache.js';
import type { VersionedEntry } from '../../../src/core/kv/entry.js';
import { tableObjectKey } from '../../../src/core/kv/format.js';
import type { BuiltTable } from '../../../src/core/kv/tables/sst-builder.js';
import { isSealed, type CachedBlock } from '../../../src/core/kv/tables/sst-format.js';
import { SstReader } from '../../../src/core/kv/tables/sst-reader.js';
import { writeSortedRun } from '../../../src/core/kv/tables/table-writer.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';

const key = (i: number): Uint8Array => utf8(`key-${String(i).padStart(5, '0')}`);
const value = (i: number): Uint8Array => utf8(`v${i}`);

let lastCache: BlockCache<CachedBlock> | undefined;

async function table(warm: boolean): Promise<SstReader> {
  const store = new MemoryObjectStore();
  const entries: VersionedEntry[] = Array.from({ length: 500 }, (_, i) => ({ key: key(i), seq: i + 1, kind: 'put' as const, value: value(i) }));
  const built: BuiltTable[] = [];
  await writeSortedRun(store, 'kv', entries, { blockBytes: 256, targetBytes: Number.POSITIVE_INFINITY, allocateId: () => 't7', warmBytes: warm ? 1 << 20 : 0, stored: (t) => built.push(t) });
  const cache = new BlockCache<CachedBlock>(1 << 20);
  const t = built[0];
  for (let i = 0; i < t.warm.length; i++) cache.set(`t7:${i}`, t.warm[i]);
  lastCache = cache;
  return new SstReader(t.meta, tableObjectKey('kv', 't7'), store, cache, warm ? t.index : undefined);
}

describe('TableCursor', () => {
  it('answers synchronously from cached blocks, from a start key to the end', async () => {
    const reader = await table(true);
    const cursor = reader.cursor(key(123), true, true);
    const seen: number[] = [];
    for (let step = cursor.next(); step !== undefined; step = cursor.next()) {
      expect(step).not.toBeInstanceOf(Promise);
      seen.push(Number((step as VersionedEntry).seq) - 1);
    }
    expect(seen).toEqual(Array.from({ length: 500 - 124 }, (_, i) => 124 + i));
  });

  it('returns promises while it must load the index and blocks, then the same entries', async () => {
    const reader = await table(false);
    const cursor = reader.cursor(key(10), false, true);
    const first = cursor.next();
    expect(first).toBeInstanceOf(Promise);
    expect((await first)?.key).toEqual(key(10));
    let n = 1;
    for (;;) {
      const step = cursor.next();
      const e = step instanceof Promise ? await step : step;
      if (e === undefined) break;
      expect(e.key).toEqual(key(10 + n));
      n++;
    }
    expect(n).toBe(490);
  });

  it('decodes a block the writer cached sealed on its first read, and caches it decoded', async () => {
    const reader = await table(true);
    const cache = lastCache!;
    expect(isSealed(cache.get('t7:0')!)).toBe(true);
    const before = cache.usedBytes;
    const first = reader.cursor(undefined, false, true).next();
    expect(first).not.toBeInstanceOf(Promise);
    expect((first as VersionedEntry).key).toEqual(key(0));
    expect(isSealed(cache.get('t7:0')!)).toBe(false);
    expect(isSealed(cache.get('t7:1')!)).toBe(true);
    expect(cache.usedBytes).toBeGreaterThan(before); // decoded blocks are charged their heap
  });

  it('ends at once for a start past the table', async () => {
    const reader = await table(true);
    expect(reader.cursor(utf8('zzz'), false, true).next()).toBeUndefined();
  });
});

describe('scan turns', () => {
  it('a scan over cached tables and memtables takes a few microtask turns per entry, not per layer', async () => {
    const store = new MemoryObjectStore();
    const db = await KvDb.open(store, { memtableBytes: 4096, blockBytes: 256, maxRuns: 100 });
    for (let i = 0; i < 600; i += 20) {
      await db.write(Array.from({ length: 20 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
    }
    await db.whenIdle();
    // Count the turns of a competing microtask chain while the scan runs.
    let turns = 0;
    let running = true;
    void (async () => {
      while (running) {
        turns++;
        await null;
      }
    })();
    let n = 0;
    for await (const _ of db.scan({ start: key(100), limit: 200 })) n++;
    running = false;
    expect(n).toBe(200);
    // Per-entry turns of the scan itself (an async generator's yield); async generators per
    // table and per run took over twice as many.
    expect(turns / n).toBeLessThan(4);
    await db.close();
  });
});

describe('sealed blocks and compaction reads', () => {
  it('a read that must not fill the cache decodes a sealed block without replacing it', async () => {
    const reader = await table(true);
    const cache = lastCache!;
    const before = cache.usedBytes;
    let n = 0;
    for await (const _ of reader.iterate(undefined, false, false)) n++;
    expect(n).toBe(500);
    expect(isSealed(cache.get('t7:0')!)).toBe(true);
    expect(cache.usedBytes).toBe(before);
  });
});
