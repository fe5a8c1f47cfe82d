/**
 * bulk.items: item throughput of a bulk batch against the bare runtime, measured alternately in
 * one process and store. A window runs ITEMS single-step runs of the bare workflow runtime (the
 * step succeeds at once; no memo; submitted SUBMIT_LANES at a time while the worker runs
 * CONCURRENCY steps at a time, timed from the first submit to the last ack) and a bulk batch of
 * ITEMS items through a pipeline of two trivial phases (synchronous and without a cost, so neither
 * is stored on its own: the item's marker, committed with its acknowledgement, records the
 * outcome; see src/core/bulk/phase-memo.ts) (CONCURRENCY items at a time, timed from
 * `bulk.submit` to the resolved `batch.done()`: manifest written, every item's marker
 * acknowledged and its completion logged). WINDOWS windows, the order of the two swapped from one
 * window to the next (so drift in the machine's load or in JIT state favours neither), after a
 * warm-up of WARMUP of each. Figures are medians over the windows.
 *
 *   items_per_s           bulk items finished per second
 *   runtime_items_per_s   bare single-step runs finished per second (the workflow.chain step, one step per run)
 *   ratio_to_runtime      median over windows of items_per_s / runtime_items_per_s: what the batch layer costs
 *                         on top of the runtime (fields: the per-window ratios)
 *   cpu_us_per_item       process CPU per bulk item (user + system, every thread); the field
 *                         `runtime_cpu_us_per_run` is the same for the bare runs
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';
import { Queue } from '../src/core/queue/index.js';
import { Bulk, pipeline } from '../src/core/bulk/index.js';
import { NoopTerminalHook, StepOutcome, WorkflowRuntime } from '../src/core/workflow/index.js';
import { countAcks, quiet, type AckCounter } from './chain-workload.js';
import { log, median, now, type BenchContext, type Benchmark } from './harness.js';

const ITEMS = 1000;
const WINDOWS = 10;
// Short windows, many of them: on a shared machine the load changes from second to second, and a
// ratio is only as good as the two halves of its window were measured under the same load.
const WARMUP = 2000;
const CONCURRENCY = 16;
const SUBMIT_LANES = 16;

const trivial = pipeline<{ n: number }>()
  .phase('double', ({ n }) => n * 2)
  .phase('describe', (n) => `value ${n}`);

interface Rate {
  readonly perSecond: number;
  readonly cpuUsPerItem: number;
}

/** Items per second and process CPU per item of `work`, which finishes `items` items. */
async function measure(items: number, work: () => Promise<void>): Promise<Rate> {
  const cpu = process.cpuUsage();
  const t0 = now();
  await work();
  const ms = now() - t0;
  const used = process.cpuUsage(cpu);
  return { perSecond: (items * 1000) / ms, cpuUsPerItem: (used.user + used.system) / items };
}

async function runtimeRate(queue: Queue, acks: AckCounter, store: ObjectStore, items: number, tag: string): Promise<Rate> {
  const runtime = new WorkflowRuntime(queue, store, async (step) => StepOutcome.succeed(step.payload), new NoopTerminalHook(), {
    queueName: `runtime-${tag}`,
    maxConcurrentSteps: CONCURRENCY,
    logger: quiet,
  });
  const worker = runtime.spawn();
  const payload = new TextEncoder().encode(JSON.stringify({ n: 1 }));
  const rate = await measure(items, async () => {
    const allAcked = acks.until(items);
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
  });
  await worker.shutdown();
  return rate;
}

async function bulkRate(queue: Queue, store: ObjectStore, items: number, tag: string): Promise<Rate> {
  const bulk = new Bulk(queue, store, trivial, { queueName: `bulk-${tag}`, maxConcurrentItems: CONCURRENCY, logger: quiet });
  const worker = bulk.spawn();
  const inputs = Array.from({ length: items }, (_, n) => ({ n }));
  const rate = await measure(items, async () => {
    const batch = await bulk.submit(inputs, { batchId: `bench-${tag}` });
    const report = await batch.done();
    if (report.succeeded !== items) throw new Error(`bulk bench: ${report.succeeded} of ${items} items succeeded`);
  });
  await worker.shutdown();
  return rate;
}

async function run(ctx: BenchContext): Promise<void> {
  const handle = await ctx.freshStore('bulk');
  try {
    const queue = await Queue.open(handle.store, 'bench', { logger: quiet });
    try {
      // One counter for every window: each countAcks wraps ackWith once more.
      const acks = countAcks(queue);
      await runtimeRate(queue, acks, handle.store, WARMUP, 'warm');
      await bulkRate(queue, handle.store, WARMUP, 'warm');
      const runtime: Rate[] = [];
      const bulk: Rate[] = [];
      const ratios: number[] = [];
      for (let w = 0; w < WINDOWS; w++) {
        const runtimeFirst = w % 2 === 0;
        if (runtimeFirst) runtime.push(await runtimeRate(queue, acks, handle.store, ITEMS, `w${w}`));
        bulk.push(await bulkRate(queue, handle.store, ITEMS, `w${w}`));
        if (!runtimeFirst) runtime.push(await runtimeRate(queue, acks, handle.store, ITEMS, `w${w}`));
        ratios.push(bulk[w]!.perSecond / runtime[w]!.perSecond);
        log(`  window ${w}: bulk ${bulk[w]!.perSecond.toFixed(0)} items/s, runtime ${runtime[w]!.perSecond.toFixed(0)} runs/s, ratio ${ratios[w]!.toFixed(2)}`);
      }
      const round2 = (v: number): number => Math.round(v * 100) / 100;
      const bulkPerS = median(bulk.map((r) => r.perSecond));
      const runtimePerS = median(runtime.map((r) => r.perSecond));
      const ratio = round2(median(ratios));
      const bulkCpu = median(bulk.map((r) => r.cpuUsPerItem));
      const runtimeCpu = median(runtime.map((r) => r.cpuUsPerItem));
      const fields = { items: ITEMS, windows: WINDOWS, phases: 2, concurrency: CONCURRENCY, warmup_items: WARMUP };
      ctx.emit('items_per_s', bulkPerS, 'items/s', { ...fields, runtime_items_per_s: Math.round(runtimePerS), ratio_to_runtime: ratio });
      ctx.emit('runtime_items_per_s', runtimePerS, 'runs/s', fields);
      ctx.emit('ratio_to_runtime', ratio, 'x', { ...fields, window_ratios: ratios.map(round2), target: 0.7 });
      ctx.emit('cpu_us_per_item', bulkCpu, 'us', { ...fields, runtime_cpu_us_per_run: Math.round(runtimeCpu), cpu_ratio: round2(bulkCpu / runtimeCpu) });
      log(`  bulk ${bulkPerS.toFixed(0)} items/s (${bulkCpu.toFixed(0)} us CPU each); runtime single-step ${runtimePerS.toFixed(0)} runs/s (${runtimeCpu.toFixed(0)} us); ratio ${ratio}`);
    } finally {
      await queue.close();
    }
  } finally {
    await handle.dispose();
  }
}

const benchmarks: Benchmark[] = [{ name: 'bulk.items', stores: ['memory', 'fs'], run }];
export default benchmarks;
