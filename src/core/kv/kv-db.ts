/**
 * KvDb: a transactional, ordered key-value engine whose only durable state is objects in an
 * ObjectStore (WAL objects, sorted tables, a sequence of manifests). The same engine runs over
 * memory, the filesystem, IndexedDB, OPFS and S3. This file is the engine's public face: open,
 * reads, transactions, commit (wal/wal-writer.ts) and close. The rooms behind it: fencing/ (claim
 * the epoch, fence the WAL), recovery/ (replay at open), flush/ (memtable flushes, backpressure),
 * compaction/ (merges), gc/ (deletes and garbage), all on the shared writer-state.ts, whose
 * `publish` is the one place the manifest changes (manifest/manifest-store.ts). The numbered
 * protocols are in docs/rfcs/0001-kv-engine.md.
 *
 * Durability contract: a durable commit (the default) resolves once the WAL object (or, on a
 * store with append logs, the log record) holding it is stored; a non-durable one resolves at once and becomes durable with the next flush (any later
 * durable commit flushes it first). Every commit is visible to readers in this process as soon
 * as `commit()` is called. A failed WAL put poisons the engine: all later calls reject (FENCED
 * when a newer writer took over, else CLOSED with the cause) until it is reopened, and nothing
 * that was not stored is ever acknowledged.
 */
import { checkObjectStore } from '../options.js';
import { ClosedError, FencedError, InvalidArgumentError, isTaqubaError } from '../errors.js';
import type { ObjectStore, WriterLock } from '../objects/object-store.js';
import type { AppendLogStore } from '../objects/append-log.js';
import { Compactor } from './compaction/compactor.js';
import { ConflictTracker } from './conflict-tracker.js';
import type { VersionedEntry } from './entry.js';
import { claimEpoch } from './fencing/claim-writer.js';
import { guardTables, tableGone } from './fencing/table-gone.js';
import { MemtableFlusher, type WalMark } from './flush/memtable-flusher.js';
import { resolveKvDbOptions, type KvDbOptions } from './kv-options.js';
import { KvReader } from './kv-reader.js';
import { ManifestStore } from './manifest/manifest-store.js';
import { chooseLogs, Recovery } from './recovery/recovery.js';
import { resolveBounds, type Bounds } from './scan-range.js';
import { Transaction, checkKey, type PendingWrite } from './transaction.js';
import type { CommitOptions, KvEntry, KvReadable, MergeOperator, ScanRange, WriteOp } from './types.js';
import { encodeCommit } from './wal/wal-format.js';
import type { LogWalSink } from './wal/log-sink.js';
import { WalWriter } from './wal/wal-writer.js';
import { WriterState } from './writer-state.js';

export interface TransactionOptions extends CommitOptions {
  /** Attempts before a CONFLICT is passed to the caller. Default 32. */
  readonly maxAttempts?: number;
}

// Not `implements TransactionHost`: those methods are internal (stripped from the published
// .d.ts, where the clause would then fail); `new Transaction(this, ...)` checks the shape.
export class KvDb implements KvReadable {
  private readonly compactor: Compactor;
  private readonly flusher: MemtableFlusher;
  private wal!: WalWriter;
  /** The log sink when the WAL goes to an append log. */
  private logSink: LogWalSink | undefined;
  /** Maps what the WAL writer's cut resolves with (a WAL id or a segment) to a mark (see Recovered). */
  private liveMark: (id: number) => WalMark = (id) => ({ walId: id });
  private readonly conflicts = new ConflictTracker();

  private constructor(
    private readonly state: WriterState,
    private readonly lock: WriterLock | undefined,
  ) {
    this.compactor = new Compactor(state, (e) => this.poison(e));
    this.flusher = new MemtableFlusher(state, () => this.compactor.start(), (e) => this.poison(e));
  }

  /** This writer's epoch; a later writer's open raises the stored one and fences this instance. */
  get epoch(): number {
    return this.state.epoch;
  }

