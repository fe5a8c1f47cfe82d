/**
 * workflow.chain: step throughput of the workflow runtime. RUNS runs of STEPS steps each; every
 * step returns its 100-byte payload unchanged as the next step's input (the last one succeeds
 * with it); the runtime works 16 steps at a time. The runs are submitted first (timed apart as
 * `submit_per_s`), then the worker starts and the clock runs until every step is acknowledged.
 * No terminal hook (NoopTerminalHook), so no notification jobs. The workload runs WINDOWS times
 * back to back on one runtime and the metrics are over all windows: a single window of about a
 * second varied 3,100-5,700 steps/s on the fs store, with where memtable flushes and compactions
 * happened to fall; `window_steps_per_s_min/max` show that spread.
 *
 *   runs_per_s       runs completed per second (worker phase)
 *   steps_per_s      steps completed per second (worker phase); one durable ack per step
 *   raw_puts_per_s   the store's own sequential durable puts of 100-byte objects, same run
 *   cpu_us_per_step, alloc_kb_per_step   CPU (all threads) and JS heap allocated per step over the
 *                    worker phases of the measured windows (bench/cost-meter.ts)
 *   steps_per_s_keyed, keyed_over_plain   the same workload with every run under a concurrency
 *                    key (`user-{i % 200}`, limit 1: most runs wait for their user's previous
 *                    one and are admitted by its ending), windows alternating with the main ones;
 *                    the ratio is of submission plus worker time (target 0.8), since a waiting
 *                    run's step 0 is enqueued by the ending that admits it, in the worker phase,
 *                    where a plain run's was enqueued at submission (`keyed_over_plain_worker`:
 *                    the worker phases alone)
 *   steps_per_s_objects, log_over_objects   on a store with append logs (fs): the same workload
 *                    with the WAL as objects (`appendLogs: false`), windows alternating with the
 *                    main ones, and the ratio of the two (docs/rfcs/0002-wal-append-log.md)
 *
 * Per step the queue does one claim (non-durable commit, batched per claim call) and one ack
 * with the next step's enqueue and the step pointer in the same durable commit.
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { CONCURRENCY, KEYED_USERS, PAYLOAD_BYTES, STEPS, countAcks, quiet, runChain } from './chain-workload.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { costMeter } from './cost-meter.js';
import { durationMs, log, now, percentile, runFor, tempDir, type BenchContext, type Benchmark } from './harness.js';

const RUNS = 2000;
const WINDOWS = 3;
// The first few hundred steps of a process run mostly unoptimised code; they are not measured.
const WARMUP_RUNS = 500;

async function rawPuts(store: ObjectStore, ms: number) {
  const v = new Uint8Array(PAYLOAD_BYTES).fill(7);
  const put = (i: number) => store.put(`raw/${String(i).padStart(12, '0')}`, v);
  for (let i = 0; i < 20; i++) await put(1e11 + i); // warm-up
  return runFor(ms, 1, (_w, i) => put(i));
}

async function run(ctx: BenchContext): Promise<void> {
  let submitMs = 0;
  let workMs = 0;
  let objectsMs = 0;
  let keyedMs = 0;
  let keyedSubmitMs = 0;
  const windowRates: number[] = [];
  const cost = costMeter();
  const handle = await ctx.freshStore('workflow');
  // On a store with append logs (fs) the same workload also runs with the WAL as objects
  // (`appendLogs: false`), its windows alternating with the main ones so that load from other
  // processes hits both alike: the log must not be slower than the object path it replaces.
  const objectsStore = handle.store instanceof FileSystemObjectStore && handle.store.appendLogs ? new FileSystemObjectStore({ root: tempDir('workflow-objects'), appendLogs: false }) : undefined;
  try {
    const queue = await Queue.open(handle.store, 'bench', { logger: quiet });
    const objectsQueue = objectsStore && (await Queue.open(objectsStore, 'bench', { logger: quiet }));
    try {
      const acks = countAcks(queue);
      const objectsAcks = objectsQueue && countAcks(objectsQueue);
      await runChain(queue, acks, handle.store, WARMUP_RUNS, 'warm'); // JIT warm-up, not reported
      await runChain(queue, acks, handle.store, WARMUP_RUNS, 'warm-keyed', undefined, true);
      if (objectsQueue) await runChain(objectsQueue, objectsAcks!, objectsStore!, WARMUP_RUNS, 'warm');
      for (let w = 0; w < WINDOWS; w++) {
        const window = await runChain(queue, acks, handle.store, RUNS, `run${w}`, () => cost.start());
        cost.pause();
        submitMs += window.submitMs;
        workMs += window.workMs;
        windowRates.push((RUNS * STEPS * 1000) / window.workMs);
        const keyed = await runChain(queue, acks, handle.store, RUNS, `keyed${w}`, undefined, true);
        keyedMs += keyed.workMs;
        keyedSubmitMs += keyed.submitMs;
        if (objectsQueue) objectsMs += (await runChain(objectsQueue, objectsAcks!, objectsStore!, RUNS, `run${w}`)).workMs;
      }
    } finally {
      await queue.close();
      await objectsQueue?.close();
    }
  } finally {
    await handle.dispose();
  }
  // The raw store is measured after the chain: with the memory store its objects stay reachable
  // until the end of the run and would slow the chain's garbage collection.
  const raw = await ctx.freshStore('raw');
  const plain = await rawPuts(raw.store, durationMs());
  await raw.dispose();

  const runs = RUNS * WINDOWS;
  const fields = { runs, windows: WINDOWS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, concurrency: CONCURRENCY, duration_ms: Math.round(workMs) };
  const stepsPerS = (runs * STEPS * 1000) / workMs;
  ctx.emit('runs_per_s', (runs * 1000) / workMs, 'runs/s', { ...fields, submit_per_s: Math.round((runs * 1000) / submitMs) });
  ctx.emit('steps_per_s', stepsPerS, 'steps/s', {
    ...fields,
    ratio_to_raw_puts: Math.round((stepsPerS / plain.perSecond) * 100) / 100,
    window_steps_per_s_min: Math.round(Math.min(...windowRates)),
    window_steps_per_s_max: Math.round(Math.max(...windowRates)),
  });
  const keyedRate = (runs * STEPS * 1000) / keyedMs;
  ctx.emit('steps_per_s_keyed', keyedRate, 'steps/s', { ...fields, duration_ms: Math.round(keyedMs), keys: KEYED_USERS, limit: 1 });
  ctx.emit('keyed_over_plain', (submitMs + workMs) / (keyedSubmitMs + keyedMs), 'x', { target: 0.8, worker_phase_only: false });
  ctx.emit('keyed_over_plain_worker', keyedRate / stepsPerS, 'x', { worker_phase_only: true });
  log(`  same workload with a concurrency key on every run: ${keyedRate.toFixed(0)} steps/s`);
  if (objectsMs > 0) {
    const objectsRate = (runs * STEPS * 1000) / objectsMs;
    ctx.emit('steps_per_s_objects', objectsRate, 'steps/s', { ...fields, duration_ms: Math.round(objectsMs), wal: 'objects' });
    ctx.emit('log_over_objects', stepsPerS / objectsRate, 'x', { target: 1 });
    log(`  same workload with WAL objects: ${objectsRate.toFixed(0)} steps/s`);
  }
  const steps = runs * STEPS;
  ctx.emit('cpu_us_per_step', cost.total.cpuUs / steps, 'us', { steps, cpu_ms: Math.round(cost.total.cpuUs / 1000) });
  ctx.emit('alloc_kb_per_step', cost.total.allocBytes / 1024 / steps, 'KiB', { steps, heap_only: true });
  ctx.emit('raw_puts_per_s', plain.perSecond, 'ops/s', { value_bytes: PAYLOAD_BYTES, ops: plain.ops, p50_ms: percentile(plain.latencies, 50) });
  log(`  chain ${stepsPerS.toFixed(0)} steps/s in ${workMs.toFixed(0)} ms; submit ${((runs * 1000) / submitMs).toFixed(0)} runs/s; raw puts ${plain.perSecond.toFixed(0)}/s`);
}

const benchmarks: Benchmark[] = [{ name: 'workflow.chain', stores: ['memory', 'fs'], run }];
export default benchmarks;
