/**
 * Shared pieces of the benchmark harness: the Benchmark shape, result output, timing helpers,
 * temporary directories, and object-store factories by store name.
 *
 * Output contract: every result is ONE JSON object on ONE line of stdout
 * (`{"bench":"kv.commit","store":"fs","metric":"ratio_64","value":12.3,"unit":"x", ...}`);
 * anything else (progress, notes) goes to stderr through `log`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { MemoryObjectStore } from '../src/core/objects/memory-store.js';
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';

export type StoreName = 'memory' | 'fs' | 'idb' | 'opfs' | 's3';

/** A benchmark (or a group sharing setup): run once per store it supports. */
export interface Benchmark {
  /** Dotted name, e.g. `kv.commit`; the CLI filter matches name prefixes. */
  readonly name: string;
  /** Stores this benchmark runs on, in order. */
  readonly stores: readonly StoreName[];
  run(ctx: BenchContext): Promise<void>;
}

export interface BenchContext {
  readonly bench: string;
  readonly store: StoreName;
  /** A fresh, empty store of this kind (cleaned up at the end of the run). */
  freshStore(label?: string): Promise<StoreHandle>;
  /** Emits one result line; `fields` are extra parameters. */
  emit(metric: string, value: number, unit: string, fields?: Record<string, unknown>): void;
  /** Values shared between benchmarks of one run on the same store (see `shared`). */
  readonly shared: SharedCache;
}

/** An object store plus a way to get a fresh handle on the same data (a "restart"). */
export interface StoreHandle {
  readonly name: StoreName;
  readonly store: ObjectStore;
  /** A new store instance over the same data (the memory store returns itself). */
  reopen(): ObjectStore;
  /** An independent copy of the data in a new store of the same kind (cleaned up at the end of the run). */
  clone(label?: string): Promise<StoreHandle>;
  /** Removes the data (idempotent). */
  dispose(): Promise<void>;
}

// ---- output ------------------------------------------------------------------------------------

export interface BenchRecord {
  bench: string;
  store: string;
  metric: string;
  value: number;
  unit: string;
  [field: string]: unknown;
}

export function emit(record: BenchRecord): void {
  const value = Number.isFinite(record.value) ? round(record.value) : record.value;
  process.stdout.write(`${JSON.stringify({ ...record, value })}\n`);
}

/** Progress and notes: stderr only, so stdout stays machine-readable. */
export function log(...parts: unknown[]): void {
  process.stderr.write(`${parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' ')}\n`);
}

/** Three significant digits for large values, up to 3 decimals for small ones. */
export function round(v: number): number {
  if (v === 0 || !Number.isFinite(v)) return v;
  const abs = Math.abs(v);
  if (abs >= 1000) return Math.round(v);
  if (abs >= 100) return Math.round(v * 10) / 10;
  if (abs >= 1) return Math.round(v * 100) / 100;
  return Number(v.toPrecision(3));
}

// ---- timing ------------------------------------------------------------------------------------

export const now = (): number => performance.now();

/** Runs `fn` and returns its result with the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ result: T; ms: number }> {
  const start = now();
  const result = await fn();
  return { result, ms: now() - start };
}

/** The p-th percentile (0..100) of `values` (nearest rank); NaN when empty. Does not mutate. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * Runs `workers` concurrent loops of `op` until `durationMs` has passed (each loop starts no new
 * op after the deadline; ops in flight finish and count). Returns ops/s over the real elapsed
 * time and per-op latencies in ms.
 */
export async function runFor(
  durationMs: number,
  workers: number,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<{ ops: number; ms: number; perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  const start = now();
  const deadline = start + durationMs;
  let ops = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; now() < deadline; i++) {
        const t = now();
        await op(w, i);
        latencies.push(now() - t);
        ops++;
      }
    }),
  );
  const ms = now() - start;
  return { ops, ms, perSecond: (ops * 1000) / ms, latencies };
}

/** Benchmark run length for duration-based loops; BENCH_DURATION_MS overrides (default 3000). */
export function durationMs(): number {
  const v = Number(process.env.BENCH_DURATION_MS);
  return Number.isFinite(v) && v > 0 ? v : 3000;
}

// ---- heap --------------------------------------------------------------------------------------

let gcFn: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

/** A full garbage collection (works even when node was started without --expose-gc). */
export function fullGc(): void {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  // Twice: the first pass can leave weakly held and finalizable objects for the next one.
  gcFn();
  gcFn();
}

