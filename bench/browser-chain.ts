/**
 * browser.chain: the workflow.chain workload (bench/workflow-chain.ts: RUNS runs of STEPS steps,
 * 100-byte payloads forwarded step to step, 16 steps at a time, a warm-up pass first) inside a
 * dedicated module worker in headless Chromium with a persistent profile (IndexedDB and OPFS on
 * disk, not in memory as in an incognito context), over stores `idb` (IndexedDbObjectStore,
 * strict durability) and `opfs` (OpfsObjectStore with sync access handles).
 *
 *   steps_per_s      steps completed per second (worker phase); one durable ack per step
 *   runs_per_s       runs completed per second (worker phase)
 *   raw_puts_per_s   the store's own sequential durable puts of 100-byte objects, same worker
 *
 * This one file is both sides: in Node it is the benchmark (starts vite's dev server on a fixed
 * port so the origin, and so the profile's storage, stays the same; launches Chromium with
 * `launchPersistentContext` on a temporary profile; opens a page; starts this file as a module
 * worker); inside the worker it runs the workload and posts the numbers back. Node-only modules
 * are imported dynamically with non-literal specifiers so vite leaves them out of the worker.
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { CONCURRENCY, PAYLOAD_BYTES, STEPS, countAcks, quiet, runChain } from './chain-workload.js';
import type { BenchContext, Benchmark } from './harness.js';
import { openStore, type BrowserStore } from './browser-stores.js';

const RUNS = 1500;
const WARMUP_RUNS = 500;
/** Fixed, so the origin (and the persistent profile's storage for it) is the same on every run. */
const PORT = 5219;


interface WorkerRequest {
  store: BrowserStore;
  durationMs: number;
}

interface WorkerResult {
  submitMs: number;
  workMs: number;
  raw: { ops: number; ms: number; perSecond: number; p50: number };
  userAgent: string;
}

// ---- worker side --------------------------------------------------------------------------------

const now = (): number => performance.now();



async function rawPuts(store: ObjectStore, ms: number): Promise<WorkerResult['raw']> {
  const v = new Uint8Array(PAYLOAD_BYTES).fill(7);
  const put = (i: number) => store.put(`raw/${String(i).padStart(12, '0')}`, v);
  for (let i = 0; i < 20; i++) await put(1e11 + i); // warm-up
  const latencies: number[] = [];
  const start = now();
  let ops = 0;
  while (now() < start + ms) {
    const t = now();
    await put(ops);
    latencies.push(now() - t);
    ops++;
  }
  const elapsed = now() - start;
  latencies.sort((a, b) => a - b);
  return { ops, ms: elapsed, perSecond: (ops * 1000) / elapsed, p50: latencies[Math.floor(latencies.length / 2)] ?? 0 };
}

