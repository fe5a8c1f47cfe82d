import { systemClock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { VersionedEntry } from './entry.js';
import { sstObjectKey } from './format.js';
import type { SstMeta } from './manifest.js';
import { SstBuilder, type BuiltTable } from './sst-builder.js';

const YIELD_EVERY = 4096;

function yieldToEventLoop(): Promise<void> {
  return systemClock.sleep(0);
}

export interface SortedRunOptions {
  readonly blockBytes: number;
  readonly targetBytes: number;
  /** Hands out table ids (the caller persists the counter in the manifest). */
  readonly allocateId: () => number;
  /** Cache bytes of decoded blocks to hand to `stored` over the whole run (default 0). */
  readonly warmBytes?: number;
  /**
   * Called once per table right after its put succeeded, with its index and its first blocks
   * decoded, so the reader of a fresh table starts warm.
   */
  readonly stored?: (table: BuiltTable) => void;
}

/**
 * Writes entries (ascending, one per key) as a sorted run: one or more tables split at
 * `targetBytes`, each stored with a create-only put. Returns the run's metadata in key order.
 */
export async function writeSortedRun(
  store: ObjectStore,
  path: string,
  entries: AsyncIterable<VersionedEntry> | Iterable<VersionedEntry>,
  options: SortedRunOptions,
): Promise<SstMeta[]> {
  const run: SstMeta[] = [];
  let warmLeft = options.warmBytes ?? 0;
  let builder = new SstBuilder(options.blockBytes, warmLeft);
  const finish = async (): Promise<void> => {
    if (builder.count === 0) return;
    const id = options.allocateId();
    const table = builder.finish(id);
    await store.put(sstObjectKey(path, id), table.bytes, { ifNoneMatch: '*' });
    run.push(table.meta);
    options.stored?.(table);
    for (const b of table.warm) warmLeft -= b.bytes;
    builder = new SstBuilder(options.blockBytes, Math.max(0, warmLeft));
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
