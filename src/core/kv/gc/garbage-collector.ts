/**
 * Deleting what the writer no longer needs, off the flush and compaction path: WAL objects and
 * log segments a flush moved past, tables a flush or compaction replaced (once no read can still
 * see them), superseded manifests, and, once per open, the garbage older writers left
 * (garbage.ts). Every delete goes through one DeleteQueue. Best effort: what is missed is
 * collected at the next open.
 */
import type { ObjectStore } from '../../objects/object-store.js';
import type { FenceLedger } from '../fencing/fence-ledger.js';
import { tableObjectKey, walObjectKey } from '../format.js';
import type { TableSet, LsmTree } from '../lsm-tree.js';
import type { SortedRun } from '../manifest/manifest.js';
import type { VersionedManifest } from '../manifest/manifest-store.js';
import { comparePositions, logSegmentKey, type LogPosition } from '../wal/log-format.js';
import { listLogSegments } from '../wal/log-replay.js';
import { DeleteQueue } from './delete-queue.js';
import { collectGarbage } from './garbage.js';

export class GarbageCollector {
  private readonly deletes: DeleteQueue;
  /** The open's collection of older writers' garbage, with the log-segment retirements chained after it. */
  private collection: Promise<void> = Promise.resolve();
  /** Table sets swapped out of the read path, oldest first, until no read holds them. */
  private readonly retired: TableSet[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
    private readonly tree: LsmTree,
    private readonly fences: FenceLedger,
  ) {
    this.deletes = new DeleteQueue(store);
  }

  /** Starts collecting the garbage of crashed or fenced writers in the background (see garbage.ts). */
  collectOrphans(manifest: VersionedManifest): void {
    this.collection = collectGarbage(this.store, this.path, manifest, this.fences, this.deletes).catch(() => undefined);
  }

  /** Deletes the WAL objects `from..to` a flush moved `walStart` past, except the kept fences. */
  retireWal(from: number, to: number): void {
    const retiredWal: string[] = [];
    for (let id = from; id <= to; id++) if (!this.fences.isFence(id)) retiredWal.push(walObjectKey(this.path, id));
    this.deletes.add(retiredWal);
  }

  /** Deletes the log segments before the manifest's `logStart` (in tables, or past a sealed end). */
  retireLogSegments(start: LogPosition | undefined): void {
    if (!start) return;
    const { path } = this;
    const retire = async (): Promise<void> => {
      const doomed: string[] = [];
      for (const [epoch, segments] of await listLogSegments(this.store, path)) {
        for (const segment of segments) if (comparePositions([epoch, segment], start) < 0) doomed.push(logSegmentKey(path, epoch, segment));
      }
      this.deletes.add(doomed);
    };
    // Best effort: what is missed is retired at the next flush.
    this.collection = this.collection.then(retire).catch(() => undefined);
  }

  /** Deletes a manifest a newer one of this writer superseded. */
  retireManifest(key: string): void {
    this.deletes.add([key]);
  }

  /** Deletes the `obsolete` tables that `set` replaced once no read holds `set` or an older set. */
  retireTables(set: TableSet, obsolete: SortedRun): void {
    set.obsolete = [...obsolete];
    this.retired.push(set);
    this.deleteUnreadTables();
  }

  /** Deletes the obsolete tables of retired sets no read holds any more, oldest set first. */
  deleteUnreadTables(): void {
    while (this.retired.length > 0 && this.retired[0].activeReads === 0) {
      const set = this.retired.shift()!;
      for (const meta of set.obsolete) this.tree.cache.evictPrefix(`${meta.id}:`);
      this.deletes.add(set.obsolete.map((meta) => tableObjectKey(this.path, meta.id)));
    }
  }

  /** Resolves when the collection of orphans and the log-segment retirements have run. */
  collected(): Promise<void> {
    return this.collection;
  }

  /** Resolves when every queued delete has been attempted. */
  idle(): Promise<void> {
    return this.deletes.idle();
  }
}
