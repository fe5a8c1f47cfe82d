/**
 * The shared large data set of kv.scan, kv.memory and kv.open: N keys (default 1M, BENCH_KEYS
 * overrides) of 16 bytes with 100-byte values, written through large non-durable batches in a
 * scattered key order, flushed, and cleanly closed. Built once per store per run; consumers
 * work on copies (`checkout`).
 */
import { KvDb } from '../src/core/kv/index.js';
import { log, now, type BenchContext, type StoreHandle } from './harness.js';

export const VALUE_BYTES = 100;
export const KEY_BYTES = 16;
const BATCH = 10_000;
const enc = new TextEncoder();

export function datasetKeys(): number {
  const v = Number(process.env.BENCH_KEYS);
  return Number.isInteger(v) && v > 0 ? v : 1_000_000;
}

/** Metric suffix for a key count: `1m`, `250k`, `1234`. */
export function countSuffix(n: number): string {
  if (n % 1_000_000 === 0) return `${n / 1_000_000}m`;
  if (n % 1000 === 0) return `${n / 1000}k`;
  return String(n);
}

/** The i-th key: `k` + 15 digits. */
export function keyOf(i: number): Uint8Array {
  return enc.encode(`k${String(i).padStart(KEY_BYTES - 1, '0')}`);
}

export function valueOf(i: number): Uint8Array {
  const v = new Uint8Array(VALUE_BYTES);
  for (let j = 0; j < VALUE_BYTES; j++) v[j] = (i + j * 13) & 0xff;
  return v;
}

export interface Dataset {
  /** The pristine data set: never open an engine on it, use `checkout`. */
  readonly handle: StoreHandle;
  readonly keys: number;
  /** Write + flush + close of the whole set, ms. */
  readonly loadMs: number;
}

/** Writes the data set into a fresh store: batches of 10k puts, durable: false, flushed per batch. */
async function build(ctx: BenchContext, keys: number): Promise<Dataset> {
  const handle = await ctx.freshStore('dataset');
  log(`  building the ${keys}-key data set on ${ctx.store} ...`);
  const start = now();
  const db = await KvDb.open(handle.store);
  // A stride coprime with `keys` scatters consecutive writes over the whole key range, so every
  // memtable (and table) spans all keys and scans really merge.
  let stride = Math.floor(keys * 0.6180339887) | 1;
  while (gcd(stride, keys) !== 1) stride += 2;
  let nextReport = now() + 5000;
  for (let base = 0; base < keys; base += BATCH) {
    const ops = [];
    for (let i = base; i < Math.min(keys, base + BATCH); i++) {
      const k = (i * stride) % keys;
      ops.push({ type: 'put' as const, key: keyOf(k), value: valueOf(k) });
    }
    await db.write(ops, { durable: false });
    await db.flush();
    // Yield to the event loop once per batch, as any application doing I/O would. With the memory
    // store every engine step settles in microtasks, and without this yield the engine's
    // background table flushes advance only a few entries per batch (see bench/README.md).
    await new Promise((r) => setImmediate(r));
    if (now() > nextReport) {
      log(`  ... ${base + BATCH} keys, ${((now() - start) / 1000).toFixed(1)} s`);
      nextReport = now() + 5000;
    }
  }
  await db.flush();
  await db.close();
  const loadMs = now() - start;
  log(`  data set built in ${(loadMs / 1000).toFixed(1)} s`);
  return { handle, keys, loadMs };
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The data set of this run on ctx.store (built on first use; dropped when the run moves on). */
export function dataset(ctx: BenchContext): Promise<Dataset> {
  const keys = datasetKeys();
  return ctx.shared.get(`kv.dataset.${keys}`, () => build(ctx, keys), (d) => d.handle.dispose());
}

/**
 * A private copy of the data set exactly as the writer left it at its clean close (opening an
 * engine changes the stored state, so every consumer works on its own copy). Dispose it after use.
 */
export function checkout(data: Dataset, label: string): Promise<StoreHandle> {
  return data.handle.clone(label);
}
