/**
 * jobs.roundtrip: typed jobs end to end through `JobRunner` (a single-step run each, its outcome
 * stored as a memo object before the step's ack). The job adds two numbers; no idempotency key.
 *
 *   p50_ms, p95_ms   SEQUENTIAL jobs one after another, each timed from `submit` to the resolved
 *                    `await handle.result()` (a durable submit, the claim, the outcome object's
 *                    put, the durable ack, and the handle's read of the outcome object)
 *   jobs_per_s       TOTAL jobs, LANES at a time (each lane submits one and awaits its result),
 *                    from the first submit to the last result
 *
 * A warm-up of WARMUP jobs (LANES at a time) runs first, so the numbers show a warmed process.
 */
import { Queue } from '../src/core/queue/index.js';
import { defineJob, JobRunner } from '../src/core/jobs/index.js';
import { log, now, percentile, type BenchContext, type Benchmark } from './harness.js';

const SEQUENTIAL = 50;
const TOTAL = 1000;
const LANES = 16;
const WARMUP = 500;
const quiet = { warn: () => undefined };

const addJob = defineJob({ name: 'bench.add', run: async ({ a, b }: { a: number; b: number }) => a + b });

async function run(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('jobs');
  try {
    const queue = await Queue.open(handle.store, 'bench', { logger: quiet });
    try {
      const runner = new JobRunner(queue, handle.store, { maxConcurrentJobs: LANES, logger: quiet }).register(addJob);
      const worker = runner.spawn();
      const once = async (i: number): Promise<void> => {
        const out = await (await runner.submit(addJob, { a: i, b: 1 })).result();
        if (out !== i + 1) throw new Error(`wrong result ${out} for ${i}`);
      };
      const lanes = async (count: number): Promise<void> => {
        let next = 0;
        await Promise.all(Array.from({ length: LANES }, async () => {
          while (next < count) await once(next++);
        }));
      };
      await lanes(WARMUP);
      await queue.whenIdle();
      const latencies: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const t0 = now();
        await once(i);
        latencies.push(now() - t0);
      }
      const t0 = now();
      await lanes(TOTAL);
      const elapsed = now() - t0;
      await worker.shutdown();
      ctx.emit('p50_ms', percentile(latencies, 50), 'ms', { jobs: SEQUENTIAL, warmup_jobs: WARMUP });
      ctx.emit('p95_ms', percentile(latencies, 95), 'ms', { jobs: SEQUENTIAL, max_ms: Math.max(...latencies) });
      ctx.emit('jobs_per_s', (TOTAL * 1000) / elapsed, 'ops/s', { jobs: TOTAL, concurrency: LANES });
      log(`  submit-to-result p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms; ${TOTAL} jobs ${LANES} at a time: ${((TOTAL * 1000) / elapsed).toFixed(0)} jobs/s`);
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'jobs.roundtrip', stores: ['memory', 'fs'], run }];
export default benchmarks;
