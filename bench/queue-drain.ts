/**
 * queue.drain: enqueue JOBS 100-byte jobs in batches, then drain them with 16 concurrent workers
 * (one `runWorkerConcurrent` loop of concurrency 16: claim batches sized to free capacity, each
 * job one durable ack), against the store's own sequential durable puts measured in the same run.
 *
 *   enqueue_per_s     jobs/s enqueued (PRODUCERS loops of `enqueueBatch(BATCH)`, durable)
 *   processed_per_s   jobs/s claimed and acked, from the drain's start to the last ack
 *   claim_p50_ms      per claim call (a batch) that returned jobs, lock wait included
 *   claim_p99_ms      the same; `window_p99_max_ms` is the worst p99 of the drain's 10 windows
 *   raw_puts_per_s    the store's own sequential durable 100-byte puts under fresh keys
 *   cpu_us_per_job    process CPU (user + system, every thread) over enqueue + drain, per job:
 *                     the stable number on a shared machine; fields split it by phase
 *
 * The claim records also carry `store_reads_per_claim`: object-store gets (whole and ranged)
 * during the drain per claim call that returned jobs; a warm engine should need none.
 *
 * Environment: BENCH_QUEUE_JOBS (default 20000); BENCH_QUEUE_REOPEN=1 closes and reopens the
 * queue between enqueue and drain (a restart: cold block cache), marked `reopened: true`.
 */
import { Queue, runWorkerConcurrent, type Claim } from '../src/core/queue/index.js';
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { CountingObjectStore } from '../src/testing/counting-store.js';
import { durationMs, log, now, percentile, runFor, type BenchContext, type Benchmark } from './harness.js';

const PAYLOAD_BYTES = 100;
const BATCH = 100;
const PRODUCERS = 4;
const CONCURRENCY = 16;
const WINDOWS = 10;
const QUEUE = 'drain';

function jobCount(): number {
  const v = Number(process.env.BENCH_QUEUE_JOBS);
  return Number.isInteger(v) && v > 0 ? v : 20_000;
}

function payload(seed: number): Uint8Array {
  const v = new Uint8Array(PAYLOAD_BYTES);
  for (let i = 0; i < PAYLOAD_BYTES; i++) v[i] = (seed * 31 + i * 7) & 0xff;
  return v;
}

async function rawPutsPerSecond(store: ObjectStore, ms: number): Promise<number> {
  const v = payload(1);
  await runFor(100, 1, (_w, i) => store.put(`warm/${String(i).padStart(12, '0')}`, v));
  const r = await runFor(ms, 1, (_w, i) => store.put(`raw/${String(i).padStart(12, '0')}`, v));
  return r.perSecond;
}

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Warm-up on a throwaway queue (JIT), not measured. */
async function warmUp(store: ObjectStore): Promise<void> {
  const q = await Queue.open(store, 'warm', { livenessHeartbeatMs: null });
  try {
    const p = payload(2);
    for (let i = 0; i < 10; i++) await q.enqueueBatch(QUEUE, Array.from({ length: BATCH }, () => p));
    let done = 0;
    const stop = new AbortController();
    await runWorkerConcurrent(q, QUEUE, async () => {
      if (++done === 10 * BATCH) stop.abort();
    }, CONCURRENCY, { signal: stop.signal, pollIntervalMs: 50 });
  } finally {
    await q.close();
  }
}