  get mergeOperator(): MergeOperator | undefined {
    return this.state.options.mergeOperator;
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
      const opening = new KvDb(new WriterState(store, resolved, manifests, claimed), lock);
      db = opening;
      await opening.recover(logs).catch(async (e: unknown) => {
        // A newer writer that overtook this open deletes what it no longer needs (segments, WAL
        // objects), which then looks missing here: that is being fenced, not damage. (Replay may
        // have published manifests of its own: compare with the newest of ours.) When that check
        // itself fails, its store error fails the open: damage is reported only once verified.
        if (isTaqubaError(e, 'CORRUPT_DATA') && (await manifests.hasNewer(opening.state.manifest.id))) {
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
   * Steps 4-6 of the open protocol (recovery/recovery.ts); then, step 6, the WAL writer starts
   * after the fence, and flushes, compaction and garbage collection run in the background.
   */
  private async recover(logs: AppendLogStore | undefined): Promise<void> {
    const { store, options } = this.state;
    const recovery = new Recovery(this.state, this.flusher, logs);
    this.logSink = recovery.logSink;
    const { nextWalId, liveMark } = await recovery.run();
    this.liveMark = liveMark;
    this.wal = new WalWriter(store, options.path, this.epoch, this.logSink ? 1 : nextWalId, options, (e) => this.poison(e), this.logSink);
    this.flusher.start();
    this.compactor.start();
    this.state.gc.collectOrphans(this.state.manifest);
  }

  // ---- reads -------------------------------------------------------------------------------

  /** The latest committed value of `key`. Rejects with INVALID_ARGUMENT, CLOSED, FENCED. */
  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.checkUsable();
    checkKey(key);
    return this.state.tree.get(key, Number.POSITIVE_INFINITY).catch((e: unknown) => tableGone(this.state, e));
  }

  /**
   * Entries in key order. Not a point-in-time snapshot: each entry is a committed value current
   * when the scan reached it (use a transaction's scan for a snapshot).
   */
  scan(range?: ScanRange): AsyncIterable<KvEntry> {
    this.checkUsable();
    return guardTables(this.state, this.state.tree.scan(resolveBounds(range), Number.POSITIVE_INFINITY));
  }

  /** @internal */
  readAt(key: Uint8Array, snapshot: number, id: string): Promise<Uint8Array | undefined> {
    this.checkUsable();
    return this.state.tree.get(key, snapshot, id).catch((e: unknown) => tableGone(this.state, e));
  }

  /** @internal */
  scanAt(bounds: Bounds, snapshot: number, overlay: readonly VersionedEntry[]): AsyncIterable<KvEntry> {
    this.checkUsable();
    return guardTables(this.state, this.state.tree.scan(bounds, snapshot, overlay));
  }

  // ---- writes ------------------------------------------------------------------------------

  /** Starts a transaction reading the current state. Call commit() or rollback() exactly once. */
  begin(): Transaction {
    this.checkUsable();
    return new Transaction(this, this.conflicts.pin(this.state.lastSeq));
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
      this.compactor.startIfDue();
      const busy = this.flusher.running ?? this.compactor.running;
      if (!busy) break;
      await busy;
    }
    await this.state.gc.idle();
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
      this.conflicts.check(snapshot, writes, blind);
    } catch (e) {
      this.releaseSnapshot(snapshot);
      return Promise.reject(e);
    }
    if (writes.size > 0 && this.flusher.full) {
      // Backpressure: memtables fill faster than tables are written. Wait (still holding the
      // snapshot, so the conflict check stays valid) and apply once a flush lands.
      return this.flusher.stall().then(() => this.commitTransaction(snapshot, writes, options, blind));
    }
    this.releaseSnapshot(snapshot);
    if (writes.size === 0) return Promise.resolve();
    const seq = ++this.state.lastSeq;
    const floor = this.conflicts.oldest(this.state.lastSeq);
    const entries: VersionedEntry[] = [];
    for (const [id, w] of writes) {
      const entry: VersionedEntry = { key: w.key, seq, kind: w.kind, value: w.value };
      this.state.tree.memtable.add(entry, floor, id);
      if (w.tracked) this.conflicts.noteWrite(id, seq);
      entries.push(entry);
    }
    const stored = this.wal.append(encodeCommit({ seq, entries }), options.durable !== false);
    if (this.state.tree.memtable.bytes >= this.state.options.memtableBytes) {
      const walEnd = this.wal.cut().then(this.liveMark);
      walEnd.catch(() => undefined); // a failure poisons the engine; the flush that awaits it stops
      this.flusher.freeze(walEnd);
      this.flusher.start();
    }
    this.conflicts.prune(this.state.lastSeq);
    if (options.durable === false) {
      stored.catch(() => undefined); // the failure poisons the engine; nobody awaits this one
      return Promise.resolve();
    }
    return stored;
  }

  /** @internal */
  releaseSnapshot(snapshot: number): void {
    this.conflicts.release(snapshot);
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** Stops the engine for good. A later FENCED replaces an earlier cause: being fenced is what the caller must learn. */
  private poison(error: unknown): void {
    const { state } = this;
    if (state.failure !== undefined && (isTaqubaError(state.failure, 'FENCED') || !isTaqubaError(error, 'FENCED'))) return;
    state.failure = error;
    this.wal?.fail(error);
  }

  private checkUsable(): void {
    if (this.state.failure !== undefined) {
      const f = this.state.failure;
      if (f instanceof FencedError || isTaqubaError(f, 'FENCED')) {
        throw new FencedError(`this writer was fenced by a newer one. epoch=${this.epoch}`, { epoch: this.epoch }, f);
      }
      throw new ClosedError(`engine failed and must be reopened. cause=${(f as Error)?.message ?? String(f)}`, { reason: 'failed' }, f);
    }
    if (this.state.closing) throw new ClosedError('engine is closed', { reason: 'closed' });
  }

  /** Why the engine stopped accepting calls, if it did. */
  get failed(): unknown {
    return this.state.failure;
  }

  /**
   * Makes every commit durable, stops background work and closes. Safe to call twice.
   * Rejects with the failure if the final flush fails (nothing more is acknowledged).
   */
  async close(): Promise<void> {
    const { state } = this;
    if (state.closing) return;
    let flushError: unknown;
    const flushWal = async (): Promise<void> => {
      if (state.failure === undefined && flushError === undefined) await this.wal.flush().catch((e) => (flushError = e));
    };
    await flushWal();
    state.closing = true;
    // A commit that waited for room in the memtables may have been applied during that flush,
    // into a later batch than the one it waited for. None can start now: flushed again, so the
    // end recorded below covers every commit applied (the simulator found one acknowledged past it).
    await flushWal();
    // Frozen memtables are written out (so the next open replays little); compaction stops.
    await this.compactor.running;
    while (this.flusher.running) await this.flusher.running;
    await state.gc.collected();
    await state.gc.idle();
    this.flusher.releaseAll();
    await this.wal.close();
    if (this.logSink && state.failure === undefined && flushError === undefined) await this.logSink.recordOwnEnd().catch(() => undefined);
    await this.lock?.release();
    if (flushError !== undefined) throw flushError;
  }
}