/**
 * Memory after a full GC, in MiB: `heapUsed` (the V8 heap; what the heap metrics report) and
 * `arrayBuffers` (ArrayBuffer backing stores, which V8 keeps outside the heap: most Uint8Array
 * payloads live there, so keys and values held by the engine count here, not in heapUsed).
 */
export async function memoryMiB(): Promise<{ heapUsed: number; arrayBuffers: number; rss: number }> {
  // Let pending promise callbacks and timers settle so they do not pin garbage.
  await new Promise((r) => setTimeout(r, 50));
  fullGc();
  const m = process.memoryUsage();
  const mib = (n: number) => n / (1024 * 1024);
  return { heapUsed: mib(m.heapUsed), arrayBuffers: mib(m.arrayBuffers), rss: mib(m.rss) };
}

// ---- temp dirs and stores ----------------------------------------------------------------------

const cleanups: (() => Promise<void> | void)[] = [];

/** Registers cleanup to run at the end of the run (also on SIGINT). */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

export async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (e) {
      log(`cleanup failed: ${(e as Error).message}`);
    }
  }
}

/** A new directory under BENCH_TMPDIR (default: the OS temp dir), removed by cleanupAll(). */
export function tempDir(label: string): string {
  const base = process.env.BENCH_TMPDIR ?? tmpdir();
  const dir = mkdtempSync(path.join(base, `taquba-bench-${label.replace(/[^a-z0-9.-]/gi, '_')}-`));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  onCleanup(remove);
  return dir;
}

/** Store factories by name. Later issues add idb / opfs / s3 here. */
const storeFactories: Partial<Record<StoreName, (label: string) => Promise<StoreHandle>>> = {
  memory: async () => memoryHandle(new MemoryObjectStore()),
  fs: async (label) => fsHandle(tempDir(label)),
};

function memoryHandle(store: MemoryObjectStore): StoreHandle {
  const handle: StoreHandle = {
    name: 'memory',
    store,
    reopen: () => store,
    async clone() {
      const copy = new MemoryObjectStore();
      for await (const info of store.list('')) {
        const obj = await store.get(info.key);
        if (obj) await copy.put(info.key, obj.data);
      }
      return memoryHandle(copy);
    },
    dispose: async () => undefined,
  };
  return handle;
}

function fsHandle(root: string): StoreHandle {
  return {
    name: 'fs',
    store: new FileSystemObjectStore({ root }),
    reopen: () => new FileSystemObjectStore({ root }),
    async clone(label = 'clone') {
      const copy = tempDir(label);
      // A copy is a new store: the writer locks and temp files of the original stay behind.
      cpSync(root, copy, { recursive: true, filter: (src) => !/[\\/]\.(locks|tmp)$/.test(src) });
      return fsHandle(copy);
    },
    dispose: async () => rmSync(root, { recursive: true, force: true }),
  };
}

export function availableStores(): StoreName[] {
  return Object.keys(storeFactories) as StoreName[];
}

export async function createStore(name: StoreName, label = 'store'): Promise<StoreHandle> {
  const factory = storeFactories[name];
  if (!factory) throw new Error(`no store factory for "${name}" in this harness`);
  // No cleanup hook holding the handle: that would keep a memory store's data alive until the end
  // of the run. Factories register their own (path-only) cleanups; callers dispose early.
  return factory(label);
}

// ---- shared values -----------------------------------------------------------------------------

/**
 * Lazily built values shared between benchmarks on the same store within one run (e.g. the
 * 1M-key dataset). The runner disposes everything when it moves to the next store, so only one
 * store's shared data is alive at a time (heap measurements stay honest).
 */
export class SharedCache {
  private readonly values = new Map<string, { value: Promise<unknown>; dispose?: (v: unknown) => Promise<void> | void }>();

  get<T>(key: string, build: () => Promise<T>, dispose?: (v: T) => Promise<void> | void): Promise<T> {
    let hit = this.values.get(key);
    if (!hit) {
      hit = { value: build(), dispose: dispose as ((v: unknown) => Promise<void> | void) | undefined };
      this.values.set(key, hit);
      hit.value.catch(() => this.values.delete(key));
    }
    return hit.value as Promise<T>;
  }

  async clear(): Promise<void> {
    const entries = [...this.values.values()];
    this.values.clear();
    for (const e of entries) {
      const v = await e.value.catch(() => undefined);
      if (v !== undefined) await e.dispose?.(v);
    }
  }
}
