/**
 * browser.latency: the workflow.latency workload (bench/workflow-latency.ts: a run of STEPS steps
 * forwarding a 100-byte payload, submitted alone and timed from `submit` to its committed end;
 * RUNS sequential runs after WARMUP runs, WARMUP_LANES at a time) in headless Chromium with a
 * persistent profile, over stores `idb` (IndexedDB, strict durability) and `opfs` (OPFS with sync
 * access handles; the WAL goes to an append log), measured from two sides:
 *
 *   worker_p50_ms, worker_p95_ms   in a module worker that holds both the runtime (a Queue and a
 *                                  WorkflowRuntime on the store) and the caller, as browser.chain
 *                                  does; the end is the commit of the last step's ack
 *   page_p50_ms, page_p95_ms       from the page through the public browser host: a worker calls
 *                                  `serveWorkflowRuntime({ store, name, runner })`, the page
 *                                  `connect(worker)`, subscribes to the run's events, calls
 *                                  `client.submit` and waits for the `terminal` event (sent once
 *                                  the run's ending has committed): the round trip an app sees
 *   put_floor_p50_ms               the floor: the p50 of 1 + STEPS sequential raw create-only puts of a
 *                                  WAL-sized object (a run needs at least one durable write for its
 *                                  submission and one per step's ack), taken in a worker on a store of
 *                                  the same kind right after each measured run, so both see the same
 *                                  disk (field `put_p50_ms`: one put)
 *   append_floor_p50_ms            OPFS only: the same count of appends to an append log, each flushed;
 *                                  there the WAL is such a log, so this is the floor that applies
 *   {worker,page}_p50_over_put_floor, {worker,page}_p50_over_append_floor (OPFS)
 *                                  p50 / floor: 1.0 would mean the runtime costs nothing beyond the
 *                                  durable writes it cannot avoid
 *
 * This one file is all three sides: in Node it is the benchmark (vite's dev server on a fixed port
 * so the origin and its storage stay the same, Chromium launched with `launchPersistentContext`
 * on a temporary profile, one page); as a module worker it runs the in-worker workload and the
 * floor puts; as a module worker started with `?host=<store>&name=<name>` it is the app's host
 * worker. Node-only modules are imported dynamically with non-literal specifiers so vite leaves
 * them out of the workers.
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import type { AppendLog } from '../src/core/objects/append-log.js';
import { Queue } from '../src/core/queue/index.js';
import { HEADER_STEP, NoopTerminalHook, StepOutcome, WorkflowRuntime, type Step } from '../src/core/workflow/index.js';
import { CountingObjectStore } from '../src/testing/counting-store.js';
import type { BenchContext, Benchmark } from './harness.js';
import { watchTerminalAcks } from './chain-workload.js';
import { openStore, type BrowserStore } from './browser-stores.js';

const RUNS = 50;
// As in workflow.latency: V8 reaches its steady state on the hot path only after a few thousand steps.
const WARMUP = 2000;
const WARMUP_LANES = 16;
const STEPS = 3;
const PAYLOAD_BYTES = 100;
// About what one of these runs' WAL records weighs (a claim and an ack of a 100-byte payload).
const RAW_PUT_BYTES = 1400;
/** Fixed, so the origin (and the persistent profile's storage for it) is the same on every run. */
const PORT = 5223;


/** What a worker of this file is asked to do (one request at a time). */
type WorkerRequest =
  | { readonly cmd: 'in-worker'; readonly store: BrowserStore }
  | { readonly cmd: 'floor-open'; readonly store: BrowserStore }
  | { readonly cmd: 'floor'; readonly run: number }
  | { readonly cmd: 'floor-close' };

interface Floor {
  readonly putsMs: number;
  readonly onePutMs: number;
  /** The same number of appends to an append log, when the store has them. */
  readonly appendsMs: number | null;
}

interface SideResult {
  readonly latencies: number[];
  readonly floors: Floor[];
}

interface InWorkerResult extends SideResult {
  readonly putsPerRun: number;
  readonly appendsPerRun: number;
  readonly userAgent: string;
}

// ---- worker side --------------------------------------------------------------------------------

const now = (): number => performance.now();
const quiet = { warn: (): void => undefined };

/** The workflow.latency step: forward the payload, succeed at the last step. */
const forward = async (step: Step) => (step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload));


/** A store for floor puts, and an append log on it when the store has them. */
class FloorProbe {
  private constructor(
    private readonly handle: { store: ObjectStore; dispose(): Promise<void> },
    private readonly log: AppendLog | undefined,
  ) {}

