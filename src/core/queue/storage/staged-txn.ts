/**
 * One engine transaction per state transition, with the queue's bookkeeping folded in: counter
 * deltas are summed per (queue, metric) and written as untracked merges at commit, history
 * entries are merge-appended, and in-memory follow-ups (cursor notes, payload deletes, signals)
 * are registered as after-commit hooks so that only the attempt that actually committed runs
 * them. `runTransaction` retries the whole function on a write-write conflict.
 */
import { isTaqubaError } from '../../errors.js';
import type { KvDb } from '../../kv/kv-db.js';
import type { KvEntry, ScanRange } from '../../kv/types.js';
import { encodeAttempt, type JobAttempt } from '../records/attempt-history.js';
import { encodeJobRecord } from '../records/job-record-codec.js';
import { recordKey, type JobRecord } from '../records/job-record.js';
import { historyKey, jobIndexKey, statsKey, type StatsMetric } from '../records/keys.js';
import { encodeI64 } from '../records/merge-operator.js';

export type KvTxn = ReturnType<KvDb['begin']>;

type Hook = () => void | Promise<void>;

interface Counter {
  readonly queue: string;
  readonly metric: StatsMetric;
  delta: number;
}

export class StagedTxn {
  private writes = 0;
  /** Few per transaction (one or two queues, a few metrics): a list beats a keyed map. */
  private readonly counters: Counter[] = [];
  private hooks: Hook[] | undefined;

  constructor(readonly txn: KvTxn) {}

  get(key: Uint8Array): Promise<Uint8Array | undefined> {
    return this.txn.get(key);
  }

  scan(range: ScanRange): AsyncIterable<KvEntry> {
    return this.txn.scan(range);
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.writes++;
    this.txn.put(key, value);
  }

  delete(key: Uint8Array): void {
    this.writes++;
    this.txn.delete(key);
  }

  /** PUT the record at its space key and point the job index at that key (always both). */
  putRecord(record: JobRecord): Uint8Array {
    const key = recordKey(record);
    this.put(key, encodeJobRecord(record));
    this.put(jobIndexKey(record.id), key);
    return key;
  }

  /** Adds `delta` to a per-queue counter (merged, never a conflict). */
  count(queue: string, metric: StatsMetric, delta: number): void {
    const counters = this.counters;
    for (let i = 0; i < counters.length; i++) {
      const c = counters[i];
      if (c.metric === metric && c.queue === queue) {
        c.delta += delta;
        return;
      }
    }
    counters.push({ queue, metric, delta });
  }

  /** Appends one entry to the job's attempt history (merge, no read). */
  appendHistory(id: string, entry: JobAttempt): void {
    this.writes++;
    this.txn.merge(historyKey(id), encodeAttempt(entry));
  }

  /** Runs `hook` only if this transaction commits. */
  afterCommit(hook: Hook): void {
    (this.hooks ??= []).push(hook);
  }

  /** @internal */
  get isEmpty(): boolean {
    if (this.writes !== 0) return false;
    for (const c of this.counters) if (c.delta !== 0) return false;
    return true;
  }

  /** @internal Stages the counter merges. */
  flushCounters(): void {
    for (const c of this.counters) {
      if (c.delta !== 0) this.txn.merge(statsKey(c.queue, c.metric), encodeI64(c.delta));
    }
  }

  /** @internal True when hooks are registered (runHooks would do something). */
  get hasHooks(): boolean {
    return this.hooks !== undefined;
  }

  /** @internal */
  async runHooks(): Promise<void> {
    if (this.hooks === undefined) return;
    for (const hook of this.hooks) await hook();
  }
}

export interface RunOptions {
  /** Await the WAL flush (default true). */
  readonly durable?: boolean;
  /** Retry on conflict (default true). */
  readonly retry?: boolean;
  /**
   * Called as soon as the commit is issued (or found empty), before its durability is awaited:
   * the engine applies a commit synchronously, so from here on its writes are visible, unless
   * the commit turns out to conflict (then `fn` runs again and this is called again).
   */
  readonly onIssued?: () => void;
}

const MAX_CONFLICT_RETRIES = 1000;

const ambiguousCommits = new WeakSet<object>();

/**
 * True when `e` came out of a commit that failed for a reason other than a conflict, so the
 * transaction may have been stored. Cleanup of pre-written payload objects must then be skipped
 * (an orphan object is harmless, a record without its payload is not).
 */
export function isAmbiguousCommitError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && ambiguousCommits.has(e);
}

/**
 * Runs `fn` in a fresh transaction and commits what it staged (an empty transaction is rolled
 * back without I/O), then runs the hooks. Retries on CONFLICT with a fresh transaction; every
 * other error rolls back and propagates.
 */
export async function runTransaction<T>(db: KvDb, fn: (s: StagedTxn) => Promise<T>, options: RunOptions = {}): Promise<T> {
  const durable = options.durable ?? true;
  for (let attempt = 1; ; attempt++) {
    const staged = new StagedTxn(db.begin());
    let value: T;
    try {
      value = await fn(staged);
    } catch (e) {
      staged.txn.rollback();
      // A read can fail with CONFLICT too (its snapshot is too old): start over.
      if (isTaqubaError(e, 'CONFLICT') && options.retry !== false && attempt < MAX_CONFLICT_RETRIES) continue;
      throw e;
    }
    if (staged.isEmpty) {
      staged.txn.rollback();
      options.onIssued?.();
    } else {
      staged.flushCounters();
      try {
        const committed = staged.txn.commit({ durable });
        options.onIssued?.();
        await committed;
      } catch (e) {
        if (isTaqubaError(e, 'CONFLICT') && options.retry !== false && attempt < MAX_CONFLICT_RETRIES) continue;
        // Anything but a conflict leaves the outcome unknown to us (the WAL put may or may not
        // have landed): callers must not clean up as if nothing was written.
        if (!isTaqubaError(e, 'CONFLICT') && typeof e === 'object' && e !== null) ambiguousCommits.add(e);
        throw e;
      }
    }
    if (staged.hasHooks) await staged.runHooks();
    return value;
  }
}
