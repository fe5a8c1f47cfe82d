/**
 * workflow.fn: workflow functions (`defineWorkflow`, `ctx.step`) against the StepRunner runtime,
 * both measured in this one process and sitting so the ratios are side by side (issue 27).
 * `BENCH_FN_PHASES=chain,latency,long` runs only some phases (default all; for profiling).
 *
 * W1 chain: RUNS runs of 3 steps, 16 at a time, as workflow.chain does it (all runs started
 * first, then the worker runs until every run has ended). The function is
 * `p = await ctx.step('s1', () => p)` x3 and returns `p`, a 100-byte payload: the same trivial
 * work as the runner's steps, which forward the payload (chain-workload.ts). A runner run is 3
 * underlying steps (3 claims, 3 durable acks); a function run is one underlying step whose 3
 * `ctx.step`s each record a history event durably, then one durable ack. Each side works on its
 * own store; after a warm-up window each, WINDOWS windows of RUNS runs alternate between them
 * (which goes first alternates too), so load from other processes hits both alike; before each
 * window the other side's engine is let go idle, so no window pays for the other's flushes.
 *
 *   fn_steps_per_s, runner_steps_per_s   steps (ctx.step calls / underlying steps) per second over
 *                                        all windows; fields `cpu_us_per_step` (process CPU, all
 *                                        threads, over the worker phases: less exposed to a busy
 *                                        machine than wall time), `wal_writes_per_step` (store puts
 *                                        and appends over the worker phases), window min/max
 *   fn_over_runner                       their ratio (target >= 0.8); fields: the ratio of each
 *                                        round's pair of windows and their median,
 *                                        `cpu_fn_over_runner`
 *
 * W3 latency: LATENCY_RUNS sequential 3-step runs on an idle runtime (after LATENCY_WARMUP runs 16
 * at a time and a quiet engine), function and runner alternating, each timed from `start` /
 * `submit` to the commit of the run's terminal ack, as workflow.latency does it. Fields:
 * `result_p50_ms` (the same runs until `run.result()` / `runtime.result(runId)` resolved) and
 * `wal_writes_per_run` (store puts and appends: 5 for a function run, 1 + 3 history events + the
 * ack; 4 for a runner run, the claims riding the acks).
 *
 *   fn_p50_ms, fn_p95_ms, runner_p50_ms, runner_p95_ms
 *   fn_p50_over_runner_p50               (target <= 1.25)
 *
 * Long function (workflow-fn-long.ts): LONG_STEPS steps (each forwards the payload), LONG_REPEATS
 * runs one after the other; the time each step's function is called is recorded.
 *
 *   step_cost_ratio_1000_over_10   per-step time over steps 990-1,000 (the 10 intervals between
 *                                  the calls of steps 990 and 1,000) over steps 1-10 (step 1 to
 *                                  11): the median interval of each span, pooled over the repeats
 *                                  (target <= 1.2); `mean_ratio` / `mean_ratios`: with the spans'
 *                                  mean intervals instead (median of the repeats / each run)
 *   step_cost_ratio_last100_over_first100   the same over 100-step spans (less noisy)
 *   restart_to_next_step_ms        the last run is held at step 1,000 (its step function returns
 *                                  a promise the benchmark holds). RESTARTS times: close the queue
 *                                  under it, let the old delivery end (its write meets CLOSED),
 *                                  reopen the store (a new instance over the same data) and the
 *                                  queue, then time `new WorkflowRuntime` + `spawn` until step
 *                                  1,000's function is called again (claim, one scan of the 999
 *                                  recorded events, replay of 999 `ctx.step`s); held again for the
 *                                  next restart. The median (target <= 50 ms on fs); `values_ms`
 *                                  (the first pays for the replay path's cold code),
 *                                  `queue_open_ms` (the `Queue.open` before it, not counted)
 *   restart_to_next_step_ms_new_process   (fs) the same restart in a new process
 *                                  (workflow-fn-restart.ts): every code path cold, as after a real
 *                                  crash; it finishes the run, which this process then checks
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from '../src/core/queue/index.js';
import { HEADER_STEP, NoopTerminalHook, StepOutcome, WorkflowRuntime, type Step } from '../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { CountingObjectStore } from '../src/testing/counting-store.js';
import { CONCURRENCY, PAYLOAD_BYTES, STEPS, countAcks, fnChain as chain, quiet, runChain, watchTerminalAcks, type AckCounter } from './chain-workload.js';
import { log, now, percentile, type BenchContext, type Benchmark, type StoreHandle } from './harness.js';
import { LONG_STEPS, long, setProbe, type LongProbe } from './workflow-fn-long.js';

const RUNS = 500;
const WINDOWS = 10;
const WARMUP_RUNS = 500;
const LATENCY_RUNS = 50;
const LATENCY_WARMUP = 500;
const LATENCY_WARMUP_LANES = 16;
const LONG_REPEATS = 3;
const RESTARTS = 5;

// ---- the workflows -----------------------------------------------------------------------------

const forward = async (step: Step) => (step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload));

// ---- W1: chain ---------------------------------------------------------------------------------

/** As `runChain` (chain-workload.ts), with the function: start `runs` runs, then work them until each has ended. */
async function runFnChain(queue: Queue, acks: AckCounter, store: StoreHandle['store'], runs: number, tag: string, onWorkStart?: () => void): Promise<{ submitMs: number; workMs: number }> {
  const runtime = new WorkflowRuntime(queue, store, { workflows: [chain] }, new NoopTerminalHook(), { maxConcurrentSteps: CONCURRENCY, logger: quiet });
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(42);
  const t0 = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < runs) {
        const i = next++;
        await runtime.start(chain, payload, { runId: `${tag}-${i}` });
      }
    }),
  );
  const submitMs = now() - t0;
  const allAcked = acks.until(runs); // one underlying step per run
  onWorkStart?.();
  const t1 = now();
  const worker = runtime.spawn();
  await allAcked;
  const workMs = now() - t1;
  await worker.shutdown();
  return { submitMs, workMs };
}