  static async open(kind: BrowserStore): Promise<FloorProbe> {
    const handle = await openStore(kind, 'floor');
    const log = await handle.store.appendLogs?.createLog('raw/append-log');
    return new FloorProbe(handle, log);
  }

  /** 1 + STEPS sequential create-only puts of a WAL-sized object (and as many appends). */
  async measure(run: number): Promise<Floor> {
    const bytes = new Uint8Array(RAW_PUT_BYTES).fill(3);
    let appendsMs: number | null = null;
    if (this.log) {
      const a0 = now();
      for (let p = 0; p <= STEPS; p++) await this.log.append(bytes);
      appendsMs = now() - a0;
    }
    let onePutMs = 0;
    const t0 = now();
    for (let p = 0; p <= STEPS; p++) {
      const p0 = now();
      await this.handle.store.put(`raw/${run}-${p}`, bytes, { ifNoneMatch: '*' });
      if (p === 0) onePutMs = now() - p0;
    }
    return { putsMs: now() - t0, onePutMs, appendsMs };
  }

  async close(): Promise<void> {
    await this.log?.close();
    await this.handle.dispose();
  }
}

/** Side (a): the runtime and the caller in this worker, as workflow.latency does in Node. */
async function inWorker(kind: BrowserStore): Promise<InWorkerResult> {
  const handle = await openStore(kind, 'latency');
  const floorProbe = await FloorProbe.open(kind);
  try {
    const store = new CountingObjectStore(handle.store);
    const queue = await Queue.open(store, 'bench', { logger: quiet });
    try {
      // The last step's ackWith resolving means the run's ending committed.
      const waiting = watchTerminalAcks(queue, (claim) => claim.job.headers[HEADER_STEP] === String(STEPS - 1));
      const runtime = new WorkflowRuntime(queue, handle.store, forward, new NoopTerminalHook(), { logger: quiet });
      const worker = runtime.spawn();
      console.log('in worker: started; warming up');
      const payload = new Uint8Array(PAYLOAD_BYTES).fill(1);
      const runOnce = async (runId: string): Promise<number> => {
        const ended = new Promise<void>((resolve) => waiting.set(runId, resolve));
        const t0 = now();
        await runtime.submit({ runId, input: payload });
        await ended;
        waiting.delete(runId);
        return now() - t0;
      };
      let warmed = 0;
      await Promise.all(
        Array.from({ length: WARMUP_LANES }, async () => {
          while (warmed < WARMUP) await runOnce(`warmup-${warmed++}`);
        }),
      );
      await queue.whenIdle(); // the warm-up's memtable flushes and compactions are not measured
      console.log('in worker: warmed up; measuring');
      const latencies: number[] = [];
      const floors: Floor[] = [];
      let puts = 0;
      let appends = 0;
      for (let i = 0; i < RUNS; i++) {
        const before = store.snapshot();
        latencies.push(await runOnce(`latency-${i}`));
        const after = store.snapshot();
        puts += after.put.calls - before.put.calls;
        appends += after.append.calls - before.append.calls;
        floors.push(await floorProbe.measure(i));
      }
      await worker.shutdown();
      return { latencies, floors, putsPerRun: puts / RUNS, appendsPerRun: appends / RUNS, userAgent: navigator.userAgent };
    } finally {
      await queue.close();
    }
  } finally {
    await floorProbe.close();
    await handle.dispose();
  }
}

interface WorkerScope {
  onmessage: ((event: { data: WorkerRequest }) => void) | null;
  postMessage(message: unknown): void;
  location: { href: string };
}

/** The plain worker: one request at a time, answered with `{ ok, result | error }`. */
function serveRequests(scope: WorkerScope): void {
  let probe: FloorProbe | undefined;
  const handle = async (request: WorkerRequest): Promise<unknown> => {
    switch (request.cmd) {
      case 'in-worker':
        return inWorker(request.store);
      case 'floor-open':
        probe = await FloorProbe.open(request.store);
        return null;
      case 'floor':
        if (!probe) throw new Error('floor before floor-open');
        return probe.measure(request.run);
      case 'floor-close':
        await probe?.close();
        probe = undefined;
        return null;
    }
  };
  scope.onmessage = (event) => {
    handle(event.data).then(
      (result) => scope.postMessage({ ok: true, result }),
      (e: unknown) => scope.postMessage({ ok: false, error: (e as Error)?.stack ?? String(e) }),
    );
  };
}

/** Side (b)'s worker: the app's host, configured as README "Browser hosting" shows. */
async function serveHost(kind: BrowserStore, name: string): Promise<void> {
  const { serveWorkflowRuntime } = await import('../src/browser/worker.js');
  serveWorkflowRuntime({ store: kind === 'idb' ? 'indexeddb' : 'opfs', name, runner: forward });
}

