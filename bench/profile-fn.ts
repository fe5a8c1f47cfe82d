/**
 * A CPU profile of a workflow function chain's worker phase alone (`ctx.step` x3 per run, as in
 * workflow.fn; no start-up, submission or warm-up in it), for docs/performance.md:
 *
 *   npx tsx bench/profile-fn.ts [memory|fs] [out.cpuprofile]
 *   npx tsx bench/profile-summary.ts out.cpuprofile
 */
import { Queue } from '../src/core/queue/index.js';
import { MemoryObjectStore } from '../src/core/objects/memory-store.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { NoopTerminalHook, WorkflowRuntime } from '../src/core/workflow/index.js';
import { CONCURRENCY, PAYLOAD_BYTES, STEPS, countAcks, fnChain, quiet } from './chain-workload.js';
import { tempDir } from './harness.js';
import { profileWindows } from './profile-windows.js';

const [storeName = 'memory', out = `/tmp/fn-${storeName}.cpuprofile`] = process.argv.slice(2);
const RUNS = 2000;
const store = storeName === 'fs' ? new FileSystemObjectStore({ root: tempDir('profile-fn') }) : new MemoryObjectStore();
const queue = await Queue.open(store, 'bench', { logger: quiet });
const acks = countAcks(queue);
const runtime = new WorkflowRuntime(queue, store, { workflows: [fnChain] }, new NoopTerminalHook(), { maxConcurrentSteps: CONCURRENCY, logger: quiet });
const payload = new Uint8Array(PAYLOAD_BYTES).fill(42);

/** Starts `RUNS` runs, then works them until each has ended; resolves with ctx.steps per second. */
async function window(tag: string, onWorkStart?: () => void): Promise<number> {
  for (let i = 0; i < RUNS; i++) await runtime.start(fnChain, payload, { runId: `${tag}-${i}` });
  const allAcked = acks.until(RUNS);
  onWorkStart?.();
  const t0 = performance.now();
  const worker = runtime.spawn();
  await allAcked;
  const ms = performance.now() - t0;
  await worker.shutdown();
  return (RUNS * STEPS * 1000) / ms;
}

await window('warm');
await profileWindows(out, 3, 'ctx.steps/s', window);
await queue.close();
