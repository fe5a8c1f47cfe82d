/**
 * kv.scan: keys/s of a full scan over the shared N-key data set (default 1M), on a freshly
 * opened engine (a copy of the data set as its writer left it) so entries come from the stored
 * tables plus the replayed WAL tail.
 *
 *   keys_per_s            full scan, default options (blocks go through the block cache)
 *   raw_block_gets_per_s  the store's own sequential 4 KiB ranged gets over the same table objects
 *   load_keys_per_s       building the data set: 10k-put non-durable batches, flush, close
 */
import { KvDb } from '../src/core/kv/index.js';
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { log, now, type BenchContext, type Benchmark } from './harness.js';
import { checkout, countSuffix, dataset } from './kv-dataset.js';

const BLOCK_BYTES = 4096;

/** Sequential ranged gets of BLOCK_BYTES over the table objects, for up to `ms`. */
async function rawBlockGets(store: ObjectStore, ms: number): Promise<{ gets: number; ms: number }> {
  const tables: { key: string; size: number }[] = [];
  for await (const info of store.list('kv/sst/')) tables.push({ key: info.key, size: info.size });
  const start = now();
  let gets = 0;
  outer: for (const t of tables) {
    for (let offset = 0; offset < t.size; offset += BLOCK_BYTES) {
      await store.get(t.key, { range: { offset, length: BLOCK_BYTES } });
      gets++;
      if (now() - start > ms) break outer;
    }
  }
  return { gets, ms: now() - start };
}

async function run(ctx: BenchContext): Promise<void> {
  const data = await dataset(ctx);
  ctx.emit('load_keys_per_s', (data.keys * 1000) / data.loadMs, 'keys/s', { keys: data.keys, ms: Math.round(data.loadMs) });
  const copy = await checkout(data, 'scan');
  try {
    const db = await KvDb.open(copy.store);
    try {
      const start = now();
      let n = 0;
      for await (const _ of db.scan()) n++;
      const ms = now() - start;
      if (n !== data.keys) throw new Error(`scan saw ${n} keys, expected ${data.keys}`);
      ctx.emit('keys_per_s', (n * 1000) / ms, 'keys/s', { keys: n, ms: Math.round(ms), size: countSuffix(n) });
      log(`  scanned ${n} keys in ${ms.toFixed(0)} ms`);
    } finally {
      await db.close();
    }
    const raw = await rawBlockGets(copy.reopen(), 2000);
    ctx.emit('raw_block_gets_per_s', (raw.gets * 1000) / raw.ms, 'ops/s', { block_bytes: BLOCK_BYTES, gets: raw.gets, ms: Math.round(raw.ms) });
  } finally {
    await copy.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'kv.scan', stores: ['memory', 'fs'], run }];
export default benchmarks;
