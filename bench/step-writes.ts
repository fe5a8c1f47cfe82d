/**
 * What one workflow.chain step writes to the KV engine: the engine operations per step by key
 * space (pending, claimed, job index, dedup, stats, history, caller KV), counted at the memtable
 * while the chain runs on a memory store. CPU per step follows these counts (docs/performance.md):
 *
 *   npx tsx bench/step-writes.ts
 */
import { Memtable } from '../src/core/kv/memtable.js';
import type { VersionedEntry } from '../src/core/kv/entry.js';
import { MemoryObjectStore } from '../src/core/objects/memory-store.js';
import { Queue } from '../src/core/queue/index.js';
import { TAG } from '../src/core/queue/records/keys.js';
import { STEPS, countAcks, quiet, runChain } from './chain-workload.js';

const SPACE_NAMES = new Map<number, string>(Object.entries(TAG).map(([name, tag]) => [tag, name]));
const counts = new Map<string, number>();
let counting = false;
const add = Memtable.prototype.add;
Memtable.prototype.add = function (this: Memtable, entry: VersionedEntry, floorSeq: number, id?: string) {
  if (counting) {
    const space = entry.key[0] === TAG.user ? `user ${new TextDecoder().decode(entry.key.subarray(1)).split('/').slice(0, 2).join('/')}` : (SPACE_NAMES.get(entry.key[0]!) ?? 'other');
    const name = `${space} ${entry.kind}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return add.call(this, entry, floorSeq, id);
};

const RUNS = 2000;
const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'bench', { logger: quiet });
const acks = countAcks(queue);
await runChain(queue, acks, store, 300, 'warm');
counting = true;
await runChain(queue, acks, store, RUNS, 'count');
counting = false;
await queue.close();

const steps = RUNS * STEPS;
let total = 0;
for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1])) {
  total += n;
  console.log(`${(n / steps).toFixed(2).padStart(6)}  ${name}`);
}
console.log(`${(total / steps).toFixed(2).padStart(6)}  engine writes per step (${RUNS} runs of ${STEPS} steps; run submission and ending included)`);
