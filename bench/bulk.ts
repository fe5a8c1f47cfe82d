/**
 * bulk.items: item throughput of a bulk batch. ITEMS items through a pipeline of two trivial
 * phases (each memoized in the item's step memo: one object put per phase), CONCURRENCY items at
 * a time, timed end to end from `bulk.submit` (manifest written, items submitted in a window) to
 * the resolved `batch.done()` (every item's marker acknowledged and its completion logged).
 *
 * In the same process and store, right before, the baseline: ITEMS single-step runs of the bare
 * workflow runtime (the step succeeds at once; no memo), submitted 16 at a time while the worker
 * runs, CONCURRENCY steps at a time, timed from the first submit to the last ack. Both are warmed
 * up first with WARMUP items.
 *
 *   items_per_s           bulk items finished per second
 *   runtime_items_per_s   bare single-step runs finished per second (the workflow.chain step, one step per run)
 *   ratio_to_runtime      items_per_s / runtime_items_per_s: what the batch layer costs on top of the runtime
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { Bulk, pipeline } from '../src/core/bulk/index.js';
import { NoopTerminalHook, StepOutcome, WorkflowRuntime } from '../src/core/workflow/index.js';
import { countAcks, quiet } from './chain-workload.js';
import { log, now, type BenchContext, type Benchmark } from './harness.js';

const ITEMS = 5000;
const WARMUP = 500;
const CONCURRENCY = 16;
const SUBMIT_LANES = 16;

const trivial = pipeline<{ n: number }>()
  .phase('double', ({ n }) => n * 2)
  .phase('describe', (n) => `value ${n}`);

async function runtimeRate(queue: Queue, ctx: BenchContext, store: ObjectStore, items: number, tag: string): Promise<number> {
  void ctx;
  const acks = countAcks(queue);
  const runtime = new WorkflowRuntime(queue, store, async (step) => StepOutcome.succeed(step.payload), new NoopTerminalHook(), {
    queueName: `runtime-${tag}`,
    maxConcurrentSteps: CONCURRENCY,
    logger: quiet,
  });
  const worker = runtime.spawn();
  const payload = new TextEncoder().encode(JSON.stringify({ n: 1 }));
  const allAcked = acks.until(items);
  const t0 = now();
  let next = 0;
  await Promise.all(
    Array.from({ length: SUBMIT_LANES }, async () => {
      while (next < items) {
        const i = next++;
        await runtime.submit({ runId: `${tag}-${i}`, input: payload });
      }
    }),
  );
  await allAcked;
  const ms = now() - t0;
  await worker.shutdown();
  return (items * 1000) / ms;
}

async function bulkRate(queue: Queue, store: ObjectStore, items: number, tag: string): Promise<number> {
  const bulk = new Bulk(queue, store, trivial, { queueName: `bulk-${tag}`, maxConcurrentItems: CONCURRENCY, logger: quiet });
  const worker = bulk.spawn();
  const inputs = Array.from({ length: items }, (_, n) => ({ n }));
  const t0 = now();
  const batch = await bulk.submit(inputs, { batchId: `bench-${tag}` });
  const report = await batch.done();
  const ms = now() - t0;
  await worker.shutdown();
  if (report.succeeded !== items) throw new Error(`bulk bench: ${report.succeeded} of ${items} items succeeded`);
  return (items * 1000) / ms;
}

async function run(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('bulk');
  try {
    const queue = await Queue.open(handle.store, 'bench', { logger: quiet });
    try {
      await runtimeRate(queue, ctx, handle.store, WARMUP, 'warm');
      await bulkRate(queue, handle.store, WARMUP, 'warm');
      const runtime = await runtimeRate(queue, ctx, handle.store, ITEMS, 'main');
      const bulk = await bulkRate(queue, handle.store, ITEMS, 'main');
      const ratio = Math.round((bulk / runtime) * 100) / 100;
      const fields = { items: ITEMS, phases: 2, concurrency: CONCURRENCY, warmup_items: WARMUP };
      ctx.emit('items_per_s', bulk, 'items/s', { ...fields, runtime_items_per_s: Math.round(runtime), ratio_to_runtime: ratio });
      ctx.emit('runtime_items_per_s', runtime, 'runs/s', fields);
      ctx.emit('ratio_to_runtime', ratio, 'x', fields);
      log(`  bulk ${bulk.toFixed(0)} items/s; runtime single-step ${runtime.toFixed(0)} runs/s; ratio ${ratio}`);
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'bulk.items', stores: ['memory', 'fs'], run }];
export default benchmarks;
