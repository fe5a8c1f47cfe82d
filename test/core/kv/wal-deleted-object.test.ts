/**
 * A deleted WAL object is CORRUPT_DATA at open, also when it is not the newest: a writer stores
 * ids in order, so commits after a missing id prove it was stored and deleted. Found by the
 * simulator's damage runs (seed 300136): an opener that fenced first filled the hole with an
 * empty fence, and every later open lost the deleted commits without a word.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';

const PATH = 'db';

async function crashedWriter(store: MemoryObjectStore, commits: number): Promise<string[]> {
  const db = await KvDb.open(store, { path: PATH, wal: 'objects', memtableBytes: 1 << 20 });
  for (let i = 0; i < commits; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(`v${i}`) }]);
  // Never closed: a crash. Its WAL objects, one per commit, are what an opener replays.
  const keys: string[] = [];
  for await (const info of store.list(`${PATH}/wal/`)) keys.push(info.key);
  return keys.sort();
}

describe('a deleted WAL object', () => {
  it('in the middle of the run: CORRUPT_DATA naming it, and the open fills nothing', async () => {
    const store = new MemoryObjectStore();
    const wal = await crashedWriter(store, 8);
    const victim = wal.at(-4)!;
    await store.delete(victim);
    const e = await KvDb.open(store, { path: PATH, wal: 'objects' }).catch((err: unknown) => err);
    expect(isTaqubaError(e, 'CORRUPT_DATA'), String(e)).toBe(true);
    expect((e as { details: Record<string, unknown> }).details).toMatchObject({ object: victim, problem: 'wal_object_missing' });
    // The failed open plugged no fence into the hole: the next open sees the damage too.
    expect(await store.get(victim)).toBeUndefined();
    expect(isTaqubaError(await KvDb.open(store, { path: PATH, wal: 'objects' }).catch((err: unknown) => err), 'CORRUPT_DATA')).toBe(true);
  });

  it('with nothing missing, the same crashed writer reopens with every commit', async () => {
    const store = new MemoryObjectStore();
    await crashedWriter(store, 8);
    const db = await KvDb.open(store, { path: PATH, wal: 'objects' });
    for (let i = 0; i < 8; i++) expect(fromUtf8((await db.get(utf8(`k${i}`)))!)).toBe(`v${i}`);
    await db.close();
  });
});
