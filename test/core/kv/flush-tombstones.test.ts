/**
 * A memtable flush leaves out the tombstones of keys that no table holds: such a tombstone hides
 * nothing. Queue keys (pending, claimed, job index) are mostly written and deleted within one
 * memtable, so without this their tombstones would fill tables and every compaction after them.
 * A tombstone of a key that an older table holds is kept.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { BlockCache } from '../../../src/core/kv/tables/block-cache.js';
import { tableObjectKey } from '../../../src/core/kv/format.js';
import { ManifestStore } from '../../../src/core/kv/manifest/manifest-store.js';
import type { CachedBlock } from '../../../src/core/kv/tables/sst-format.js';
import { SstReader } from '../../../src/core/kv/tables/sst-reader.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';

const value = utf8('v'.repeat(40));
// Small memtables so a few hundred writes flush; no compaction, so each flush stays its own run.
const engine = { memtableBytes: 4096, maxRuns: 1000 };

/** Every entry of every table, newest run first: `put:key` or `delete:key`. */
async function tableEntries(store: MemoryObjectStore): Promise<string[][]> {
  const manifest = (await new ManifestStore(store, 'kv').latest())!.data;
  const cache = new BlockCache<CachedBlock>(1 << 20);
  const runs: string[][] = [];
  for (const run of manifest.runs) {
    const entries: string[] = [];
    for (const meta of run) {
      for await (const e of new SstReader(meta, tableObjectKey('kv', meta.id), store, cache).iterate(undefined, false, false)) {
        entries.push(`${e.kind}:${fromUtf8(e.key)}`);
      }
    }
    runs.push(entries);
  }
  return runs;
}

async function fill(db: KvDb, tag: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await db.write([{ type: 'put', key: utf8(`${tag}-${String(i).padStart(4, '0')}`), value }]);
}

describe('memtable flush and tombstones', () => {
  it('drops tombstones of keys no table holds and keeps those that hide a stored version', async () => {
    const store = new MemoryObjectStore();
    const db = await KvDb.open(store, engine);
    await fill(db, 'old', 100); // flushed into tables
    await db.whenIdle();
    expect((await tableEntries(store)).flat()).toContain('put:old-0000');

    // Written and deleted before any flush: a transient key. And deletes of stored keys.
    for (let i = 0; i < 100; i++) {
      const k = utf8(`temp-${String(i).padStart(4, '0')}`);
      await db.write([{ type: 'put', key: k, value }]);
      await db.write([{ type: 'delete', key: k }]);
    }
    await db.write([{ type: 'delete', key: utf8('old-0000') }, { type: 'delete', key: utf8('old-0099') }]);
    await fill(db, 'new', 100); // pushes the deletes out in flushes
    await db.whenIdle();

    const runs = await tableEntries(store); // newest first
    const all = runs.flat();
    // A temp tombstone reaches a table only when a flush fell between its put and its delete,
    // so its put sits in an older run; all the other 100-odd temp keys left no trace.
    const tempTombstones = all.filter((e) => e.startsWith('delete:temp-'));
    expect(tempTombstones.length).toBeLessThan(10);
    for (const tombstone of tempTombstones) {
      const newest = runs.findIndex((run) => run.includes(tombstone));
      expect(runs.slice(newest + 1).flat()).toContain(tombstone.replace('delete:', 'put:'));
    }
    expect(all.filter((e) => e.startsWith('put:temp-')).length).toBe(tempTombstones.length);
    expect(all).toContain('delete:old-0000');
    expect(all).toContain('delete:old-0099');
    expect(await db.get(utf8('old-0000'))).toBeUndefined();
    expect(await db.get(utf8('old-0001'))).toEqual(value);
    expect(await db.get(utf8('temp-0005'))).toBeUndefined();
    await db.close();

    // The same after a reopen, when everything is read from tables and what the WAL still holds.
    const reopened = await KvDb.open(store, engine);
    expect(await reopened.get(utf8('old-0000'))).toBeUndefined();
    expect(await reopened.get(utf8('old-0099'))).toBeUndefined();
    expect(await reopened.get(utf8('old-0050'))).toEqual(value);
    let temps = 0;
    for await (const _ of reopened.scan({ prefix: utf8('temp-') })) temps++;
    expect(temps).toBe(0);
    await reopened.close();
  });

  it('keeps every tombstone when a table index cannot be read, and the flush still succeeds', async () => {
    const store = new MemoryObjectStore();
    const first = await KvDb.open(store, engine);
    await fill(first, 'old', 100);
    await first.close();

    // Reopened, the tables' indexes are not loaded yet; every read of a table fails meanwhile.
    const faulty = new FaultyObjectStore(store);
    const db = await KvDb.open(faulty, engine);
    const failing = faulty.addRule({ type: 'fail', ops: ['get'], keyPrefix: 'kv/sst/', count: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 50; i++) {
      const k = utf8(`temp-${String(i).padStart(4, '0')}`);
      await db.write([{ type: 'put', key: k, value }]);
      await db.write([{ type: 'delete', key: k }]);
    }
    await fill(db, 'new', 100);
    await db.whenIdle();
    expect(failing.fired).toBeGreaterThan(0);
    faulty.clearRules();

    const tempTombstones = (await tableEntries(store)).flat().filter((e) => e.startsWith('delete:temp-'));
    expect(tempTombstones.length).toBeGreaterThan(40); // kept: nothing could show they hide nothing
    expect(await db.get(utf8('temp-0007'))).toBeUndefined();
    expect(await db.get(utf8('old-0007'))).toEqual(value);
    await db.close();
  });
});
