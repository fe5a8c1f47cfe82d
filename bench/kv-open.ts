/**
 * kv.open: time of `KvDb.open` (as writer) on a store holding the shared N-key data set (default
 * 1M), through a new store instance (a process restart).
 *
 *   open_ms_<n>     first open after the loading writer's clean close (median of 5, each on a
 *                   fresh copy of that state; this open replays whatever the writer left in the WAL)
 *   reopen_ms_<n>   a second open right after the first one closed cleanly (median of 5)
 */
import { KvDb } from '../src/core/kv/index.js';
import { log, median, now, type BenchContext, type Benchmark } from './harness.js';
import { checkout, countSuffix, dataset } from './kv-dataset.js';

const RUNS = 5;

async function timeOpen(handle: { reopen(): import('../src/core/objects/object-store.js').ObjectStore }): Promise<number> {
  const store = handle.reopen();
  const start = now();
  const db = await KvDb.open(store);
  const ms = now() - start;
  await db.close();
  return ms;
}

async function run(ctx: BenchContext): Promise<void> {
  const data = await dataset(ctx);
  const first: number[] = [];
  const second: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const copy = await checkout(data, 'open');
    try {
      first.push(await timeOpen(copy));
      second.push(await timeOpen(copy));
    } finally {
      await copy.dispose();
    }
  }
  const suffix = countSuffix(data.keys);
  const stats = (t: number[]) => ({ keys: data.keys, min_ms: Math.min(...t), max_ms: Math.max(...t), runs: RUNS });
  ctx.emit(`open_ms_${suffix}`, median(first), 'ms', stats(first));
  ctx.emit(`reopen_ms_${suffix}`, median(second), 'ms', stats(second));
  log(`  first opens: ${first.map((t) => t.toFixed(0)).join(', ')} ms; second opens: ${second.map((t) => t.toFixed(0)).join(', ')} ms`);
}

const benchmarks: Benchmark[] = [{ name: 'kv.open', stores: ['memory', 'fs'], run }];
export default benchmarks;
