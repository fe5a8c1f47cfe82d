/**
 * KvDb: a transactional, ordered key-value engine whose only durable state is objects in an
 * ObjectStore (WAL objects, sorted tables, a sequence of manifests). The same engine runs over
 * memory, the filesystem, IndexedDB, OPFS and S3. This file ties the parts together: open
 * (fencing/claim-writer.ts), commit (wal/wal-writer.ts), memtable flush and compaction (each
 * published through manifest/manifest-store.ts), garbage (compaction/garbage.ts). The numbered
 * protocols are in docs/rfcs/0001-kv-engine.md.
 *
 * Durability contract: a durable commit (the default) resolves once the WAL object (or, on a
 * store with append logs, the log record) holding it is stored; a non-durable one resolves at once and becomes durable with the next flush (any later
 * durable commit flushes it first). Every commit is visible to readers in this process as soon
 * as `commit()` is called. A failed WAL put poisons the engine: all later calls reject (FENCED
 * when a newer writer took over, else CLOSED with the cause) until it is reopened, and nothing
 * that was not stored is ever acknowledged.
 */
import { EMPTY_BYTES, toHex } from '../bytes.js';
import { checkObjectStore } from '../options.js';
import { ClosedError, ConflictError, CorruptDataError, FencedError, InvalidArgumentError, InvalidConfigError, invariant, isTaqubaError } from '../errors.js';
import type { ObjectStore, WriterLock } from '../objects/object-store.js';
import { mergeRuns, pickCompaction } from './compaction/compaction.js';
import type { VersionedEntry } from './entry.js';
import { tableName, tableObjectKey, walObjectKey } from './format.js';
import { claimEpoch, fenceWal, type TakenId } from './fencing/claim-writer.js';
import { FenceLedger } from './fencing/fence-ledger.js';
import { collectGarbage } from './compaction/garbage.js';
import { resolveKvDbOptions, type KvDbOptions, type ResolvedKvDbOptions, type WalKind } from './kv-options.js';
import { DeleteQueue } from './compaction/delete-queue.js';
import { KvReader } from './kv-reader.js';
import { LsmTree, type TableSet } from './lsm-tree.js';
import type { ManifestData, SortedRun } from './manifest/manifest.js';
import { ManifestStore, type VersionedManifest } from './manifest/manifest-store.js';
import { Memtable } from './memtable.js';
import { resolveBounds, type Bounds } from './scan-range.js';
import { writeSortedRun } from './tables/table-writer.js';
import { Transaction, checkKey, type PendingWrite } from './transaction.js';
import type { CommitOptions, KvEntry, KvReadable, MergeOperator, ScanRange, WriteOp } from './types.js';
import { encodeCommit, type WalCommit, type WalObject } from './wal/wal-format.js';
import { comparePositions, logSealKey, logSegmentKey, type LogEnd, type LogPosition } from './wal/log-format.js';
import { checkSegmentsPresent, decideLogEnd, listLogEndEpochs, listLogSegments, measureLog, readEpochBatches, readLogEnd } from './wal/log-replay.js';
import { LogWalSink } from './wal/log-sink.js';
import { appendLogsOf, type AppendLogStore } from '../objects/append-log.js';
import { createObject } from '../objects/create-object.js';
import { checkNoDeletedWal, denseLength, listWalIds, readWal } from './wal/wal-replay.js';
import { WalWriter } from './wal/wal-writer.js';

/**
 * How far the WAL a memtable holds reaches: the last WAL object id, and the last log segment
 * (docs/rfcs/0002-wal-append-log.md) when logs were replayed or written. A flush moves the
 * manifest's `walStart` and `logStart` past them.
 */
interface WalMark {
  readonly walId: number;
  readonly log?: LogPosition;
}

/** A memtable frozen for flushing, with the WAL it covers (known once stored). */
interface FrozenMemtable {
  readonly memtable: Memtable;
  readonly walEnd: Promise<WalMark>;
}

/** An older epoch's log to replay at open: its segments and its recorded end. */
interface LogToReplay {
  readonly epoch: number;
  readonly segments: readonly number[];
  readonly end: LogEnd;
}

export interface TransactionOptions extends CommitOptions {
  /** Attempts before a CONFLICT is passed to the caller. Default 32. */
  readonly maxAttempts?: number;
}

/**
 * Share of the block cache a flushed run may fill with its own blocks (a whole default memtable
 * fits), and a compaction's output (it replaces tables whose cached blocks are then dropped; it
 * can be far larger than the cache, so only its first part is warmed).
 */
const FLUSH_WARM_FRACTION = 0.5;
const COMPACTION_WARM_FRACTION = 0.25;