const scope = globalThis as unknown as { WorkerGlobalScope?: unknown; document?: unknown } & WorkerScope;
if (typeof scope.WorkerGlobalScope !== 'undefined' && typeof scope.document === 'undefined') {
  const params = new URL(scope.location.href).searchParams;
  const host = params.get('host');
  // The host is exposed only after its module loaded, so the page waits for this word before it connects.
  if (host === 'idb' || host === 'opfs') {
    serveHost(host, params.get('name') ?? 'bench-latency').then(
      () => scope.postMessage({ benchHost: 'ready' }),
      (e: unknown) => scope.postMessage({ benchHost: 'failed', error: (e as Error)?.stack ?? String(e) }),
    );
  }
  else serveRequests(scope);
}

// ---- Node side ----------------------------------------------------------------------------------

/**
 * Page scripts (strings, so the Node-side transpiler cannot inject helpers into them). `call`
 * sends one request to a worker of this file and resolves with its answer.
 */
const PAGE_HELPERS = `
  const call = (worker, request) => new Promise((resolve, reject) => {
    worker.onmessage = (event) => (event.data.ok ? resolve(event.data.result) : reject(new Error(event.data.error)));
    worker.onerror = (event) => reject(new Error('worker error: ' + (event.message || 'failed to load')));
    worker.postMessage(request);
  });`;

const IN_WORKER_SCRIPT = `async (request) => {
  ${PAGE_HELPERS}
  const worker = new Worker('/bench/browser-latency.ts', { type: 'module' });
  try {
    return await call(worker, { cmd: 'in-worker', store: request.store });
  } finally {
    worker.terminate();
  }
}`;

const FROM_PAGE_SCRIPT = `async (request) => {
  ${PAGE_HELPERS}
  const { connect } = await import('/src/browser/index.ts');
  const host = new Worker('/bench/browser-latency.ts?host=' + request.store + '&name=' + request.name, { type: 'module' });
  await new Promise((resolve, reject) => {
    const listen = (event) => {
      if (event.data?.benchHost === undefined) return;
      host.removeEventListener('message', listen);
      event.data.benchHost === 'ready' ? resolve() : reject(new Error('host worker failed: ' + event.data.error));
    };
    host.addEventListener('message', listen);
    host.onerror = (event) => reject(new Error('host worker error: ' + (event.message || 'failed to load')));
  });
  const client = connect(host, { persist: false });
  const floorWorker = new Worker('/bench/browser-latency.ts', { type: 'module' });
  try {
    await call(floorWorker, { cmd: 'floor-open', store: request.store });
    console.log('from the page: host ' + JSON.stringify(await client.info()) + '; warming up');
    const payload = new Uint8Array(${PAYLOAD_BYTES}).fill(1);
    const runOnce = async (runId) => {
      let ended;
      const terminal = new Promise((resolve) => (ended = resolve));
      const unsubscribe = client.subscribe((event) => { if (event.type === 'terminal') ended(event); }, { runId });
      const t0 = performance.now();
      await client.submit({ runId, input: payload });
      const event = await terminal;
      const ms = performance.now() - t0;
      unsubscribe();
      if (event.status !== 'succeeded') throw new Error('run ' + runId + ' ended ' + event.status + ': ' + event.error);
      return ms;
    };
    let warmed = 0;
    await Promise.all(Array.from({ length: ${WARMUP_LANES} }, async () => {
      while (warmed < ${WARMUP}) await runOnce('warmup-' + warmed++);
    }));
    console.log('from the page: warmed up; measuring');
    const latencies = [];
    const floors = [];
    for (let i = 0; i < ${RUNS}; i++) {
      latencies.push(await runOnce('latency-' + i));
      floors.push(await call(floorWorker, { cmd: 'floor', run: i }));
    }
    return { latencies, floors };
  } finally {
    await client.close();
    await call(floorWorker, { cmd: 'floor-close' }).catch(() => undefined);
    floorWorker.terminate();
  }
}`;

/** Hidden from vite's import analysis: these never load in a worker. */
const nodeImport = <T>(specifier: string): Promise<T> => import(/* @vite-ignore */ specifier) as Promise<T>;

