/**
 * Memtable flushes: a full memtable is frozen (commits go on into a new one) and written out as a
 * run of tables by a background loop, independent of compaction, so a long compaction never
 * holds up flushes (and commits). When `maxFrozenMemtables` memtables wait for their table write,
 * commits stall until one lands (write backpressure, see KvDb.commitTransaction).
 */
import type { VersionedEntry } from '../entry.js';
import { Memtable } from '../memtable.js';
import { writeSortedRun } from '../tables/table-writer.js';
import { comparePositions, type LogPosition } from '../wal/log-format.js';
import type { WriterState } from '../writer-state.js';

/**
 * How far the WAL a memtable holds reaches: the last WAL object id, and the last log segment
 * (docs/rfcs/0002-wal-append-log.md) when logs were replayed or written. A flush moves the
 * manifest's `walStart` and `logStart` past them.
 */
export interface WalMark {
  readonly walId: number;
  readonly log?: LogPosition;
}

/** A memtable frozen for flushing, with the WAL it covers (known once stored). */
interface FrozenMemtable {
  readonly memtable: Memtable;
  readonly walEnd: Promise<WalMark>;
}

/**
 * Share of the block cache a flushed run may fill with its own blocks (a whole default memtable
 * fits); see COMPACTION_WARM_FRACTION for a compaction's output.
 */
const FLUSH_WARM_FRACTION = 0.5;

export class MemtableFlusher {
  private readonly frozen: FrozenMemtable[] = [];
  private flushing: Promise<void> | undefined;
  /** Commits waiting for frozen memtables to drain (write backpressure). */
  private stalled: (() => void)[] = [];

  constructor(
    private readonly state: WriterState,
    /** Called after each flush (a new run may make a compaction due). */
    private readonly flushed: () => void,
    private readonly poison: (error: unknown) => void,
  ) {}

  /** The flush loop while it runs. */
  get running(): Promise<void> | undefined {
    return this.flushing;
  }

  /** Whether `maxFrozenMemtables` memtables wait for their table write. */
  get full(): boolean {
    return this.frozen.length >= this.state.options.maxFrozenMemtables;
  }

  /** Resolves when a commit held back by `full` may go on (a flush landed, or the engine stopped). */
  stall(): Promise<void> {
    return new Promise<void>((resolve) => this.stalled.push(resolve));
  }

  /** Lets every stalled commit go on (close). */
  releaseAll(): void {
    for (const resume of this.stalled.splice(0)) resume();
  }

  private releaseStalled(): void {
    if (this.frozen.length < this.state.options.maxFrozenMemtables || this.state.failure !== undefined || this.flushing === undefined) {
      for (const resume of this.stalled.splice(0)) resume();
    }
  }

  /** Freezes the memtable (unless empty) as covering the WAL up to `walEnd`, and starts a new one. */
  freeze(walEnd: Promise<WalMark>): void {
    const tree = this.state.tree;
    if (tree.memtable.size === 0) return;
    const memtable = tree.memtable;
    this.frozen.unshift({ memtable, walEnd });
    tree.immutables = this.frozen.map((f) => f.memtable);
    tree.memtable = new Memtable(this.state.options.mergeOperator);
  }

  /**
   * Memtable flushes and compaction run as two independent background loops, so a long
   * compaction never holds up flushes (and commits, see the stall in commitTransaction). Their
   * manifest updates are serialized by `publish`.
   */
  start(): void {
    if (this.flushing || this.frozen.length === 0) return;
    this.flushing = this.runFlushes();
  }

  private async runFlushes(): Promise<void> {
    // Yield first: the caller must have stored this promise before the `finally` below clears it.
    await Promise.resolve();
    try {
      while (this.frozen.length > 0 && this.state.failure === undefined) {
        await this.flushOldest();
        this.releaseStalled();
        this.flushed();
      }
    } catch (e) {
      this.poison(e);
    } finally {
      this.flushing = undefined;
      this.releaseStalled();
    }
  }

  /**
   * Writes the oldest frozen memtable as a run of tables.
   *  1. Wait until the WAL objects holding its commits are stored.
   *  2. Write the tables (create-only puts).
   *  3. Publish them in the manifest with walStart past those WAL objects (CAS; a lost race = FENCED).
   *  4. Drop the memtable and delete the WAL objects the manifest no longer needs.
   */
  async flushOldest(): Promise<void> {
    const { state } = this;
    const { options, tree } = state;
    const oldest = this.frozen[this.frozen.length - 1];
    const mark = await oldest.walEnd;
    const walEnd = mark.walId;
    await options.faults?.('flush:sst-put', { walEnd });
    // A tombstone only hides older versions, and older versions of this memtable's keys can only
    // be in tables (older memtables were flushed first). Most keys of a queue are written and
    // deleted within one memtable (a pending key, a claim, a job index entry), so dropping the
    // tombstones of keys no table holds keeps them out of the table and of every compaction.
    // If an index cannot be read, every tombstone is kept.
    const absent = await tree.absentFromTables().catch(() => () => false);
    const run = await writeSortedRun(state.store, options.path, withoutNeedlessTombstones(oldest.memtable.newestVersions(), absent), {
      blockBytes: options.blockBytes,
      targetBytes: Number.POSITIVE_INFINITY,
      allocateId: () => state.nameTable(),
      warmBytes: tree.warmBytes(FLUSH_WARM_FRACTION),
      stored: (table) => tree.tableStored(table),
    });
    await options.faults?.('flush:manifest-put', { walEnd });
    let retiredFrom = 0;
    await state.publish((m) => {
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
      tree.immutables = this.frozen.map((f) => f.memtable);
    });
    state.gc.retireWal(retiredFrom, walEnd);
    if (mark.log) state.gc.retireLogSegments(state.manifest.data.logStart);
  }
}

/** The later of two log positions (`a` may be missing). */
export function maxPosition(a: LogPosition | undefined, b: LogPosition): LogPosition {
  return a && comparePositions(a, b) >= 0 ? a : b;
}

/** `entries` without the tombstones of keys `absent` says no table holds. */
function* withoutNeedlessTombstones(entries: Iterable<VersionedEntry>, absent: (key: Uint8Array) => boolean): Generator<VersionedEntry> {
  for (const entry of entries) if (entry.kind !== 'delete' || !absent(entry.key)) yield entry;
}
