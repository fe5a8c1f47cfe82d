/**
 * A CPU profile of a workflow function chain's worker phase alone (`ctx.step` x3 per run, as in
 * workflow.fn; no start-up, submission or warm-up in it), for docs/performance.md:
 *
 *   npx tsx bench/profile-fn.ts [memory|fs] [out.cpuprofile]
 *   npx tsx bench/profile-summary.ts out.cpuprofile
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Queue } from '../src/core/queue/index.js';
import { MemoryObjectStore } from '../src/core/objects/memory-store.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { NoopTerminalHook, WorkflowRuntime, defineWorkflow } from '../src/core/workflow/index.js';
import { countAcks, quiet } from './chain-workload.js';
import { tempDir } from './harness.js';

const [storeName = 'memory', out = `/tmp/fn-${storeName}.cpuprofile`] = process.argv.slice(2);
const RUNS = 2000;
const store = storeName === 'fs' ? new FileSystemObjectStore({ root: tempDir('profile-fn') }) : new MemoryObjectStore();
const queue = await Queue.open(store, 'bench', { logger: quiet });
const acks = countAcks(queue);
const chain = defineWorkflow({
  name: 'profile-chain',
  async run(ctx, input: Uint8Array): Promise<Uint8Array> {
    let p = input;
    p = await ctx.step('s1', () => p);
    p = await ctx.step('s2', () => p);
    p = await ctx.step('s3', () => p);
    return p;
  },
});
const runtime = new WorkflowRuntime(queue, store, { workflows: [chain] }, new NoopTerminalHook(), { maxConcurrentSteps: 16, logger: quiet });
const payload = new Uint8Array(100).fill(42);

/** Starts `RUNS` runs, then works them until each has ended; `onWorkStart` just before the worker starts. */
async function window(tag: string, onWorkStart?: () => void): Promise<number> {
  for (let i = 0; i < RUNS; i++) await runtime.start(chain, payload, { runId: `${tag}-${i}` });
  const allAcked = acks.until(RUNS);
  onWorkStart?.();
  const t0 = performance.now();
  const worker = runtime.spawn();
  await allAcked;
  const ms = performance.now() - t0;
  await worker.shutdown();
  return ms;
}

await window('warm');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
let profiling = false;
for (let w = 0; w < 3; w++) {
  const ms = await window(`run${w}`, () => {
    if (!profiling) void session.post('Profiler.start');
    profiling = true;
  });
  console.log(`window ${w}: ${((RUNS * 3 * 1000) / ms).toFixed(0)} ctx.steps/s`);
}
const { profile } = await session.post('Profiler.stop');
writeFileSync(out, JSON.stringify(profile));
console.log(`profile written to ${out}`);
await queue.close();
