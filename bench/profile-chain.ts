/**
 * A CPU profile of the workflow.chain worker phase alone (no start-up, submission or warm-up in
 * it), for docs/performance.md:
 *
 *   npx tsx bench/profile-chain.ts [memory|fs] [out.cpuprofile] [keyed]
 *   npx tsx bench/profile-summary.ts out.cpuprofile
 */
import { Queue } from '../src/core/queue/index.js';
import { MemoryObjectStore } from '../src/core/objects/memory-store.js';
import { FileSystemObjectStore } from '../src/node/fs-store.js';
import { countAcks, quiet, runChain } from './chain-workload.js';
import { tempDir } from './harness.js';
import { profileWindows } from './profile-windows.js';

// `keyed`: every run under a concurrency key, as in the bench's keyed windows (chain-workload.ts).
const [storeName = 'memory', out = `/tmp/chain-${storeName}.cpuprofile`, variant] = process.argv.slice(2);
const keyed = variant === 'keyed';
const store = storeName === 'fs' ? new FileSystemObjectStore({ root: tempDir('profile-chain') }) : new MemoryObjectStore();
const queue = await Queue.open(store, 'bench', { logger: quiet });
const acks = countAcks(queue);
await runChain(queue, acks, store, 1500, 'warm', undefined, keyed);
await profileWindows(out, 3, 'steps/s', async (tag, onWorkStart) => {
  const { workMs } = await runChain(queue, acks, store, 2000, tag, onWorkStart, keyed);
  return (2000 * 3 * 1000) / workMs;
});
await queue.close();
