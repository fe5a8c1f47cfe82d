/**
 * A read-only handle on an engine path, for dashboards and CLIs in another process or tab. It
 * never writes and never bumps the epoch. It sees whole commits only (WAL objects are applied
 * entirely or not at all) as of its last `refresh()`.
 */
import { NotFoundError, isTaqubaError } from '../errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import { checkObjectStore } from '../options.js';
import { readInOrder } from '../read-ahead.js';
import { resolveKvDbOptions, type KvDbOptions, type ResolvedKvDbOptions } from './kv-options.js';
import { LsmTree } from './lsm-tree.js';
import { ManifestStore, type VersionedManifest } from './manifest/manifest-store.js';
import { Memtable } from './memtable.js';
import { resolveBounds } from './scan-range.js';
import { checkKey } from './transaction.js';
import type { KvEntry, KvReadable, ScanRange } from './types.js';
import { denseLength, listWalIds, readWal, WAL_READ_AHEAD } from './wal/wal-replay.js';
import type { LogEnd, LogPosition } from './wal/log-format.js';
import { firstNeededSegment, listLogSegments, readEpochBatches, readLogEnd } from './wal/log-replay.js';
import type { WalCommit } from './wal/wal-format.js';

const REFRESH_ATTEMPTS = 8;

/** One epoch's log as read by a refresh, before it is applied. */
interface ReadLog {
  readonly epoch: number;
  /**
   * `sealed`: its end was recorded before it was read, the batches reach it. `open`: a live
   * writer's log (more may come). `abandoned`: never sealed, and never will be (see settleLogs).
   */
  readonly state: 'sealed' | 'open' | 'abandoned';
  readonly batches: { readonly position: LogPosition; readonly commits: readonly WalCommit[] }[];
}

export class KvReader implements KvReadable {
  private tree: LsmTree | undefined;
  /** The manifest the tables were loaded from. */
  private manifestId: number | undefined;
  private nextWalId = 1;
  private lastSeq = 0;
  private epoch = 0;
  private refreshing: Promise<void> | undefined;
  /** Log segments not yet applied to their end start here (RFC 0002). */
  private logFrom: LogPosition | undefined;
  /** Recorded ends of sealed epochs (they never change). */
  private readonly logEnds = new Map<number, LogEnd>();
  /** The newest seq applied from each epoch's log while it was still open (not sealed). */
  private readonly appliedWhileOpen = new Map<number, number>();

  private constructor(
    private readonly store: ObjectStore,
    private readonly options: ResolvedKvDbOptions,
    private readonly manifests: ManifestStore,
  ) {}

