/**
 * The writer's state that KvDb and its rooms share: the current manifest and the readable tree
 * (memtable, frozen memtables, tables), the last sequence number, the kept fences, the garbage
 * collector, and whether the engine stopped. Recovery (recovery/), flushes (flush/), compaction
 * (compaction/) and KvDb's commits all work on this one object. The manifest changes only
 * through `publish`.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { FenceLedger } from './fencing/fence-ledger.js';
import { tableName } from './format.js';
import { GarbageCollector } from './gc/garbage-collector.js';
import type { ResolvedKvDbOptions } from './kv-options.js';
import { LsmTree } from './lsm-tree.js';
import type { ManifestData, SortedRun } from './manifest/manifest.js';
import type { ManifestStore, VersionedManifest } from './manifest/manifest-store.js';
import { Memtable } from './memtable.js';

export class WriterState {
  readonly tree: LsmTree;
  readonly fences: FenceLedger;
  readonly gc: GarbageCollector;
  lastSeq: number;
  /** Why the engine stopped accepting calls (see KvDb.poison); undefined while it runs. */
  failure: unknown;
  /** Set when close() starts: no new calls, compaction stops, frozen memtables still flush. */
  closing = false;
  private manifestLock: Promise<unknown> = Promise.resolve();
  /** Tables this writer has named so far (names carry the epoch, so writers never collide). */
  private tablesNamed = 0;

  constructor(
    readonly store: ObjectStore,
    readonly options: ResolvedKvDbOptions,
    readonly manifests: ManifestStore,
    public manifest: VersionedManifest,
  ) {
    this.tree = new LsmTree(store, options.path, options.mergeOperator, new Memtable(options.mergeOperator), options.blockCacheBytes);
    this.tree.tables = this.tree.buildTableSet(manifest.data.runs);
    this.lastSeq = manifest.data.lastSeq;
    this.fences = new FenceLedger(manifest.data.fences);
    this.gc = new GarbageCollector(store, options.path, this.tree, this.fences);
  }

  /** This writer's epoch (the claimed manifest's; publishing keeps it). */
  get epoch(): number {
    return this.manifest.data.epoch;
  }

  /**
   * Applies `change` to the current manifest under a lock (flushes and compaction both edit it)
   * and swaps it in; then swaps the readable table set (and runs `withSwap` atomically with it). `obsolete` tables are deleted once no
   * read that could still see them is running.
   */
  publish(change: (current: ManifestData) => ManifestData, obsolete: SortedRun, withSwap?: () => void): Promise<void> {
    const run = this.manifestLock.then(async () => {
      const next = { ...change(this.manifest.data), fences: this.fences.toManifest() };
      const previous = this.manifest.id;
      this.manifest = await this.manifests.publish(this.manifest, next);
      this.gc.retireManifest(this.manifests.key(previous));
      const old = this.tree.tables;
      this.tree.tables = this.tree.buildTableSet(next.runs);
      // In the same synchronous step as the swap: a flushed memtable must leave the read path
      // exactly when its table joins it, or a read could count its merge operands twice.
      withSwap?.();
      this.gc.retireTables(old, obsolete);
    });
    this.manifestLock = run.catch(() => undefined);
    return run;
  }

  /** The name of the next table this writer writes. */
  nameTable(): string {
    return tableName(this.epoch, ++this.tablesNamed);
  }
}