async function run(ctx: BenchContext): Promise<void> {
  const jobs = jobCount();
  const raw = await ctx.freshStore('raw');
  let rawRate: number;
  try {
    rawRate = await rawPutsPerSecond(raw.store, Math.min(1000, durationMs()));
  } finally {
    await raw.dispose();
  }
  const handle = await ctx.freshStore('queue');
  const reopen = process.env.BENCH_QUEUE_REOPEN === '1';
  try {
    await warmUp(handle.store);
    const store = new CountingObjectStore(handle.store);
    let queue = await Queue.open(store, 'bench', { livenessHeartbeatMs: null });
    try {
      const p = payload(3);
      // ---- enqueue ----
      const cpu0 = cpuMicros();
      const t0 = now();
      let next = 0;
      await Promise.all(
        Array.from({ length: PRODUCERS }, async () => {
          while (next < jobs) {
            const n = Math.min(BATCH, jobs - next);
            next += n;
            await queue.enqueueBatch(QUEUE, Array.from({ length: n }, () => p));
          }
        }),
      );
      const enqueueMs = now() - t0;
      if (reopen) {
        await queue.close();
        queue = await Queue.open(store, 'bench', { livenessHeartbeatMs: null });
      }
      const cpu1 = cpuMicros();
      store.reset();
      // ---- drain ----
      const claimLatencies: number[] = [];
      const windows: number[][] = Array.from({ length: WINDOWS }, () => []);
      let done = 0;
      const original = queue.claimBatch.bind(queue);
      // Per claim call as the worker loop sees it (lock wait included). Empty claims are the
      // loop's idle polls at the very end, not part of the drain.
      (queue as { claimBatch: Queue['claimBatch'] }).claimBatch = async (name: string, max: number, leaseMs: number): Promise<Claim[]> => {
        const start = now();
        const claims = await original(name, max, leaseMs);
        if (claims.length > 0) {
          const ms = now() - start;
          claimLatencies.push(ms);
          windows[Math.min(WINDOWS - 1, Math.floor((done * WINDOWS) / jobs))].push(ms);
        }
        return claims;
      };
      const stop = new AbortController();
      const t1 = now();
      await runWorkerConcurrent(
        queue,
        QUEUE,
        async () => {
          if (++done === jobs) stop.abort();
        },
        CONCURRENCY,
        { signal: stop.signal, pollIntervalMs: 50 },
      );
      const drainMs = now() - t1;
      const cpu2 = cpuMicros();
      const counts = store.snapshot();
      const storeReads = counts.get.calls + counts.rangedGet.calls;
      const stats = await queue.stats(QUEUE);
      if (stats.pending !== 0 || stats.claimed !== 0 || stats.done !== jobs) throw new Error(`drain incomplete: ${JSON.stringify(stats)}`);

      const windowP99 = windows.map((w) => percentile(w, 99));
      const common = { jobs, payload_bytes: PAYLOAD_BYTES, concurrency: CONCURRENCY, ...(reopen ? { reopened: true } : {}) };
      const reads = { store_reads: storeReads, store_reads_per_claim: storeReads / claimLatencies.length };
      ctx.emit('enqueue_per_s', (jobs * 1000) / enqueueMs, 'jobs/s', { ...common, batch: BATCH, producers: PRODUCERS, duration_ms: Math.round(enqueueMs) });
      ctx.emit('processed_per_s', (jobs * 1000) / drainMs, 'jobs/s', { ...common, duration_ms: Math.round(drainMs), ratio_to_raw_puts: (jobs * 1000) / drainMs / rawRate });
      ctx.emit('claim_p50_ms', percentile(claimLatencies, 50), 'ms', { ...common, claims: claimLatencies.length, jobs_per_claim: jobs / claimLatencies.length, ...reads });
      ctx.emit('claim_p99_ms', percentile(claimLatencies, 99), 'ms', {
        ...common,
        claims: claimLatencies.length,
        window_p99_max_ms: Math.max(...windowP99.filter(Number.isFinite)),
        window_p99_ms: windowP99.map((v) => Math.round(v * 100) / 100),
        max_ms: Math.max(...claimLatencies),
        ...reads,
      });
      ctx.emit('raw_puts_per_s', rawRate, 'ops/s', { value_bytes: PAYLOAD_BYTES });
      ctx.emit('cpu_us_per_job', (cpu2 - cpu0) / jobs, 'us', {
        ...common,
        enqueue_us_per_job: (cpu1 - cpu0) / jobs,
        drain_us_per_job: (cpu2 - cpu1) / jobs,
      });
      log(
        `  enqueue ${((jobs * 1000) / enqueueMs).toFixed(0)}/s, drain ${((jobs * 1000) / drainMs).toFixed(0)}/s, ` +
          `claim p50 ${percentile(claimLatencies, 50).toFixed(2)} ms p99 ${percentile(claimLatencies, 99).toFixed(2)} ms, ` +
          `cpu ${((cpu2 - cpu0) / jobs).toFixed(0)} us/job (enqueue ${((cpu1 - cpu0) / jobs).toFixed(0)}, drain ${((cpu2 - cpu1) / jobs).toFixed(0)}), ` +
          `store reads ${storeReads} (${(storeReads / claimLatencies.length).toFixed(2)}/claim)${reopen ? ', reopened' : ''}, raw ${rawRate.toFixed(0)}/s`,
      );
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'queue.drain', stores: ['memory', 'fs'], run }];
export default benchmarks;