// Not `implements TransactionHost`: those methods are internal (stripped from the published
// .d.ts, where the clause would then fail); `new Transaction(this, ...)` checks the shape.
export class KvDb implements KvReadable {
  private readonly tree: LsmTree;
  private readonly frozen: FrozenMemtable[] = [];
  private wal!: WalWriter;
  private lastSeq = 0;
  private readonly snapshots = new Map<number, number>();
  private readonly recentWrites = new Map<string, number>();
  private recentWritesLimit = 4096;
  private failure: unknown;
  /** Set when close() starts: no new calls, compaction stops, frozen memtables still flush. */
  private closing = false;
  private flushing: Promise<void> | undefined;
  private compacting: Promise<void> | undefined;
  private orphanCollection: Promise<void> = Promise.resolve();
  private manifestLock: Promise<unknown> = Promise.resolve();
  /** Commits waiting for frozen memtables to drain (write backpressure). */
  private stalled: (() => void)[] = [];
  private readonly retired: TableSet[] = [];
  private readonly deletes: DeleteQueue;
  /** Tables this writer has named so far (names carry the epoch, so writers never collide). */
  private tablesNamed = 0;
  private readonly fences: FenceLedger;
  /** The log sink when the WAL goes to an append log. */
  private logSink: LogWalSink | undefined;
  /** Older epochs' logs not replayed yet (open only), ascending. */
  private logsToReplay: LogToReplay[] = [];
  /** Whether open found any log segment (then even an object-WAL writer retires them). */
  private sawLogs = false;
  /** How far replay has got (open only); the live writer's marks come after it. */
  private replayed: WalMark;

  private constructor(
    private readonly store: ObjectStore,
    private readonly options: ResolvedKvDbOptions,
    private readonly manifests: ManifestStore,
    private manifest: VersionedManifest,
    private readonly lock: WriterLock | undefined,
  ) {
    this.deletes = new DeleteQueue(store);
    this.tree = new LsmTree(store, options.path, options.mergeOperator, new Memtable(options.mergeOperator), options.blockCacheBytes);
    this.tree.tables = this.tree.buildTableSet(manifest.data.runs);
    this.lastSeq = manifest.data.lastSeq;
    this.fences = new FenceLedger(manifest.data.fences);
    this.replayed = { walId: manifest.data.walStart - 1, log: undefined };
  }

  /** This writer's epoch; a later writer's open raises the stored one and fences this instance. */
  get epoch(): number {
    return this.manifest.data.epoch;
  }

  get mergeOperator(): MergeOperator | undefined {
    return this.options.mergeOperator;
  }

  /**
   * Opens the engine as the single writer of `options.path`, fencing any older writer: its next
   * write fails with FENCED, and every write it had acknowledged is replayed here. The protocol
   * is numbered in fencing/claim-writer.ts and docs/rfcs/0001-kv-engine.md.
   *
   * Takes the store's writer lock first when it has one (the filesystem store: a second live
   * process gets LOCKED at once). Rejects with INVALID_CONFIG, LOCKED, CORRUPT_DATA (naming the
   * object; also when engine objects exist without a manifest, in which case nothing is
   * written), FENCED (an even newer writer opened meanwhile), STORE_UNAVAILABLE.
   */
  static async open(store: ObjectStore, options: KvDbOptions = {}): Promise<KvDb> {
    checkObjectStore(store);
    const resolved = resolveKvDbOptions(options);
    const logs = chooseLogs(store, resolved.wal);
    const lock = await store.lockWriter?.(resolved.path);
    let db: KvDb | undefined;
    try {
      const manifests = new ManifestStore(store, resolved.path);
      const claimed = await claimEpoch(store, resolved.path, manifests, resolved.faults);
      const opening = new KvDb(store, resolved, manifests, claimed, lock);
      db = opening;
      await opening.recover(logs).catch(async (e: unknown) => {
        // A newer writer that overtook this open deletes what it no longer needs (segments, WAL
        // objects), which then looks missing here: that is being fenced, not damage. (Replay may
        // have published manifests of its own: compare with the newest of ours.)
        if (isTaqubaError(e, 'CORRUPT_DATA') && (await manifests.hasNewer(opening.manifest.id).catch(() => false))) {
          throw new FencedError(`a newer writer opened while this one was opening. epoch=${claimed.data.epoch}`, { epoch: claimed.data.epoch }, e);
        }
        throw e;
      });
      return db;
    } catch (e) {
      await db?.logSink?.close();
      await lock?.release();
      throw e;
    }
  }