/** Process CPU time (user + system, all threads) in microseconds. */
const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function chainPhase(ctx: BenchContext): Promise<void> {
  const runnerHandle = await ctx.freshStore('fn-runner');
  const fnHandle = await ctx.freshStore('fn-fn');
  // Counting stores: the WAL writes (puts and appends) of the worker phases.
  const stores = { runner: new CountingObjectStore(runnerHandle.store), fn: new CountingObjectStore(fnHandle.store) };
  const writes = (which: 'fn' | 'runner'): number => {
    const c = stores[which].snapshot();
    return c.put.calls + c.append.calls;
  };
  const totals = { runner: { ms: 0, submitMs: 0, cpuUs: 0, writes: 0 }, fn: { ms: 0, submitMs: 0, cpuUs: 0, writes: 0 } };
  const rates = { runner: [] as number[], fn: [] as number[] };
  try {
    const runnerQueue = await Queue.open(stores.runner, 'bench', { logger: quiet });
    const fnQueue = await Queue.open(stores.fn, 'bench', { logger: quiet });
    try {
      const runnerAcks = countAcks(runnerQueue);
      const fnAcks = countAcks(fnQueue);
      await runChain(runnerQueue, runnerAcks, runnerHandle.store, WARMUP_RUNS, 'warm');
      await runFnChain(fnQueue, fnAcks, fnHandle.store, WARMUP_RUNS, 'warm');
      for (let w = 0; w < WINDOWS; w++) {
        // Alternate which goes first, so neither always follows the other's background work.
        const order = w % 2 === 0 ? (['runner', 'fn'] as const) : (['fn', 'runner'] as const);
        for (const which of order) {
          // The other side's engine work (memtable flushes, compactions) is not this window's.
          await (which === 'runner' ? fnQueue : runnerQueue).whenIdle();
          let cpu0 = 0;
          let writes0 = 0;
          const started = (): void => {
            cpu0 = cpuMicros();
            writes0 = writes(which);
          };
          const r =
            which === 'runner'
              ? await runChain(runnerQueue, runnerAcks, runnerHandle.store, RUNS, `run${w}`, started)
              : await runFnChain(fnQueue, fnAcks, fnHandle.store, RUNS, `run${w}`, started);
          totals[which].cpuUs += cpuMicros() - cpu0;
          totals[which].writes += writes(which) - writes0;
          totals[which].ms += r.workMs;
          totals[which].submitMs += r.submitMs;
          rates[which].push((RUNS * STEPS * 1000) / r.workMs);
        }
      }
    } finally {
      await runnerQueue.close();
      await fnQueue.close();
    }
  } finally {
    await runnerHandle.dispose();
    await fnHandle.dispose();
  }
  const runs = RUNS * WINDOWS;
  const steps = runs * STEPS;
  const fields = { runs_per_window: RUNS, windows: WINDOWS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, concurrency: CONCURRENCY };
  const rate = (which: 'fn' | 'runner') => (steps * 1000) / totals[which].ms;
  const cpuPerStep = (which: 'fn' | 'runner') => totals[which].cpuUs / steps;
  const side = (which: 'fn' | 'runner') => ({
    ...fields,
    window_min: Math.round(Math.min(...rates[which])),
    window_max: Math.round(Math.max(...rates[which])),
    duration_ms: Math.round(totals[which].ms),
    cpu_us_per_step: Math.round(cpuPerStep(which)),
    wal_writes_per_step: Math.round((totals[which].writes / steps) * 1000) / 1000,
    starts_per_s: Math.round((runs * 1000) / totals[which].submitMs),
  });
  const ratio = rate('fn') / rate('runner');
  // Each function window next to the runner window of the same round: less exposed to load drift.
  const pairs = rates.fn.map((f, i) => f / rates.runner[i]!);
  ctx.emit('fn_steps_per_s', rate('fn'), 'steps/s', side('fn'));
  ctx.emit('runner_steps_per_s', rate('runner'), 'steps/s', side('runner'));
  ctx.emit('fn_over_runner', ratio, 'x', {
    target: 0.8,
    met: ratio >= 0.8,
    window_pair_ratios: pairs.map((v) => Math.round(v * 100) / 100),
    window_pair_median: Math.round(percentile(pairs, 50) * 100) / 100,
    cpu_fn_over_runner: Math.round((cpuPerStep('fn') / cpuPerStep('runner')) * 100) / 100,
  });
  log(
    `  W1 chain: function ${rate('fn').toFixed(0)} steps/s (${cpuPerStep('fn').toFixed(0)} us CPU, ${(totals.fn.writes / steps).toFixed(2)} WAL writes per step), ` +
      `runner ${rate('runner').toFixed(0)} steps/s (${cpuPerStep('runner').toFixed(0)} us CPU, ${(totals.runner.writes / steps).toFixed(2)} WAL writes per step), ` +
      `ratio ${ratio.toFixed(2)} (window pairs ${pairs.map((v) => v.toFixed(2)).join(' ')})`,
  );
}

