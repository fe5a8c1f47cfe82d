/**
 * A read-only handle on an engine path, for dashboards and CLIs in another process or tab. It
 * never writes and never bumps the epoch. It sees whole commits only (WAL objects are applied
 * entirely or not at all) as of its last `refresh()`.
 */
import { NotFoundError, isTaqubaError } from '../errors.js';
import type { ObjectStore, ObjectVersion } from '../objects/object-store.js';
import { resolveKvDbOptions, type KvDbOptions, type ResolvedKvDbOptions } from './kv-options.js';
import { LsmTree } from './lsm-tree.js';
import { ManifestStore } from './manifest/manifest-store.js';
import { Memtable } from './memtable.js';
import { resolveBounds } from './scan-range.js';
import { checkKey } from './transaction.js';
import type { KvEntry, KvReadable, ScanRange } from './types.js';
import { listWalIds, readWal } from './wal/wal-replay.js';

const REFRESH_ATTEMPTS = 8;

export class KvReader implements KvReadable {
  private tree: LsmTree | undefined;
  private manifestVersion: ObjectVersion | undefined;
  private nextWalId = 1;
  private lastSeq = 0;
  private epoch = 0;
  private refreshing: Promise<void> | undefined;

  private constructor(
    private readonly store: ObjectStore,
    private readonly options: ResolvedKvDbOptions,
    private readonly manifests: ManifestStore,
  ) {}

  /** Opens and loads the current state. Rejects with NOT_FOUND when no engine exists at the path. */
  static async open(store: ObjectStore, options: KvDbOptions = {}): Promise<KvReader> {
    const resolved = resolveKvDbOptions(options);
    const reader = new KvReader(store, resolved, new ManifestStore(store, resolved.path));
    await reader.refresh();
    return reader;
  }

  /** Catches up with the writer: new WAL objects, or a new manifest (tables) when it changed. */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.catchUp();
      } catch (e) {
        // The writer may delete a WAL object or table between our listing and our read; the
        // newer manifest no longer needs it, so start over from that.
        if (!isTaqubaError(e, 'NOT_FOUND') || attempt >= REFRESH_ATTEMPTS) throw e;
        this.manifestVersion = undefined;
      }
    }
  }

  private async catchUp(): Promise<void> {
    const current = await this.manifests.read();
    if (!current) throw new NotFoundError(`no engine at this path. path=${this.options.path}`, { path: this.options.path });
    this.epoch = current.data.epoch;
    if (current.version !== this.manifestVersion || !this.tree) {
      const memtable = new Memtable(this.options.mergeOperator);
      const tree = this.tree ?? new LsmTree(this.store, this.options.path, this.options.mergeOperator, memtable, this.options.blockCacheBytes);
      tree.memtable = memtable;
      tree.tables = tree.buildTableSet(current.data.runs);
      this.tree = tree;
      this.manifestVersion = current.version;
      this.nextWalId = current.data.walStart;
      this.lastSeq = current.data.lastSeq;
    }
    const tree = this.tree;
    for (const id of await this.listWal()) {
      const wal = await readWal(this.store, this.options.path, id);
      if (!wal) throw new NotFoundError(`wal object vanished. id=${id}`, { id });
      for (const commit of wal.commits) {
        if (commit.seq <= this.lastSeq) continue;
        for (const e of commit.entries) tree.memtable.add(e, commit.seq);
        this.lastSeq = commit.seq;
      }
      this.nextWalId = id + 1;
    }
  }

  /**
   * WAL ids to apply. A gap can be the writer retiring WAL objects (after a memtable flush)
   * between our manifest read and our listing: if the manifest moved, start over from it.
   */
  private async listWal(): Promise<number[]> {
    try {
      return await listWalIds(this.store, this.options.path, this.nextWalId);
    } catch (e) {
      if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
      const now = await this.manifests.read();
      if (now && now.version !== this.manifestVersion) throw new NotFoundError('wal objects retired during refresh', { reason: 'manifest_moved' });
      throw e;
    }
  }

  private async withRetry<T>(read: (tree: LsmTree) => Promise<T>): Promise<T> {
    try {
      return await read(this.tree!);
    } catch (e) {
      if (!isTaqubaError(e, 'NOT_FOUND')) throw e;
      this.manifestVersion = undefined;
      await this.refresh();
      return read(this.tree!);
    }
  }

  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    checkKey(key);
    return this.withRetry((tree) => tree.get(key, Number.POSITIVE_INFINITY));
  }

  /** Entries in key order as of the last refresh. */
  async *scan(range?: ScanRange): AsyncIterable<KvEntry> {
    const bounds = resolveBounds(range);
    yield* this.tree!.scan(bounds, Number.POSITIVE_INFINITY);
  }

  /** The writer epoch named by the manifest at the last refresh (it rises when a new writer opens). */
  get writerEpoch(): number {
    return this.epoch;
  }

  /** Sequence number of the newest commit this reader has applied. */
  get appliedSeq(): number {
    return this.lastSeq;
  }

  async close(): Promise<void> {
    await this.refreshing?.catch(() => undefined);
    this.tree = undefined;
  }
}
