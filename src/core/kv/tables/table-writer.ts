import { yieldToEventLoop } from '../../event-loop.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { VersionedEntry } from '../entry.js';
import { tableObjectKey } from '../format.js';
import type { SstMeta } from '../manifest/manifest.js';
import { SstBuilder, type BuiltTable } from './sst-builder.js';

/**
 * Entries added (and bytes copied) between two event-loop turns. A table write is background
 * work: one long synchronous stretch of it (4096 entries took 8-16 ms here) delays every claim
 * and commit waiting behind it, while a turn costs well under a millisecond of wall time.
 */
const YIELD_EVERY = 512;
const COPY_SLICE_BYTES = 512 * 1024;

/** Joins a table's parts into one buffer, yielding between slices of the copy. */
async function joinInSlices(parts: readonly Uint8Array[], size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let offset = 0;
  let sinceYield = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
    sinceYield += part.length;
    if (sinceYield >= COPY_SLICE_BYTES) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
  }
  return out;
}

export interface SortedRunOptions {
  readonly blockBytes: number;
  readonly targetBytes: number;
  /** Hands out table names, unique across writers (see tableName). */
  readonly allocateId: () => string;
  /** Cache bytes of blocks to hand to `stored` over the whole run (default 0). */
  readonly warmBytes?: number;
  /**
   * Called once per table right after its put succeeded, with its index and its first blocks,
   * so the reader of a fresh table starts warm.
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
    await store.put(tableObjectKey(path, id), await joinInSlices(table.parts, table.meta.size), { ifNoneMatch: '*' });
    run.push(table.meta);
    options.stored?.(table);
    for (const b of table.warm) warmLeft -= b.bytes;
    builder = new SstBuilder(options.blockBytes, Math.max(0, warmLeft));
  };
  let sinceYield = 0;
  if (Symbol.asyncIterator in entries) {
    // An async source (a compaction's merge) only waits for the store when it misses the cache,
    // and a chain of microtasks never lets timers or I/O callbacks run: yield here too.
    for await (const entry of entries) {
      builder.add(entry);
      if (builder.estimatedSize >= options.targetBytes) await finish();
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  } else {
    // A synchronous source (a frozen memtable) is built in slices: `for await` would crawl one
    // entry per microtask behind a busy writer, one plain loop would block for the whole table.
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