// ---- W3: latency -------------------------------------------------------------------------------

interface LatencySide {
  readonly store: CountingObjectStore;
  readonly queue: Queue;
  readonly runtime: WorkflowRuntime;
  /** Starts one run; resolves with [ms to the terminal ack's commit, ms to the result]. */
  once(runId: string): Promise<[number, number]>;
}

async function latencySide(handle: StoreHandle, kind: 'fn' | 'runner'): Promise<LatencySide> {
  const store = new CountingObjectStore(handle.store);
  const queue = await Queue.open(store, 'bench', { logger: quiet });
  // A function run is one underlying step (step 0); a runner run ends with the ack of step 2.
  const waiting = watchTerminalAcks(queue, (claim) => kind === 'fn' || claim.job.headers[HEADER_STEP] === String(STEPS - 1));
  const runtime =
    kind === 'fn'
      ? new WorkflowRuntime(queue, handle.store, { workflows: [chain] }, new NoopTerminalHook(), { logger: quiet })
      : new WorkflowRuntime(queue, handle.store, forward, new NoopTerminalHook(), { logger: quiet });
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(1);
  return {
    store,
    queue,
    runtime,
    async once(runId) {
      const terminal = new Promise<void>((resolve) => waiting.set(runId, resolve));
      const t0 = now();
      let result: Promise<unknown>;
      if (kind === 'fn') {
        const run = await runtime.start(chain, payload, { runId });
        result = run.result();
      } else {
        await runtime.submit({ runId, input: payload });
        result = runtime.result(runId);
      }
      await terminal;
      const ackMs = now() - t0;
      await result;
      const resultMs = now() - t0;
      waiting.delete(runId);
      return [ackMs, resultMs];
    },
  };
}