  /** Opens a read-only handle (see KvReader). Rejects with NOT_FOUND when nothing is stored at the path. */
  static openReader(store: ObjectStore, options: KvDbOptions = {}): Promise<KvReader> {
    return KvReader.open(store, options);
  }

  /**
   * Steps 4-6 of the open protocol, with the log steps of RFC 0002 around them: our first
   * segment exists before anything is acknowledged, older epochs' logs are sealed and their ends
   * decided before replay, and replay goes in epoch order across WAL objects and logs.
   */
  private async recover(logs: AppendLogStore | undefined): Promise<void> {
    const { path } = this.options;
    if (logs) {
      this.logSink = new LogWalSink(this.store, logs, path, this.epoch, this.options.faults);
      await this.logSink.start();
      // A newer writer that listed the logs before our first segment existed did not seal us:
      // it has claimed a newer manifest, which this listing sees (the newest is never deleted).
      if (await this.manifests.hasNewer(this.manifest.id)) {
        throw new FencedError(`a newer writer opened while this one was opening. epoch=${this.epoch}`, { epoch: this.epoch });
      }
    }
    await this.sealOlderLogs();
    const walStart = this.manifest.data.walStart;
    const ids = await listWalIds(this.store, path, walStart);
    const dense = denseLength(ids, walStart);
    await checkNoDeletedWal(this.store, path, ids, walStart);
    for (const id of ids.slice(0, dense)) await this.replayWal(id);
    const fence = await fenceWal(this.store, path, this.epoch, walStart + dense, (taken) => this.replayTaken(taken), this.options.faults);
    this.fences.note(this.epoch, fence.firstOwned);
    // Objects listed past our windows can only be stray fences (see the WAL writer's put).
    await this.replayTaken(ids.slice(dense).filter((id) => id >= fence.nextId).map((id) => ({ id, afterOwn: true })));
    await this.replayLogsBefore(this.epoch);
    // Step 3 checked for a newer manifest before replay; an open slow enough can meanwhile be
    // overtaken by a writer that flushed and retired the very ids our fence then landed on
    // (create-only succeeds on a deleted id), so that fence proves nothing. A newer writer
    // publishes before it retires anything: none now means our fence stands.
    if (await this.manifests.hasNewer(this.manifest.id)) {
      throw new FencedError(`a newer writer opened while this one was opening. epoch=${this.epoch}`, { epoch: this.epoch });
    }
    const objectsEnd = fence.nextId - 1;
    // Object WAL on a path with logs: the first flush retires the replayed (and garbage) segments.
    const logsSeen = this.sawLogs;
    this.liveMark = this.logSink ? (segment) => ({ walId: objectsEnd, log: [this.epoch, segment] }) : (id) => ({ walId: id, log: logsSeen ? [this.epoch, 0] : undefined });
    this.wal = new WalWriter(this.store, path, this.epoch, this.logSink ? 1 : fence.nextId, this.options, (e) => this.poison(e), this.logSink);
    this.startFlushes();
    this.startCompaction();
    this.orphanCollection = collectGarbage(this.store, path, this.manifest, this.fences, this.deletes).catch(() => undefined);
  }

  /** Maps what the WAL writer's cut resolves with (a WAL id or a segment) to a mark. */
  private liveMark: (id: number) => WalMark = (id) => ({ walId: id });

  /**
   * RFC 0002, open steps 1-2: every older epoch with a log segment is sealed (its writer then
   * acknowledges nothing past the recorded end), and its end is read, or measured and recorded.
   * A log of a newer epoch means a newer writer: FENCED.
   */
  private async sealOlderLogs(): Promise<void> {
    const { path } = this.options;
    const found = await listLogSegments(this.store, path);
    this.sawLogs = found.size > 0;
    for (const epoch of found.keys()) {
      if (epoch > this.epoch) throw new FencedError(`a newer writer opened while this one was opening. epoch=${this.epoch} log_epoch=${epoch}`, { epoch: this.epoch });
      if (epoch === this.epoch) continue;
      await this.options.faults?.('open:seal-log', { epoch });
      await createObject(this.store, logSealKey(path, epoch), EMPTY_BYTES);
      // Listed again after the seal: a segment the old writer created before it is seen now.
      let segments = (await listLogSegments(this.store, path)).get(epoch) ?? [];
      const end = (await readLogEnd(this.store, path, epoch)) ?? (await decideLogEnd(this.store, path, await measureLog(this.store, path, epoch, segments)));
      // The old writer may have recorded an end in a segment created after our listing.
      if (end.segment > (segments.at(-1) ?? 0)) segments = (await listLogSegments(this.store, path)).get(epoch) ?? [];
      checkSegmentsPresent(path, epoch, segments, this.manifest.data.logStart, end);
      this.logsToReplay.push({ epoch, segments, end });
    }
    // An older epoch with a recorded end but no segment left: fine only when its end is in tables.
    const logStart = this.manifest.data.logStart;
    for (const epoch of await listLogEndEpochs(this.store, path, logStart?.[0] ?? 0)) {
      if (epoch >= this.epoch || found.has(epoch)) continue;
      const end = await readLogEnd(this.store, path, epoch);
      if (end) checkSegmentsPresent(path, epoch, [], logStart, end);
    }
  }

