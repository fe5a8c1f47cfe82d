import { systemClock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { VersionedEntry } from './entry.js';
import { sstObjectKey } from './format.js';
import type { SstMeta } from './manifest.js';
import { SstBuilder } from './sst-builder.js';

const YIELD_EVERY = 4096;

function yieldToEventLoop(): Promise<void> {
  return systemClock.sleep(0);
}

/**
 * Writes entries (ascending, one per key) as a sorted run: one or more tables split at
 * `targetBytes`, each stored with a create-only put. Returns the run's metadata in key order.
 * `allocateId` hands out table ids (the caller persists the counter in the manifest).
 */
export async function writeSortedRun(
  store: ObjectStore,
  path: string,
  entries: AsyncIterable<VersionedEntry> | Iterable<VersionedEntry>,
  options: { blockBytes: number; targetBytes: number; allocateId: () => number },
): Promise<SstMeta[]> {
  const run: SstMeta[] = [];
  let builder = new SstBuilder(options.blockBytes);
  const finish = async (): Promise<void> => {
    if (builder.count === 0) return;
    const id = options.allocateId();
    const { bytes, meta } = builder.finish(id);
    await store.put(sstObjectKey(path, id), bytes, { ifNoneMatch: '*' });
    run.push(meta);
    builder = new SstBuilder(options.blockBytes);
  };
  if (Symbol.asyncIterator in entries) {
    for await (const entry of entries) {
      builder.add(entry);
      if (builder.estimatedSize >= options.targetBytes) await finish();
    }
  } else {
    // A synchronous source (a frozen memtable) is built in slices: `for await` would crawl one
    // entry per microtask behind a busy writer, one plain loop would block for the whole table.
    let sinceYield = 0;
    for (const entry of entries) {
      builder.add(entry);
      if (builder.estimatedSize >= options.targetBytes) await finish();
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  }
  await finish();
  return run;
}