async function latencyPhase(ctx: BenchContext): Promise<void> {
  const handles = { fn: await ctx.freshStore('fn-latency-fn'), runner: await ctx.freshStore('fn-latency-runner') };
  const sides = { fn: await latencySide(handles.fn, 'fn'), runner: await latencySide(handles.runner, 'runner') };
  const workers = [sides.fn.runtime.spawn(), sides.runner.runtime.spawn()];
  try {
    for (const side of [sides.runner, sides.fn]) {
      let warmed = 0;
      await Promise.all(
        Array.from({ length: LATENCY_WARMUP_LANES }, async () => {
          while (warmed < LATENCY_WARMUP) await side.once(`warmup-${warmed++}`);
        }),
      );
      await side.queue.whenIdle();
    }
    const ms = { fn: [] as number[], runner: [] as number[] };
    const resultMs = { fn: [] as number[], runner: [] as number[] };
    const puts = { fn: 0, runner: 0 };
    for (let i = 0; i < LATENCY_RUNS; i++) {
      const order = i % 2 === 0 ? (['runner', 'fn'] as const) : (['fn', 'runner'] as const);
      for (const which of order) {
        const side = sides[which];
        const before = side.store.snapshot();
        const [ack, result] = await side.once(`latency-${i}`);
        const after = side.store.snapshot();
        puts[which] += after.put.calls - before.put.calls + (after.append.calls - before.append.calls);
        ms[which].push(ack);
        resultMs[which].push(result);
      }
    }
    const fields = { runs: LATENCY_RUNS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, warmup_runs: LATENCY_WARMUP };
    for (const which of ['fn', 'runner'] as const) {
      ctx.emit(`${which}_p50_ms`, percentile(ms[which], 50), 'ms', { ...fields, wal_writes_per_run: puts[which] / LATENCY_RUNS, result_p50_ms: Math.round(percentile(resultMs[which], 50) * 1000) / 1000 });
      ctx.emit(`${which}_p95_ms`, percentile(ms[which], 95), 'ms', { ...fields, max_ms: Math.round(Math.max(...ms[which]) * 1000) / 1000, result_p95_ms: Math.round(percentile(resultMs[which], 95) * 1000) / 1000 });
    }
    const ratio = percentile(ms.fn, 50) / percentile(ms.runner, 50);
    ctx.emit('fn_p50_over_runner_p50', ratio, 'x', { target: 1.25, met: ratio <= 1.25 });
    log(
      `  W3 latency: function p50 ${percentile(ms.fn, 50).toFixed(2)} ms p95 ${percentile(ms.fn, 95).toFixed(2)} ms (${(puts.fn / LATENCY_RUNS).toFixed(1)} WAL writes/run); ` +
        `runner p50 ${percentile(ms.runner, 50).toFixed(2)} ms p95 ${percentile(ms.runner, 95).toFixed(2)} ms (${(puts.runner / LATENCY_RUNS).toFixed(1)}); ratio ${ratio.toFixed(2)}`,
    );
  } finally {
    await Promise.allSettled(workers.map((w) => w.shutdown()));
    await sides.fn.queue.close();
    await sides.runner.queue.close();
    await handles.fn.dispose();
    await handles.runner.dispose();
  }
}

// ---- the long function and the restart ---------------------------------------------------------