  /** Replays the older epochs' logs below `epoch`, in epoch order (see recover). */
  private async replayLogsBefore(epoch: number): Promise<void> {
    const from = this.manifest.data.logStart;
    while (this.logsToReplay.length > 0 && this.logsToReplay[0].epoch < epoch) {
      const log = this.logsToReplay.shift()!;
      for await (const { position, commits } of readEpochBatches(this.store, this.options.path, log.epoch, log.segments, from, log.end)) {
        // The mark says which segments a frozen memtable holds whole (a flush retires them): while
        // segment n is being applied, only those before it. Marking n itself would let a freeze
        // partway through n retire it while its later batches live only in the newer memtable.
        const before: LogPosition = [position[0], position[1] - 1];
        this.replayed = { ...this.replayed, log: maxPosition(this.replayed.log, before) };
        await this.applyCommits(commits);
      }
      if (log.end.segment > 0) this.replayed = { ...this.replayed, log: maxPosition(this.replayed.log, [log.epoch, log.end.segment]) };
    }
  }

  /** WAL objects other writers stored inside our fence windows: read at once, applied in order. */
  private async replayTaken(taken: readonly TakenId[]): Promise<void> {
    const wals = await Promise.all(taken.map(({ id }) => readWal(this.store, this.options.path, id)));
    for (let i = 0; i < taken.length; i++) await this.applyWal(taken[i].id, wals[i], taken[i].afterOwn);
  }

  private async replayWal(id: number): Promise<void> {
    await this.applyWal(id, await readWal(this.store, this.options.path, id), false);
  }

  /**
   * Applies one WAL object found at open. `afterGap`: the id before it was found empty, so it may
   * hold no commits (they would follow a lost object).
   */
  private async applyWal(id: number, wal: WalObject | undefined, afterGap: boolean): Promise<void> {
    if (!wal) return;
    if (wal.epoch > this.epoch) {
      throw new FencedError(`a newer writer opened while this one was opening. epoch=${this.epoch} wal_epoch=${wal.epoch}`, { epoch: this.epoch, walId: id });
    }
    if (afterGap && wal.commits.length > 0) {
      const object = walObjectKey(this.options.path, id - 1);
      throw new CorruptDataError(`wal object missing before one that holds commits. object=${object}`, { object, problem: 'wal_gap' });
    }
    await this.replayLogsBefore(wal.epoch);
    this.fences.note(wal.epoch, id);
    this.replayed = { ...this.replayed, walId: id };
    await this.applyCommits(wal.commits);
  }

  /** Applies replayed commits (those not in tables yet) and freezes a full memtable at the replay mark. */
  private async applyCommits(commits: readonly WalCommit[]): Promise<void> {
    for (const commit of commits) {
      if (commit.seq <= this.manifest.data.lastSeq) continue;
      for (const e of commit.entries) this.tree.memtable.add(e, commit.seq);
      this.lastSeq = Math.max(this.lastSeq, commit.seq);
    }
    if (this.tree.memtable.bytes >= this.options.memtableBytes) {
      this.freeze(Promise.resolve(this.replayed));
      // Leave frozen memtables to the background flusher unless too many pile up, which keeps
      // open fast and memory bounded on a long replay.
      if (this.frozen.length >= this.options.maxFrozenMemtables) await this.flushFrozen();
    }
  }

  // ---- reads -------------------------------------------------------------------------------