async function workerRun(request: WorkerRequest): Promise<WorkerResult> {
  const handle = await openStore(request.store, 'chain');
  let timing: { submitMs: number; workMs: number };
  try {
    const queue = await Queue.open(handle.store, 'bench', { logger: quiet });
    try {
      const acks = countAcks(queue);
      await runChain(queue, acks, handle.store, WARMUP_RUNS, 'warm');
      timing = await runChain(queue, acks, handle.store, RUNS, 'run');
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
  const rawHandle = await openStore(request.store, 'raw');
  let raw: WorkerResult['raw'];
  try {
    raw = await rawPuts(rawHandle.store, request.durationMs);
  } finally {
    await rawHandle.dispose();
  }
  return { ...timing, raw, userAgent: navigator.userAgent };
}

interface WorkerScope {
  onmessage: ((event: { data: WorkerRequest }) => void) | null;
  postMessage(message: unknown): void;
}
const scope = globalThis as unknown as { WorkerGlobalScope?: unknown; document?: unknown } & WorkerScope;
if (typeof scope.WorkerGlobalScope !== 'undefined' && typeof scope.document === 'undefined') {
  scope.onmessage = (event) => {
    workerRun(event.data).then(
      (result) => scope.postMessage({ ok: true, result }),
      (e: unknown) => scope.postMessage({ ok: false, error: (e as Error)?.stack ?? String(e) }),
    );
  };
}

// ---- Node side ----------------------------------------------------------------------------------

/** Page script (a string, so the Node-side transpiler cannot inject helpers into it). */
const PAGE_SCRIPT = `(request) => new Promise((resolve, reject) => {
  const worker = new Worker('/bench/browser-chain.ts', { type: 'module' });
  worker.onmessage = (event) => { worker.terminate(); event.data.ok ? resolve(event.data.result) : reject(new Error(event.data.error)); };
  worker.onerror = (event) => { worker.terminate(); reject(new Error('worker error: ' + (event.message || 'failed to load'))); };
  worker.postMessage(request);
})`;

/** Hidden from vite's import analysis: these never load in the worker. */
const nodeImport = <T>(specifier: string): Promise<T> => import(/* @vite-ignore */ specifier) as Promise<T>;

async function run(ctx: BenchContext): Promise<void> {
  const store = ctx.store as BrowserStore;
  const fs = await nodeImport<typeof import('node:fs/promises')>('node:fs/promises');
  const os = await nodeImport<typeof import('node:os')>('node:os');
  const path = await nodeImport<typeof import('node:path')>('node:path');
  const url = await nodeImport<typeof import('node:url')>('node:url');
  const { createServer } = await nodeImport<typeof import('vite')>('vite');
  const { chromium } = await nodeImport<typeof import('playwright')>('playwright');
  const setup = await nodeImport<typeof import('../test/setup/chromium.js')>(url.pathToFileURL(path.resolve(url.fileURLToPath(import.meta.url), '../../test/setup/chromium.ts')).href);
  const harness = await nodeImport<typeof import('./harness.js')>(url.pathToFileURL(path.resolve(url.fileURLToPath(import.meta.url), '../harness.ts')).href);

  const root = path.resolve(url.fileURLToPath(import.meta.url), '../..');
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'error',
    clearScreen: false,
    server: { port: PORT, strictPort: true, host: '127.0.0.1', hmr: false, watch: null },
    optimizeDeps: { include: ['idb', '@msgpack/msgpack', 'sorted-btree'], entries: [] },
  });
  const profileDir = await fs.mkdtemp(path.join(os.tmpdir(), 'taquba-bench-profile-'));
  try {
    await server.listen();
    const { executablePath } = await setup.resolveChromium();
    const context = await chromium.launchPersistentContext(profileDir, { executablePath, args: [...setup.CHROMIUM_ARGS], headless: true });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`http://127.0.0.1:${PORT}/bench/README.md`);
      const request: WorkerRequest = { store, durationMs: harness.durationMs() };
      const r = (await page.evaluate(`(${PAGE_SCRIPT})(${JSON.stringify(request)})`)) as WorkerResult;
      const chrome = /Chrome\/([\d.]+)/.exec(r.userAgent)?.[1] ?? r.userAgent;
      const fields = { runs: RUNS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, concurrency: CONCURRENCY, duration_ms: Math.round(r.workMs), chromium: chrome };
      const stepsPerS = (RUNS * STEPS * 1000) / r.workMs;
      ctx.emit('runs_per_s', (RUNS * 1000) / r.workMs, 'runs/s', { ...fields, submit_per_s: Math.round((RUNS * 1000) / r.submitMs) });
      ctx.emit('steps_per_s', stepsPerS, 'steps/s', { ...fields, ratio_to_raw_puts: Math.round((stepsPerS / r.raw.perSecond) * 100) / 100 });
      ctx.emit('raw_puts_per_s', r.raw.perSecond, 'ops/s', { value_bytes: PAYLOAD_BYTES, ops: r.raw.ops, p50_ms: harness.round(r.raw.p50), chromium: chrome });
      harness.log(`  chain ${stepsPerS.toFixed(0)} steps/s in ${r.workMs.toFixed(0)} ms; submit ${((RUNS * 1000) / r.submitMs).toFixed(0)} runs/s; raw puts ${r.raw.perSecond.toFixed(0)}/s`);
    } finally {
      await context.close();
    }
  } finally {
    await server.close();
    await fs.rm(profileDir, { recursive: true, force: true });
  }
}

const benchmarks: Benchmark[] = [{ name: 'browser.chain', stores: ['idb', 'opfs'], run }];
export default benchmarks;