const median = (values: readonly number[]): number => percentile(values, 50);
const perStep = (calls: readonly number[], from: number, to: number): number => (calls[to]! - calls[from]!) / (to - from);
/** The intervals between the calls of steps from..to (to - from of them). */
const intervals = (calls: readonly number[], from: number, to: number): number[] => Array.from({ length: to - from }, (_, k) => calls[from + k + 1]! - calls[from + k]!);
const ms3 = (v: number): number => Math.round(v * 1000) / 1000;

/** A promise the benchmark settles, and a promise for the moment the held step starts. */
function holdAtLast(): { probe: LongProbe; release: (v: Uint8Array) => void; reached: Promise<void> } {
  let release!: (v: Uint8Array) => void;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const probe = setProbe({ calls: [], holdAt: LONG_STEPS, hold: new Promise<Uint8Array>((resolve) => (release = resolve)), onHold: () => reach() });
  return { probe, release, reached };
}

/** The restart of the fs store's long run in a new process (workflow-fn-restart.ts), which finishes the run. */
function restartInChild(root: string, runId: string): Promise<{ open_ms: number; to_step_ms: number; step_calls: number; value: number }> {
  const script = fileURLToPath(new URL('./workflow-fn-restart.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, root, runId], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`restart child exited ${code}: ${err.trim()}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    });
  });
}

