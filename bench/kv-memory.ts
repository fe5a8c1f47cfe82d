/**
 * kv.memory: heap after writing the shared N-key data set (default 1M 100-byte values), closing
 * that engine, dropping it, and opening a fresh KvDb on (a copy of) the same stored state.
 *
 *   heap_mib_<n>              process heapUsed after a full GC with the reopened engine alive
 *   heap_mib_<n>_after_reads  the same after scanning 100k keys and 10k point reads (caches warm)
 *
 * Fields: baseline_mib (heapUsed just before the open, same process), engine_mib (the
 * difference), array_buffers_mib / engine_array_buffers_mib (ArrayBuffer backing stores, kept
 * outside the V8 heap: byte payloads such as memtable keys and values count there), rss_mib.
 * With the memory store the stored objects live in this process too (the pristine data set and
 * the copy under test, mostly in array buffers): `includes_store: true`; read the engine_ fields.
 */
import { KvDb } from '../src/core/kv/index.js';
import { log, memoryMiB, type BenchContext, type Benchmark } from './harness.js';
import { checkout, countSuffix, dataset, keyOf } from './kv-dataset.js';

const SCAN_KEYS = 100_000;
const GETS = 10_000;

async function run(ctx: BenchContext): Promise<void> {
  const data = await dataset(ctx);
  const suffix = countSuffix(data.keys);
  const copy = await checkout(data, 'memory');
  try {
    const base = await memoryMiB();
    const fields = (m: typeof base) => ({
      keys: data.keys,
      baseline_mib: base.heapUsed,
      engine_mib: m.heapUsed - base.heapUsed,
      array_buffers_mib: m.arrayBuffers,
      engine_array_buffers_mib: m.arrayBuffers - base.arrayBuffers,
      rss_mib: m.rss,
      ...(ctx.store === 'memory' ? { includes_store: true } : {}),
    });
    const db = await KvDb.open(copy.store);
    try {
      const opened = await memoryMiB();
      ctx.emit(`heap_mib_${suffix}`, opened.heapUsed, 'MiB', fields(opened));

      let n = 0;
      for await (const _ of db.scan({ limit: SCAN_KEYS })) n++;
      for (let i = 0; i < GETS; i++) {
        const k = Math.floor((i * 0.6180339887 * data.keys) % data.keys);
        if (!(await db.get(keyOf(k)))) throw new Error(`key ${k} missing`);
      }
      const afterReads = await memoryMiB();
      ctx.emit(`heap_mib_${suffix}_after_reads`, afterReads.heapUsed, 'MiB', { ...fields(afterReads), scanned: n, gets: GETS });
      log(
        `  heapUsed / arrayBuffers MiB: baseline ${base.heapUsed.toFixed(1)} / ${base.arrayBuffers.toFixed(1)}, ` +
          `after open ${opened.heapUsed.toFixed(1)} / ${opened.arrayBuffers.toFixed(1)}, after reads ${afterReads.heapUsed.toFixed(1)} / ${afterReads.arrayBuffers.toFixed(1)}`,
      );
    } finally {
      await db.close();
    }
  } finally {
    await copy.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'kv.memory', stores: ['memory', 'fs'], run }];
export default benchmarks;
