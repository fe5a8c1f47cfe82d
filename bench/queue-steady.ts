/**
 * queue.steady: producers and workers together for BENCH_STEADY_MS (default 10 s), as the spec's
 * steady_state: PRODUCERS loops enqueue 100-byte jobs one at a time (one durable commit each,
 * group-committed) at a fixed offered rate, BENCH_STEADY_RATE jobs/s (default 2000), open loop:
 * each job has a scheduled send time and a producer that falls behind sends at once. One
 * `runWorkerConcurrent` loop of concurrency 16 claims and acks (one durable ack per job).
 * Does throughput hold at the offered rate, and what is the latency meanwhile?
 *
 *   done_per_s       jobs acked per second over the run (fields: offered and enqueued rates,
 *                    backlog max / at the end: a backlog that grows means the rate is not held)
 *   e2e_p50_ms       from the job's scheduled send time to the resolution of its (durable) ack
 *   e2e_p99_ms       the same
 *   cpu_us_per_job   process CPU (user + system, every thread) over the run per acked job
 *
 * BENCH_STEADY_RATE=max: closed loop instead, producers as fast as they can with the backlog
 * (enqueued, not yet acked) capped at 4 x concurrency, for the saturated throughput (e2e then
 * includes up to a capped backlog of queueing). Jobs still queued at the end are drained
 * afterwards and not counted.
 */
import { Queue, runWorkerConcurrent, type Claim } from '../src/core/queue/index.js';
import { log, now, percentile, type BenchContext, type Benchmark } from './harness.js';

const PAYLOAD_BYTES = 100;
const PRODUCERS = 16;
const CONCURRENCY = 16;
const BACKLOG_CAP = 4 * CONCURRENCY;
const DEFAULT_RATE = 2000;
const QUEUE = 'steady';

function runMs(): number {
  const v = Number(process.env.BENCH_STEADY_MS);
  return Number.isFinite(v) && v > 0 ? v : 10_000;
}

/** Jobs/s, or undefined for the closed loop (`max`). */
function offeredRate(): number | undefined {
  const raw = process.env.BENCH_STEADY_RATE;
  if (raw === 'max') return undefined;
  const v = Number(raw);
  return raw !== undefined && Number.isFinite(v) && v > 0 ? v : DEFAULT_RATE;
}

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function run(ctx: BenchContext): Promise<void> {
  const duration = runMs();
  const rate = offeredRate();
  const handle = await ctx.freshStore('queue');
  try {
    const queue = await Queue.open(handle.store, 'bench', { livenessHeartbeatMs: null });
    try {
      // The enqueue start time rides in the payload (float64 at offset 0).
      const e2e: number[] = [];
      let measuring = false;
      let enqueued = 0;
      let done = 0;
      let backlogMax = 0;
      let paused: (() => void)[] = [];
      // Worker loops settle through the internal settleInLoop, which resolves once the ack is
      // durable (it calls back earlier, when the commit is issued, to free the handler slot).
      const originalSettle = queue.settleInLoop.bind(queue);
      (queue as { settleInLoop: Queue['settleInLoop'] }).settleInLoop = async (claim: Claim, outcome, onIssued) => {
        await originalSettle(claim, outcome, onIssued);
        const p = claim.job.payload;
        const started = new DataView(p.buffer, p.byteOffset, 8).getFloat64(0, true);
        if (measuring && started > 0) {
          e2e.push(now() - started);
          done++;
        }
        if (paused.length > 0) {
          const wake = paused;
          paused = [];
          for (const r of wake) r();
        }
      };
      const stopWorkers = new AbortController();
      const workers = runWorkerConcurrent(queue, QUEUE, async () => undefined, CONCURRENCY, { signal: stopWorkers.signal, pollIntervalMs: 50 });

      /** `startedAt` rides in the payload; 0 marks a warm-up job. */
      const enqueueOne = async (startedAt: number): Promise<void> => {
        const p = new Uint8Array(PAYLOAD_BYTES);
        new DataView(p.buffer).setFloat64(0, startedAt, true);
        await queue.enqueue(QUEUE, p);
      };
      const busy = async (): Promise<boolean> => {
        const s = await queue.stats(QUEUE);
        return s.pending + s.claimed > 0;
      };
      // Warm-up (JIT), not measured.
      for (let i = 0; i < 2000; i += 100) await Promise.all(Array.from({ length: 100 }, () => enqueueOne(0)));
      while (await busy()) await sleep(20);

      measuring = true;
      const cpu0 = cpuMicros();
      const t0 = now();
      const deadline = t0 + duration;
      let outstanding = 0;
      await Promise.all(
        Array.from({ length: PRODUCERS }, async (_, w) => {
          for (let i = 0; ; i++) {
            let startedAt: number;
            if (rate !== undefined) {
              // Open loop: latency counts from the scheduled time, so a late producer is not hidden.
              startedAt = t0 + ((i * PRODUCERS + w) * 1000) / rate;
              if (startedAt >= deadline) return;
              if (startedAt > now()) await sleep(startedAt - now());
            } else {
              if (now() >= deadline) return;
              while (enqueued - done >= BACKLOG_CAP) await new Promise<void>((r) => paused.push(r));
              startedAt = now();
            }
            outstanding++;
            await enqueueOne(startedAt);
            outstanding--;
            enqueued++;
            if (enqueued - done > backlogMax) backlogMax = enqueued - done;
          }
        }),
      );
      // Count acks up to the deadline only.
      const left = deadline - now();
      if (left > 0) await sleep(left);
      const ms = now() - t0;
      const doneInRun = done;
      const latencies = e2e.slice(0, doneInRun);
      const cpu1 = cpuMicros();
      measuring = false;
      const backlogEnd = enqueued - doneInRun;
      // Drain what is left, then stop the workers.
      while (outstanding > 0 || (await busy())) await sleep(20);
      stopWorkers.abort();
      await workers;

      const fields = {
        payload_bytes: PAYLOAD_BYTES,
        producers: PRODUCERS,
        concurrency: CONCURRENCY,
        duration_ms: Math.round(ms),
        mode: rate === undefined ? 'closed' : 'open',
        ...(rate === undefined ? { backlog_cap: BACKLOG_CAP } : { offered_per_s: rate }),
      };
      ctx.emit('done_per_s', (doneInRun * 1000) / ms, 'jobs/s', {
        ...fields,
        done: doneInRun,
        enqueued_per_s: (enqueued * 1000) / ms,
        backlog_max: backlogMax,
        backlog_end: backlogEnd,
      });
      ctx.emit('e2e_p50_ms', percentile(latencies, 50), 'ms', fields);
      ctx.emit('e2e_p99_ms', percentile(latencies, 99), 'ms', { ...fields, max_ms: Math.max(...latencies) });
      ctx.emit('cpu_us_per_job', (cpu1 - cpu0) / Math.max(1, doneInRun), 'us', fields);
      log(
        `  done ${((doneInRun * 1000) / ms).toFixed(0)}/s, enqueued ${((enqueued * 1000) / ms).toFixed(0)}/s, ` +
          `e2e p50 ${percentile(latencies, 50).toFixed(2)} ms p99 ${percentile(latencies, 99).toFixed(2)} ms, ` +
          `backlog max ${backlogMax}, cpu ${((cpu1 - cpu0) / Math.max(1, doneInRun)).toFixed(0)} us/job`,
      );
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'queue.steady', stores: ['memory', 'fs'], run }];
export default benchmarks;