async function longPhase(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('fn-long');
  let queue = await Queue.open(handle.store, 'bench', { logger: quiet });
  let acks = countAcks(queue);
  const payload = new Uint8Array(PAYLOAD_BYTES).fill(5);
  const input = { payload, steps: LONG_STEPS };
  const first10: number[] = [];
  const last10: number[] = [];
  // Every interval of the 10-step spans of every repeat, for their medians: on a busy disk one
  // slow fsync in 10 steps moves a span's mean several times over.
  const first10Intervals: number[] = [];
  const last10Intervals: number[] = [];
  const first100: number[] = [];
  const last100: number[] = [];
  const restarts: number[] = [];
  const opens: number[] = [];
  let child: Awaited<ReturnType<typeof restartInChild>> | undefined;
  const heldRun = `long-${LONG_REPEATS - 1}`;
  try {
    let hold: ReturnType<typeof holdAtLast> | undefined;
    let worker: ReturnType<WorkflowRuntime['spawn']> | undefined;
    for (let r = 0; r < LONG_REPEATS; r++) {
      // The last repeat is held at step LONG_STEPS for the restarts.
      hold = r === LONG_REPEATS - 1 ? holdAtLast() : undefined;
      const probe = hold?.probe ?? setProbe({ calls: [] });
      const runtime = new WorkflowRuntime(queue, handle.store, { workflows: [long] }, new NoopTerminalHook(), { logger: quiet });
      worker = runtime.spawn();
      const ended = acks.until(1);
      await runtime.start(long, input, { runId: `long-${r}` });
      if (hold) await hold.reached;
      else await ended;
      first10.push(perStep(probe.calls, 1, 11));
      last10.push(perStep(probe.calls, LONG_STEPS - 10, LONG_STEPS));
      first10Intervals.push(...intervals(probe.calls, 1, 11));
      last10Intervals.push(...intervals(probe.calls, LONG_STEPS - 10, LONG_STEPS));
      first100.push(perStep(probe.calls, 1, 101));
      last100.push(perStep(probe.calls, LONG_STEPS - 100, LONG_STEPS));
      if (!hold) await worker.shutdown();
    }
    // Restarts at step LONG_STEPS: close the queue under the held step, let the old delivery end
    // (its write meets CLOSED), reopen the store and the queue, and time a new runtime until the
    // held step's function is called again; it is held again for the next restart.
    const stop = async (): Promise<void> => {
      await queue.close();
      hold!.release(payload);
      await worker!.shutdown().catch(() => undefined);
    };
    for (let k = 0; k < RESTARTS; k++) {
      await stop();
      hold = holdAtLast();
      const store = handle.reopen();
      const o0 = now();
      queue = await Queue.open(store, 'bench', { logger: quiet });
      opens.push(now() - o0);
      acks = countAcks(queue);
      const t0 = now();
      const runtime = new WorkflowRuntime(queue, store, { workflows: [long] }, new NoopTerminalHook(), { logger: quiet });
      worker = runtime.spawn();
      await hold.reached;
      restarts.push(now() - t0);
      const ran = hold.probe.calls.filter((t) => t !== undefined).length;
      if (ran !== 1) throw new Error(`the restart ran ${ran} step functions; expected only step ${LONG_STEPS}`);
    }
    await stop();
    // The run is finished by one more restart: in a new process on fs (timed), in this one otherwise.
    if (handle.store instanceof FileSystemObjectStore) {
      child = await restartInChild(handle.store.root, heldRun);
      if (child.step_calls !== 1) throw new Error(`the restart in a new process ran ${child.step_calls} step functions; expected only step ${LONG_STEPS}`);
    }
    const store = handle.reopen();
    queue = await Queue.open(store, 'bench', { logger: quiet });
    setProbe({ calls: [] });
    const runtime = new WorkflowRuntime(queue, store, { workflows: [long] }, new NoopTerminalHook(), { logger: quiet });
    worker = runtime.spawn();
    const value = await runtime.workflowRun(long, heldRun).result({ timeoutMs: 60_000 });
    await worker.shutdown();
    if (value !== PAYLOAD_BYTES) throw new Error(`the long run returned ${value}`);
  } finally {
    await queue.close();
    await handle.dispose();
  }
  const ratio = median(last10Intervals) / median(first10Intervals);
  const fields = { steps: LONG_STEPS, repeats: LONG_REPEATS, payload_bytes: PAYLOAD_BYTES };
  ctx.emit('step_cost_ratio_1000_over_10', ratio, 'x', {
    ...fields,
    per_step_ms_1_10: ms3(median(first10Intervals)),
    per_step_ms_990_1000: ms3(median(last10Intervals)),
    mean_ratio: Math.round((median(last10) / median(first10)) * 100) / 100,
    mean_ratios: first10.map((f, i) => Math.round((last10[i]! / f) * 100) / 100),
    target: 1.2,
    met: ratio <= 1.2,
  });
  ctx.emit('step_cost_ratio_last100_over_first100', median(last100) / median(first100), 'x', { ...fields, per_step_ms_1_100: ms3(median(first100)), per_step_ms_900_1000: ms3(median(last100)) });
  const restart = median(restarts);
  ctx.emit('restart_to_next_step_ms', restart, 'ms', {
    history_events: LONG_STEPS - 1,
    restarts: RESTARTS,
    values_ms: restarts.map(ms3),
    queue_open_ms: ms3(median(opens)),
    target: 50,
    met: restart <= 50,
  });
  if (child) {
    ctx.emit('restart_to_next_step_ms_new_process', child.to_step_ms, 'ms', { history_events: LONG_STEPS - 1, queue_open_ms: ms3(child.open_ms), target: 50, met: child.to_step_ms <= 50 });
  }
  log(
    `  long: per step ${median(first10Intervals).toFixed(3)} ms (1-10), ${median(last10Intervals).toFixed(3)} ms (990-1000), ratio ${ratio.toFixed(2)}; ` +
      `restart to step ${LONG_STEPS} ${restarts.map((v) => v.toFixed(1)).join(' / ')} ms (queue open ${median(opens).toFixed(1)} ms)` +
      (child ? `; in a new process ${child.to_step_ms.toFixed(1)} ms (queue open ${child.open_ms.toFixed(1)} ms)` : ''),
  );
}

/** BENCH_FN_PHASES=chain,latency,long (default all) runs only some phases (for profiling). */
const PHASES = new Set((process.env.BENCH_FN_PHASES ?? 'chain,latency,long').split(','));

async function run(ctx: BenchContext): Promise<void> {
  if (PHASES.has('chain')) await chainPhase(ctx);
  if (PHASES.has('latency')) await latencyPhase(ctx);
  if (PHASES.has('long')) await longPhase(ctx);
}

const benchmarks: Benchmark[] = [{ name: 'workflow.fn', stores: ['memory', 'fs'], run }];
export default benchmarks;