  /** The latest committed value of `key`. Rejects with INVALID_ARGUMENT, CLOSED, FENCED. */
  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.checkUsable();
    checkKey(key);
    return this.tree.get(key, Number.POSITIVE_INFINITY).catch((e: unknown) => this.tableGone(e));
  }

  /**
   * Entries in key order. Not a point-in-time snapshot: each entry is a committed value current
   * when the scan reached it (use a transaction's scan for a snapshot).
   */
  scan(range?: ScanRange): AsyncIterable<KvEntry> {
    this.checkUsable();
    return this.guardTables(this.tree.scan(resolveBounds(range), Number.POSITIVE_INFINITY));
  }

  /** @internal */
  readAt(key: Uint8Array, snapshot: number): Promise<Uint8Array | undefined> {
    this.checkUsable();
    return this.tree.get(key, snapshot).catch((e: unknown) => this.tableGone(e));
  }

  /** @internal */
  scanAt(bounds: Bounds, snapshot: number, overlay: readonly VersionedEntry[]): AsyncIterable<KvEntry> {
    this.checkUsable();
    return this.guardTables(this.tree.scan(bounds, snapshot, overlay));
  }

  /**
   * A read that found one of our tables gone: a newer writer took the store over and collected
   * it (we are fenced, and say so), or it is damage (the NOT_FOUND naming the table stands).
   */
  private async tableGone(e: unknown): Promise<never> {
    if (isTaqubaError(e, 'NOT_FOUND') && (await this.manifests.hasNewer(this.manifest.id).catch(() => false))) {
      throw new FencedError(`a newer writer took the store over and collected a table this read needed. epoch=${this.epoch}`, { epoch: this.epoch });
    }
    throw e;
  }

  /** `entries` with `tableGone` on a failed step (a thin wrapper: scans are the hot read path). */
  private guardTables(entries: AsyncIterable<KvEntry>): AsyncIterable<KvEntry> {
    const onError = (e: unknown): Promise<never> => this.tableGone(e);
    return {
      [Symbol.asyncIterator]() {
        const it = entries[Symbol.asyncIterator]();
        return {
          next: () => it.next().catch(onError),
          return: async (value?: unknown) => (it.return ? it.return(value) : { done: true as const, value: undefined }),
        };
      },
    };
  }

  // ---- writes ------------------------------------------------------------------------------

  /** Starts a transaction reading the current state. Call commit() or rollback() exactly once. */
  begin(): Transaction {
    this.checkUsable();
    const snapshot = this.lastSeq;
    this.snapshots.set(snapshot, (this.snapshots.get(snapshot) ?? 0) + 1);
    return new Transaction(this, snapshot);
  }

  /**
   * Runs `fn` in a transaction and commits it, retrying from scratch on CONFLICT up to
   * `maxAttempts` times. Returns what `fn` returned. A throw from `fn` rolls back.
   * Rejects with CONFLICT (attempts exhausted), CLOSED, FENCED, or whatever `fn` threw.
   */
  async transaction<T>(fn: (txn: Transaction) => Promise<T> | T, options: TransactionOptions = {}): Promise<T> {
    const maxAttempts = options.maxAttempts ?? 32;
    for (let attempt = 1; ; attempt++) {
      const txn = this.begin();
      try {
        const result = await fn(txn);
        await txn.commit(options);
        return result;
      } catch (e) {
        txn.rollback();
        if (!(isTaqubaError(e, 'CONFLICT') && attempt < maxAttempts)) throw e;
      }
    }
  }

  /** Applies blind writes atomically (no reads, so no conflict). See CommitOptions. */
  async write(ops: readonly WriteOp[], options: CommitOptions = {}): Promise<void> {
    const txn = this.begin();
    try {
      for (const op of ops) {
        const type = (op as { type?: unknown } | null)?.type;
        if (type === 'put') txn.put(op.key, (op as { value: Uint8Array }).value);
        else if (type === 'delete') txn.delete(op.key);
        else if (type === 'merge') txn.merge(op.key, (op as { value: Uint8Array }).value);
        else throw new InvalidArgumentError(`write op type must be 'put', 'delete' or 'merge'. type=${String(type)}`, { type: String(type) });
      }
    } catch (e) {
      txn.rollback();
      throw e;
    }
    return txn.commit(options);
  }

  /**
   * Resolves when background work is done: frozen memtables written, due compactions finished,
   * retired objects deleted. For tests, benchmarks and tools; normal use never needs it.
   */
  async whenIdle(): Promise<void> {
    this.checkUsable();
    for (;;) {
      if (pickCompaction(this.manifest.data.runs, this.options.maxRuns)) this.startCompaction();
      const busy = this.flushing ?? this.compacting;
      if (!busy) break;
      await busy;
    }
    await this.deletes.idle();
  }

  /** Resolves once everything committed so far is durable. Rejects with CLOSED or FENCED. */
  async flush(): Promise<void> {
    this.checkUsable();
    await this.wal.flush();
  }

  /** @internal Called by Transaction.commit; see the durability contract at the top. */
  commitTransaction(snapshot: number, writes: ReadonlyMap<string, PendingWrite>, options: CommitOptions, blind: boolean): Promise<void> {
    try {
      this.checkUsable();
      for (const [id, w] of writes) {
        if (!w.tracked || blind) continue;
        const last = this.recentWrites.get(id);
        if (last !== undefined && last > snapshot) {
          throw new ConflictError(`write-write conflict. key=${toHex(w.key.subarray(0, 32))} snapshot=${snapshot} committed_seq=${last}`, { snapshot, committedSeq: last });
        }
      }
    } catch (e) {
      this.releaseSnapshot(snapshot);
      return Promise.reject(e);
    }
    if (writes.size > 0 && this.frozen.length >= this.options.maxFrozenMemtables) {
      // Backpressure: memtables fill faster than tables are written. Wait (still holding the
      // snapshot, so the conflict check stays valid) and apply once a flush lands.
      return new Promise<void>((resolve) => this.stalled.push(resolve)).then(() => this.commitTransaction(snapshot, writes, options, blind));
    }
    this.releaseSnapshot(snapshot);
    if (writes.size === 0) return Promise.resolve();
    const seq = ++this.lastSeq;
    const floor = this.oldestSnapshot();
    const entries: VersionedEntry[] = [];
    for (const [id, w] of writes) {
      const entry: VersionedEntry = { key: w.key, seq, kind: w.kind, value: w.value };
      this.tree.memtable.add(entry, floor, id);
      if (w.tracked) this.recentWrites.set(id, seq);
      entries.push(entry);
    }
    const stored = this.wal.append(encodeCommit({ seq, entries }), options.durable !== false);
    if (this.tree.memtable.bytes >= this.options.memtableBytes) {
      const walEnd = this.wal.cut().then(this.liveMark);
      walEnd.catch(() => undefined); // a failure poisons the engine; the flush that awaits it stops
      this.freeze(walEnd);
      this.startFlushes();
    }
    if (this.recentWrites.size > this.recentWritesLimit) this.pruneRecentWrites();
    if (options.durable === false) {
      stored.catch(() => undefined); // the failure poisons the engine; nobody awaits this one
      return Promise.resolve();
    }
    return stored;
  }

  /** @internal */
  releaseSnapshot(snapshot: number): void {
    const n = this.snapshots.get(snapshot);
    if (n === undefined) return;
    if (n <= 1) this.snapshots.delete(snapshot);
    else this.snapshots.set(snapshot, n - 1);
  }

  private oldestSnapshot(): number {
    let min = this.lastSeq;
    for (const s of this.snapshots.keys()) if (s < min) min = s;
    return min;
  }

  private pruneRecentWrites(): void {
    const floor = this.oldestSnapshot();
    for (const [id, seq] of this.recentWrites) if (seq <= floor) this.recentWrites.delete(id);
    this.recentWritesLimit = Math.max(4096, this.recentWrites.size * 2);
  }

  // ---- memtable flush, compaction, GC ------------------------------------------------------

  private releaseStalled(): void {
    if (this.frozen.length < this.options.maxFrozenMemtables || this.failure !== undefined || this.flushing === undefined) {
      for (const resume of this.stalled.splice(0)) resume();
    }
  }

  private freeze(walEnd: Promise<WalMark>): void {
    if (this.tree.memtable.size === 0) return;
    const memtable = this.tree.memtable;
    this.frozen.unshift({ memtable, walEnd });
    this.tree.immutables = this.frozen.map((f) => f.memtable);
    this.tree.memtable = new Memtable(this.options.mergeOperator);
  }

  /**
   * Memtable flushes and compaction run as two independent background loops, so a long
   * compaction never holds up flushes (and commits, see the stall in commitTransaction). Their
   * manifest updates are serialized by `publish`.
   */
  private startFlushes(): void {
    if (this.flushing || this.frozen.length === 0) return;
    this.flushing = this.runFlushes();
  }

  private async runFlushes(): Promise<void> {
    // Yield first: the caller must have stored this promise before the `finally` below clears it.
    await Promise.resolve();
    try {
      while (this.frozen.length > 0 && this.failure === undefined) {
        await this.flushFrozen();
        this.releaseStalled();
        this.startCompaction();
      }
    } catch (e) {
      this.poison(e);
    } finally {
      this.flushing = undefined;
      this.releaseStalled();
    }
  }

  private startCompaction(): void {
    if (this.compacting || this.closing || this.failure !== undefined) return;
    this.compacting = this.runCompactions();
  }

  private async runCompactions(): Promise<void> {
    await Promise.resolve(); // as in runFlushes
    try {
      while (await this.compactOnce());
    } catch (e) {
      if (!this.closing) this.poison(e);
    } finally {
      this.compacting = undefined;
    }
  }

  /**
   * Writes the oldest frozen memtable as a run of tables.
   *  1. Wait until the WAL objects holding its commits are stored.
   *  2. Write the tables (create-only puts).
   *  3. Publish them in the manifest with walStart past those WAL objects (CAS; a lost race = FENCED).
   *  4. Drop the memtable and delete the WAL objects the manifest no longer needs.
   */
  private async flushFrozen(): Promise<void> {
    const oldest = this.frozen[this.frozen.length - 1];
    const mark = await oldest.walEnd;
    const walEnd = mark.walId;
    await this.options.faults?.('flush:sst-put', { walEnd });
    // A tombstone only hides older versions, and older versions of this memtable's keys can only
    // be in tables (older memtables were flushed first). Most keys of a queue are written and
    // deleted within one memtable (a pending key, a claim, a job index entry), so dropping the
    // tombstones of keys no table holds keeps them out of the table and of every compaction.
    // If an index cannot be read, every tombstone is kept.
    const absent = await this.tree.absentFromTables().catch(() => () => false);
    const run = await writeSortedRun(this.store, this.options.path, withoutNeedlessTombstones(oldest.memtable.newestVersions(), absent), {
      blockBytes: this.options.blockBytes,
      targetBytes: Number.POSITIVE_INFINITY,
      allocateId: () => this.nameTable(),
      warmBytes: this.tree.warmBytes(FLUSH_WARM_FRACTION),
      stored: (table) => this.tree.tableStored(table),
    });
    await this.options.faults?.('flush:manifest-put', { walEnd });
    let retiredFrom = 0;
    await this.publish((m) => {
      retiredFrom = m.walStart;
      return {
        ...m,
        walStart: walEnd + 1,
        // Never backwards: replay marks an epoch it skipped (all of it before logStart) as read.
        ...(mark.log ? { logStart: maxPosition(m.logStart, [mark.log[0], mark.log[1] + 1]) } : {}),
        lastSeq: Math.max(m.lastSeq, oldest.memtable.maxSeq),
        runs: run.length > 0 ? [run, ...m.runs] : m.runs,
      };
    }, [], () => {
      this.frozen.pop();
      this.tree.immutables = this.frozen.map((f) => f.memtable);
    });
    const retiredWal: string[] = [];
    for (let id = retiredFrom; id <= walEnd; id++) if (!this.fences.isFence(id)) retiredWal.push(walObjectKey(this.options.path, id));
    this.deletes.add(retiredWal);
    if (mark.log) this.retireLogSegments();
  }

  /** Deletes the log segments before the manifest's `logStart` (in tables, or past a sealed end). */
  private retireLogSegments(): void {
    const start = this.manifest.data.logStart;
    if (!start) return;
    const { path } = this.options;
    const retire = async (): Promise<void> => {
      const doomed: string[] = [];
      for (const [epoch, segments] of await listLogSegments(this.store, path)) {
        for (const segment of segments) if (comparePositions([epoch, segment], start) < 0) doomed.push(logSegmentKey(path, epoch, segment));
      }
      this.deletes.add(doomed);
    };
    // Best effort: what is missed is retired at the next flush.
    this.orphanCollection = this.orphanCollection.then(retire).catch(() => undefined);
  }

  /**
   * Applies `change` to the current manifest under a lock (flushes and compaction both edit it)
   * and swaps it in; then swaps the readable table set (and runs `withSwap` atomically with it). `obsolete` tables are deleted once no
   * read that could still see them is running.
   */
  private publish(change: (current: ManifestData) => ManifestData, obsolete: SortedRun, withSwap?: () => void): Promise<void> {
    const run = this.manifestLock.then(async () => {
      const next = { ...change(this.manifest.data), fences: this.fences.toManifest() };
      const previous = this.manifest.id;
      this.manifest = await this.manifests.publish(this.manifest, next);
      this.deletes.add([this.manifests.key(previous)]);
      const old = this.tree.tables;
      this.tree.tables = this.tree.buildTableSet(next.runs);
      // In the same synchronous step as the swap: a flushed memtable must leave the read path
      // exactly when its table joins it, or a read could count its merge operands twice.
      withSwap?.();
      old.obsolete = [...obsolete];
      this.retired.push(old);
      this.deleteUnreadTables();
    });
    this.manifestLock = run.catch(() => undefined);
    return run;
  }

  private deleteUnreadTables(): void {
    while (this.retired.length > 0 && this.retired[0].activeReads === 0) {
      const set = this.retired.shift()!;
      for (const meta of set.obsolete) this.tree.cache.evictPrefix(`${meta.id}:`);
      this.deletes.add(set.obsolete.map((meta) => tableObjectKey(this.options.path, meta.id)));
    }
  }

  /** One compaction step if one is due; false when there was nothing to do (or closing). */
  private async compactOnce(): Promise<boolean> {
    if (this.closing || this.failure !== undefined) return false;
    this.deleteUnreadTables();
    const runs = this.manifest.data.runs;
    const pick = pickCompaction(runs, this.options.maxRuns);
    if (!pick) return false;
    const inputs = runs.slice(0, pick.end);
    const atBottom = pick.end === runs.length;
    const readers = this.tree.tables.runs.slice(0, pick.end);
    const output = await writeSortedRun(
      this.store,
      this.options.path,
      mergeRuns(readers, this.options.mergeOperator, atBottom, () => this.closing),
      {
        blockBytes: this.options.blockBytes,
        targetBytes: this.options.targetSstBytes,
        allocateId: () => this.nameTable(),
        warmBytes: this.tree.warmBytes(COMPACTION_WARM_FRACTION),
        stored: (table) => this.tree.tableStored(table),
      },
    );
    if (this.closing) return false;
    await this.options.faults?.('compact:manifest-put', { inputs: inputs.length });
    await this.publish((m) => {
      // Flushes may have added newer runs meanwhile; the inputs are still contiguous.
      const at = m.runs.indexOf(inputs[0]);
      invariant(at >= 0, 'compaction:inputs-still-published');
      const runs = [...m.runs.slice(0, at), ...(output.length > 0 ? [output] : []), ...m.runs.slice(at + inputs.length)];
      return { ...m, runs };
    }, inputs.flat());
    return true;
  }

  private nameTable(): string {
    return tableName(this.epoch, ++this.tablesNamed);
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Stops the engine for good. A later FENCED replaces an earlier cause: being fenced is what the caller must learn. */
  private poison(error: unknown): void {
    if (this.failure !== undefined && (isTaqubaError(this.failure, 'FENCED') || !isTaqubaError(error, 'FENCED'))) return;
    this.failure = error;
    this.wal?.fail(error);
  }

  private checkUsable(): void {
    if (this.failure !== undefined) {
      const f = this.failure;
      if (f instanceof FencedError || isTaqubaError(f, 'FENCED')) {
        throw new FencedError(`this writer was fenced by a newer one. epoch=${this.epoch}`, { epoch: this.epoch }, f);
      }
      throw new ClosedError(`engine failed and must be reopened. cause=${(f as Error)?.message ?? String(f)}`, { reason: 'failed' }, f);
    }
    if (this.closing) throw new ClosedError('engine is closed', { reason: 'closed' });
  }

  /** Why the engine stopped accepting calls, if it did. */
  get failed(): unknown {
    return this.failure;
  }

  /**
   * Makes every commit durable, stops background work and closes. Safe to call twice.
   * Rejects with the failure if the final flush fails (nothing more is acknowledged).
   */
  async close(): Promise<void> {
    if (this.closing) return;
    let flushError: unknown;
    if (this.failure === undefined) await this.wal.flush().catch((e) => (flushError = e));
    this.closing = true;
    // Frozen memtables are written out (so the next open replays little); compaction stops.
    await this.compacting;
    while (this.flushing) await this.flushing;
    await this.orphanCollection;
    await this.deletes.idle();
    for (const resume of this.stalled.splice(0)) resume();
    await this.wal.close();
    if (this.logSink && this.failure === undefined && flushError === undefined) await this.logSink.recordOwnEnd().catch(() => undefined);
    await this.lock?.release();
    if (flushError !== undefined) throw flushError;
  }
}

/** The store's append logs when the engine should use them (option `wal`). */
function chooseLogs(store: ObjectStore, kind: WalKind): AppendLogStore | undefined {
  if (kind === 'objects') return undefined;
  const logs = appendLogsOf(store);
  if (!logs && kind === 'log') {
    throw new InvalidConfigError("wal 'log' needs a store with append logs (the filesystem store); this one has none. option=wal", { option: 'wal' });
  }
  return logs;
}

function maxPosition(a: LogPosition | undefined, b: LogPosition): LogPosition {
  return a && comparePositions(a, b) >= 0 ? a : b;
}

/** `entries` without the tombstones of keys `absent` says no table holds. */
function* withoutNeedlessTombstones(entries: Iterable<VersionedEntry>, absent: (key: Uint8Array) => boolean): Generator<VersionedEntry> {
  for (const entry of entries) if (entry.kind !== 'delete' || !absent(entry.key)) yield entry;
}
