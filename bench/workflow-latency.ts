/**
 * workflow.latency: how long one run takes, end to end, on an idle runtime. RUNS sequential runs
 * of STEPS steps (each step forwards its 100-byte payload; the last succeeds), each timed from
 * the `submit` call to the moment its terminal settlement (the ack of the last step, which
 * deletes the run record) has committed. No terminal hook.
 *
 *   p50_ms, p95_ms   submit-to-terminal latency of one run
 *
 * Each run is 1 durable submit + STEPS x (claim + durable ack): at best 1 + STEPS WAL puts, the
 * claims riding the acks' puts. `puts_per_run` (on p50_ms) counts the store puts of the measured
 * runs (WAL objects; no table is written at this size), a deterministic companion to the times.
 *
 *   p50_over_put_floor   p50_ms / the p50 of 1 + STEPS sequential raw create-only puts of a
 *                        WAL-sized object on the same store, taken right after each measured run
 *                        (so both see the same disk). 1.0 would mean the runtime costs nothing
 *                        beyond the puts it cannot avoid; on a noisy disk this moves far less than
 *                        p50_ms does.
 */
import { CountingObjectStore } from '../src/testing/counting-store.js';
import { Queue } from '../src/core/queue/index.js';
import { HEADER_STEP, NoopTerminalHook, StepOutcome, WorkflowRuntime, type Step } from '../src/core/workflow/index.js';
import { log, now, percentile, type BenchContext, type Benchmark } from './harness.js';
import { watchTerminalAcks } from './chain-workload.js';

const RUNS = 50;
// Warm-up runs, WARMUP_LANES at a time, before the measured ones. A process reaches steady state
// only after a few thousand steps, because V8 optimises the hot path gradually: after 100
// sequential warm-up runs the memory store's p50 was still 1.9-2.3 ms, after 2,000 it is 0.6 ms.
// The measured runs show an idle runtime in a warmed process.
const WARMUP = 2000;
const WARMUP_LANES = 16;
const STEPS = 3;
const PAYLOAD_BYTES = 100;
// About what one of these runs' WAL objects weighs (a claim and an ack of a 100-byte payload).
const RAW_PUT_BYTES = 1400;
const quiet = { warn: () => undefined };

const forward = async (step: Step) => (step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload));

async function run(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('workflow');
  try {
    const store = new CountingObjectStore(handle.store);
    const queue = await Queue.open(store, 'bench', { logger: quiet });
    try {
      // Observe the terminal ack: the last step's ackWith resolving means the termination committed.
      const waiting = watchTerminalAcks(queue, (claim) => claim.job.headers[HEADER_STEP] === String(STEPS - 1));
      const runtime = new WorkflowRuntime(queue, handle.store, forward, new NoopTerminalHook(), { logger: quiet });
      const worker = runtime.spawn();
      const payload = new Uint8Array(PAYLOAD_BYTES).fill(1);
      const runOnce = async (runId: string): Promise<number> => {
        const terminal = new Promise<void>((resolve) => waiting.set(runId, resolve));
        const t0 = now();
        await runtime.submit({ runId, input: payload });
        await terminal;
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
      const latencies: number[] = [];
      const floors: number[] = [];
      const walSized = new Uint8Array(RAW_PUT_BYTES).fill(3);
      const floorLog = await handle.store.appendLogs?.createLog('raw/append-log');
      const appendTimes: number[] = [];
      let puts = 0;
      let appends = 0;
      for (let i = 0; i < RUNS; i++) {
        const before = store.snapshot();
        latencies.push(await runOnce(`latency-${i}`));
        puts += store.snapshot().put.calls - before.put.calls;
        appends += store.snapshot().append.calls - before.append.calls;
        for (let p = 0; floorLog && p <= STEPS; p++) {
          const a0 = now();
          await floorLog.append(walSized);
          appendTimes.push(now() - a0);
        }
        const t0 = now();
        for (let p = 0; p <= STEPS; p++) await handle.store.put(`raw/${i}-${p}`, walSized, { ifNoneMatch: '*' });
        floors.push(now() - t0);
      }
      await floorLog?.close();
      await worker.shutdown();
      const fields = { runs: RUNS, steps_per_run: STEPS, payload_bytes: PAYLOAD_BYTES, warmup_runs: WARMUP };
      ctx.emit('p50_ms', percentile(latencies, 50), 'ms', { ...fields, puts_per_run: puts / RUNS, appends_per_run: appends / RUNS });
      ctx.emit('p95_ms', percentile(latencies, 95), 'ms', { ...fields, max_ms: Math.max(...latencies) });
      const floor = percentile(floors, 50);
      ctx.emit('p50_over_put_floor', percentile(latencies, 50) / floor, 'x', { ...fields, put_floor_p50_ms: floor, raw_puts: STEPS + 1 });
      if (floorLog) {
        const appendP50 = percentile(appendTimes, 50);
        ctx.emit('p50_over_fsync_floor', percentile(latencies, 50) / ((STEPS + 1) * appendP50), 'x', { ...fields, append_sync_p50_ms: appendP50, appends: STEPS + 1, target: 3 });
        log(`  append+fdatasync p50 ${appendP50.toFixed(3)} ms`);
      }
      log(`  submit-to-terminal p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms, ${(puts / RUNS).toFixed(2)} puts per run; ${STEPS + 1} raw puts p50 ${floor.toFixed(2)} ms`);
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'workflow.latency', stores: ['memory', 'fs'], run }];
export default benchmarks;