async function run(ctx: BenchContext): Promise<void> {
  const store = ctx.store as BrowserStore;
  const fs = await nodeImport<typeof import('node:fs/promises')>('node:fs/promises');
  const os = await nodeImport<typeof import('node:os')>('node:os');
  const path = await nodeImport<typeof import('node:path')>('node:path');
  const url = await nodeImport<typeof import('node:url')>('node:url');
  const { createServer } = await nodeImport<typeof import('vite')>('vite');
  const { chromium } = await nodeImport<typeof import('playwright')>('playwright');
  const here = url.fileURLToPath(import.meta.url);
  const setup = await nodeImport<typeof import('../test/setup/chromium.js')>(url.pathToFileURL(path.resolve(here, '../../test/setup/chromium.ts')).href);
  const harness = await nodeImport<typeof import('./harness.js')>(url.pathToFileURL(path.resolve(here, '../harness.ts')).href);

  const server = await createServer({
    root: path.resolve(here, '../..'),
    configFile: false,
    logLevel: 'error',
    clearScreen: false,
    server: { port: PORT, strictPort: true, host: '127.0.0.1', hmr: false, watch: null },
    optimizeDeps: { include: ['idb', '@msgpack/msgpack', 'sorted-btree', 'comlink'], entries: [] },
  });
  const profileDir = await fs.mkdtemp(path.join(os.tmpdir(), 'taquba-bench-profile-'));
  try {
    await server.listen();
    const { executablePath } = await setup.resolveChromium();
    const context = await chromium.launchPersistentContext(profileDir, { executablePath, args: [...setup.CHROMIUM_ARGS], headless: true });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      // What goes wrong in the page or its workers goes to the log (a worker that fails to load would otherwise just never answer).
      page.on('pageerror', (e) => harness.log(`  [page error] ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning' || process.env.BENCH_BROWSER_CONSOLE) harness.log(`  [console.${m.type()}] ${m.text()}`);
      });
      await page.goto(`http://127.0.0.1:${PORT}/bench/README.md`);
      const inside = (await page.evaluate(`(${IN_WORKER_SCRIPT})(${JSON.stringify({ store })})`)) as InWorkerResult;
      const name = `bench-latency-${Date.now().toString(36)}`;
      const fromPage = (await page.evaluate(`(${FROM_PAGE_SCRIPT})(${JSON.stringify({ store, name })})`)) as SideResult;

      const chrome = /Chrome\/([\d.]+)/.exec(inside.userAgent)?.[1] ?? inside.userAgent;
      const fields = { runs: RUNS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, warmup_runs: WARMUP, chromium: chrome };
      const p50 = (values: readonly number[]): number => harness.percentile(values, 50);
      const floorOf = (side: SideResult) => ({
        puts: p50(side.floors.map((f) => f.putsMs)),
        onePut: p50(side.floors.map((f) => f.onePutMs)),
        appends: side.floors[0]?.appendsMs === null ? null : p50(side.floors.map((f) => f.appendsMs ?? 0)),
      });
      const sides = [
        { side: 'worker', result: inside, extra: { puts_per_run: inside.putsPerRun, appends_per_run: inside.appendsPerRun } },
        { side: 'page', result: fromPage, extra: {} },
      ] as const;
      for (const { side, result, extra } of sides) {
        const floor = floorOf(result);
        const latency = p50(result.latencies);
        const p95 = harness.percentile(result.latencies, 95);
        ctx.emit(`${side}_p50_ms`, latency, 'ms', { ...fields, ...extra });
        ctx.emit(`${side}_p95_ms`, p95, 'ms', { ...fields, max_ms: harness.round(Math.max(...result.latencies)) });
        ctx.emit(`${side}_p50_over_put_floor`, latency / floor.puts, 'x', { ...fields, put_floor_p50_ms: harness.round(floor.puts), raw_puts: STEPS + 1 });
        if (floor.appends !== null) ctx.emit(`${side}_p50_over_append_floor`, latency / floor.appends, 'x', { ...fields, append_floor_p50_ms: harness.round(floor.appends), appends: STEPS + 1 });
        harness.log(`  ${side}: submit-to-end p50 ${latency.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms; ${STEPS + 1} raw puts p50 ${floor.puts.toFixed(2)} ms${floor.appends === null ? '' : `, ${STEPS + 1} appends ${floor.appends.toFixed(2)} ms`}`);
      }
      const floor = floorOf(inside);
      const floorFields = { ...fields, put_bytes: RAW_PUT_BYTES, count: STEPS + 1 };
      ctx.emit('put_floor_p50_ms', floor.puts, 'ms', { ...floorFields, put_p50_ms: harness.round(floor.onePut) });
      if (floor.appends !== null) ctx.emit('append_floor_p50_ms', floor.appends, 'ms', floorFields);
    } finally {
      await context.close();
    }
  } finally {
    await server.close();
    await fs.rm(profileDir, { recursive: true, force: true });
  }
}

const benchmarks: Benchmark[] = [{ name: 'browser.latency', stores: ['idb', 'opfs'], run }];
export default benchmarks;