  /** Opens and loads the current state. Rejects with NOT_FOUND when no engine exists at the path. */
  static async open(store: ObjectStore, options: KvDbOptions = {}): Promise<KvReader> {
    checkObjectStore(store);
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
        this.manifestId = undefined;
      }
    }
  }

  /** The newest manifest when it differs from the loaded one (a listing, and a read only on change). */
  private async changedManifest(): Promise<VersionedManifest | undefined> {
    if (this.manifestId !== undefined && this.tree && (await this.manifests.ids(this.manifestId)).length === 0) return undefined;
    const current = await this.manifests.latest();
    if (!current) throw new NotFoundError(`no engine at this path. path=${this.options.path}`, { path: this.options.path });
    return current.id === this.manifestId ? undefined : current;
  }

  private async catchUp(): Promise<void> {
    const current = await this.changedManifest();
    if (current) {
      this.epoch = current.data.epoch;
      const memtable = new Memtable(this.options.mergeOperator);
      const tree = this.tree ?? new LsmTree(this.store, this.options.path, this.options.mergeOperator, memtable, this.options.blockCacheBytes);
      tree.memtable = memtable;
      tree.tables = tree.buildTableSet(current.data.runs);
      this.tree = tree;
      this.manifestId = current.id;
      this.nextWalId = current.data.walStart;
      this.lastSeq = current.data.lastSeq;
      this.logFrom = current.data.logStart;
      this.appliedWhileOpen.clear();
    }
    const tree = this.tree!; // set above on the first refresh (changedManifest returns a manifest until then)
    // Log bytes are read before the WAL is listed: a newer epoch's commit record exists only
    // after its writer fenced the WAL, so every older WAL object it replayed is in the listing
    // that follows. (Listing the WAL first could miss an older writer's object still landing in a
    // fence window, while the newer log's records moved appliedSeq past it for good.)
    const logs = await this.readLogs();
    const walIds = await this.listWal();
    // The writer deletes WAL objects and segments only after publishing a manifest that no
    // longer needs them. A newer manifest now means our listings may lack some of them (a kept
    // fence can even make the WAL run look whole): start over from it. None means nothing we
    // listed had been retired; what goes while we read is NOT_FOUND, which starts over too.
    if ((await this.manifests.ids(this.manifestId)).length > 0) throw new NotFoundError('manifest moved during refresh', { reason: 'manifest_moved' });
    const wals: { id: number; epoch: number; commits: readonly WalCommit[] }[] = [];
    await readInOrder(walIds, WAL_READ_AHEAD, (id) => readWal(this.store, this.options.path, id), (id, wal) => {
      if (!wal) throw new NotFoundError(`wal object vanished. id=${id}`, { id });
      wals.push({ id, epoch: wal.epoch, commits: wal.commits });
    });
    await this.settleLogs(logs, wals);
    this.checkNotRolledBack(logs);
    // Each epoch wrote either WAL objects or a log: apply in epoch order, as the writer replays.
    for (const wal of wals) {
      if (!this.applyLogs(tree, logs, wal.epoch)) return;
      this.apply(tree, wal.commits);
      this.nextWalId = wal.id + 1;
    }
    this.applyLogs(tree, logs, Number.POSITIVE_INFINITY);
  }

  private apply(tree: LsmTree, commits: readonly WalCommit[]): void {
    for (const commit of commits) {
      if (commit.seq <= this.lastSeq) continue;
      for (const e of commit.entries) tree.memtable.add(e, commit.seq);
      this.lastSeq = commit.seq;
    }
  }

  /**
   * Reads the log segments not yet applied, epoch by epoch: a sealed epoch up to its recorded
   * end, a live writer's segments up to their first incomplete record (a record being appended
   * waits for the next refresh).
   */
  private async readLogs(): Promise<ReadLog[]> {
    const listed = await listLogSegments(this.store, this.options.path);
    const logs: ReadLog[] = [];
    for (const [epoch, segments] of listed) {
      if (this.logFrom && epoch < this.logFrom[0]) continue;
      logs.push(await this.readLog(epoch, segments));
    }
    return logs;
  }

  private async readLog(epoch: number, segments: readonly number[]): Promise<ReadLog> {
    let end = this.logEnds.get(epoch);
    if (!end) {
      end = await readLogEnd(this.store, this.options.path, epoch);
      if (end) this.logEnds.set(epoch, end);
    }
    const first = firstNeededSegment(epoch, this.logFrom);
    const run = wholeRun(segments, epoch, this.logFrom);
    // A segment still needed is gone while later ones are there, or a sealed epoch's run stops
    // short of its end (all its segments existed before the seal): retired under us, or lost.
    const short = end !== undefined && end.segment >= first && (run.at(-1) ?? 0) < end.segment;
    if (short || (run.length === 0 && segments.some((n) => n > first))) {
      throw new NotFoundError(`log segment missing. epoch=${epoch} segment=${(run.at(-1) ?? first - 1) + 1}`, { reason: 'log_segment_missing' });
    }
    const batches: ReadLog['batches'] = [];
    for await (const batch of readEpochBatches(this.store, this.options.path, epoch, run, this.logFrom, end)) batches.push(batch);
    return { epoch, state: end ? 'sealed' : 'open', batches };
  }

  /**
   * Decides each unsealed log that something of a newer epoch follows. A newer writer writes a
   * commit record or a WAL object (fence or commits) only after sealing the older logs it saw, so
   * once one exists the older log's end is recorded now or never: read again up to the end, or,
   * with none (its writer started its log after the newer one listed the logs, and failed its
   * open without acknowledging anything), nothing more will come from it.
   */
  private async settleLogs(logs: ReadLog[], wals: readonly { epoch: number }[]): Promise<void> {
    for (const [i, log] of logs.entries()) {
      if (log.state !== 'open') continue;
      const newer = wals.some((w) => w.epoch > log.epoch) || logs.some((l) => l.epoch > log.epoch && l.batches.some((b) => b.commits.length > 0));
      if (!newer) continue;
      const again = await this.readLog(log.epoch, (await listLogSegments(this.store, this.options.path)).get(log.epoch) ?? []);
      logs[i] = again.state === 'sealed' ? again : { ...again, state: 'abandoned' };
    }
  }

  /**
   * NOT_FOUND (start over from the manifest) when a log we applied while it was open turned out
   * sealed before records we applied: a sealer measured the log while its last record was still
   * being written, so that record was never acknowledged, and the next writer reuses its seqs
   * (applied, they would hide the next writer's commits for good).
   */
  private checkNotRolledBack(logs: readonly ReadLog[]): void {
    for (const log of logs) {
      const applied = this.appliedWhileOpen.get(log.epoch);
      if (log.state === 'open' || applied === undefined) continue;
      const kept = Math.max(0, ...log.batches.flatMap((b) => b.commits.map((c) => c.seq)));
      if (kept < applied) throw new NotFoundError(`log sealed before records this reader applied. epoch=${log.epoch}`, { reason: 'log_rolled_back' });
    }
  }

  /**
   * Applies the read logs of epochs below `beforeEpoch`, removing them from `logs`. False when
   * one of them is still open: what comes after it must wait for the next refresh.
   */
  private applyLogs(tree: LsmTree, logs: ReadLog[], beforeEpoch: number): boolean {
    while (logs.length > 0 && logs[0].epoch < beforeEpoch) {
      const log = logs.shift()!;
      for (const { position, commits } of log.batches) {
        this.apply(tree, commits);
        this.logFrom = position;
        const newest = commits.at(-1)?.seq;
        if (log.state === 'open' && newest !== undefined) this.appliedWhileOpen.set(log.epoch, Math.max(newest, this.appliedWhileOpen.get(log.epoch) ?? 0));
      }
      if (log.state === 'open') return false;
      this.appliedWhileOpen.delete(log.epoch);
      this.logFrom = [log.epoch + 1, 0];
    }
    return true;
  }

  /**
   * WAL ids to apply: the run without gaps from the next id. Ids missing at the start mean the
   * writer retired WAL objects (after a memtable flush) since our manifest read: start over from
   * the newer manifest. A gap further on is a fence window still landing; stop before it.
   */
  private async listWal(): Promise<number[]> {
    const ids = await listWalIds(this.store, this.options.path, this.nextWalId);
    const dense = denseLength(ids, this.nextWalId);
    if (dense === 0 && ids.length > 0 && (await this.manifests.ids(this.manifestId)).length > 0) {
      throw new NotFoundError('wal objects retired during refresh', { reason: 'manifest_moved' });
    }
    return ids.slice(0, dense);
  }

  private async withRetry<T>(read: (tree: LsmTree) => Promise<T>): Promise<T> {
    try {
      return await read(this.tree!);
    } catch (e) {
      if (!isTaqubaError(e, 'NOT_FOUND')) throw e;
      this.manifestId = undefined;
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

/**
 * The segments of `epoch` to read: the run without gaps from the first one still needed (a
 * segment created during the listing may be missing before a later one: stop before the gap,
 * as with WAL objects; the next refresh goes on).
 */
function wholeRun(segments: readonly number[], epoch: number, from: LogPosition | undefined): readonly number[] {
  let next = firstNeededSegment(epoch, from);
  const run: number[] = [];
  for (const segment of segments) {
    if (segment < next) continue;
    if (segment !== next) break;
    run.push(segment);
    next++;
  }
  return run;
}
