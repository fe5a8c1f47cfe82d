/**
 * Group commit. Commits append their encoded bytes to the open batch; a flush seals the batch into
 * the next WAL object and stores it with a create-only put. One put is in flight at a time, and
 * everything that arrives meanwhile rides the next put together, so N concurrent durable commits
 * cost about one put per store round trip rather than N.
 *
 * Durability contract: the promise of `append` resolves only after the WAL object holding that
 * commit is stored. A non-durable commit's promise (nobody awaits it) settles the same way; its
 * batch is not put at once but waits up to `nonDurableFlushMs` for a durable commit to share the
 * put. A failed put is fatal: every waiting and later promise rejects with the same
 * error and the engine poisons itself (through `onFatal`). Nothing unstored is acknowledged.
 *
 * Fencing: WAL ids are dense and created only with `ifNoneMatch: '*'`. A newer writer writes a
 * fence object at the next free id when it opens, so this writer's next put fails with
 * PRECONDITION_FAILED, reported as FENCED.
 */
import { FencedError, isTaqubaError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { systemClock } from '../../clock.js';
import { walObjectKey } from '../format.js';
import { encodeWalObject } from './wal-format.js';
import type { FaultHook } from '../kv-options.js';

/** Consecutive WAL puts after which the writer yields to the event loop once. */
const YIELD_EVERY_PUTS = 64;

/**
 * How long a batch holding only non-durable commits waits for a durable commit to join it before
 * it is stored on its own. See `WalWriterOptions.nonDurableFlushMs`.
 */
export const DEFAULT_NON_DURABLE_FLUSH_MS = 5;

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

interface Batch {
  id: number;
  commits: Uint8Array[];
  bytes: number;
  waiters: Waiter[];
  /** True once a durable commit joined: the batch is then stored as soon as the writer is free. */
  durable: boolean;
}

export interface WalWriterOptions {
  readonly flushIntervalMs: number;
  readonly flushMaxBytes: number;
  /**
   * A batch of only non-durable commits is stored after this delay (default
   * DEFAULT_NON_DURABLE_FLUSH_MS) unless a durable commit joins it first. Nobody waits for such a
   * batch, and storing it at once would make the durable commit that usually follows it (a
   * claim's settlement) wait behind its put: two sequential puts instead of one.
   */
  readonly nonDurableFlushMs?: number;
  readonly faults?: FaultHook;
}

export class WalWriter {
  private open: Batch;
  private readonly sealed: Batch[] = [];
  private draining = false;
  private timerArmed = false;
  private lazyArmed = false;
  private putsSinceYield = 0;
  private fatal: unknown;
  /** Highest WAL id known stored. */
  durableId: number;
  private readonly idWaiters: { id: number; waiter: Waiter }[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
    private readonly epoch: number,
    nextId: number,
    private readonly options: WalWriterOptions,
    private readonly onFatal: (error: unknown) => void,
  ) {
    this.durableId = nextId - 1;
    this.open = emptyBatch(nextId);
  }

  /** The id the open batch will be stored under. */
  get nextId(): number {
    return this.open.id;
  }

  /**
   * Adds a commit to the open batch. Resolves once it is stored (see the contract above). A
   * `durable` commit gets its put started as soon as the writer is free; a non-durable one waits
   * up to `nonDurableFlushMs` for a durable commit to share its put (it is stored in order either
   * way, so a later durable commit is never acknowledged before it).
   */
  append(encodedCommit: Uint8Array, durable = true): Promise<void> {
    if (this.fatal !== undefined) return Promise.reject(this.fatal);
    return new Promise<void>((resolve, reject) => {
      const open = this.open;
      open.commits.push(encodedCommit);
      open.bytes += encodedCommit.length;
      open.waiters.push({ resolve, reject });
      if (durable) open.durable = true;
      if (open.bytes >= this.options.flushMaxBytes) {
        this.seal();
        void this.drain();
      } else if (open.durable) this.schedule();
      else this.scheduleLazy();
    });
  }

  /**
   * Seals the open batch (if it has anything) and returns the id of the last WAL object that
   * holds a commit appended so far. Used when a memtable is frozen: its contents end at that id.
   */
  cut(): number {
    if (this.open.commits.length > 0) this.seal();
    void this.drain();
    return this.open.id - 1;
  }

  /** Resolves once WAL objects up to `id` are stored. */
  waitDurable(id: number): Promise<void> {
    if (this.fatal !== undefined) return Promise.reject(this.fatal);
    if (this.durableId >= id) return Promise.resolve();
    return new Promise((resolve, reject) => this.idWaiters.push({ id, waiter: { resolve, reject } }));
  }

  /** Stores everything appended so far. */
  flush(): Promise<void> {
    return this.waitDurable(this.cut());
  }

  private seal(): void {
    this.sealed.push(this.open);
    this.open = emptyBatch(this.open.id + 1);
  }

  private schedule(): void {
    if (this.draining || this.timerArmed) return;
    this.timerArmed = true;
    const start = (): void => {
      this.timerArmed = false;
      void this.drain();
    };
    // Zero interval: put as soon as the current synchronous work is done. Commits that arrive
    // while that put is in flight share the next one, which is where group commit comes from;
    // a timer here would only add latency (Node clamps a 0 ms timeout to 1 ms).
    if (this.options.flushIntervalMs <= 0) queueMicrotask(start);
    else void systemClock.sleep(this.options.flushIntervalMs).then(start);
  }

  /**
   * Arms the delayed put of an open batch that holds only non-durable commits. While a put is in
   * flight nothing is armed: the drain loop arms it when it stops. The timer is tied to the batch
   * it was armed for; if that batch was stored meanwhile (a durable commit or a cut sealed it),
   * a newer non-durable-only batch gets a timer of its own.
   */
  private scheduleLazy(): void {
    if (this.draining || this.lazyArmed || this.fatal !== undefined) return;
    this.lazyArmed = true;
    const id = this.open.id;
    void systemClock.sleep(this.options.nonDurableFlushMs ?? DEFAULT_NON_DURABLE_FLUSH_MS).then(() => {
      this.lazyArmed = false;
      if (this.fatal !== undefined || this.open.commits.length === 0) return;
      if (this.open.id !== id) return this.scheduleLazy();
      this.seal();
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.draining || this.fatal !== undefined) return;
    this.draining = true;
    try {
      for (;;) {
        if (this.sealed.length === 0) {
          // A batch of only non-durable commits waits for a durable one (or its timer).
          if (this.open.commits.length === 0 || !this.open.durable) break;
          this.seal();
        }
        const batch = this.sealed[0];
        await this.put(batch);
        this.sealed.shift();
        this.durableId = batch.id;
        for (const w of batch.waiters) w.resolve();
        this.releaseIdWaiters();
        // Same reason as the delete queue: with a store that answers at once, back-to-back
        // puts would be one endless microtask chain; let timers run now and then.
        if (++this.putsSinceYield % YIELD_EVERY_PUTS === 0) await systemClock.sleep(0);
      }
    } catch (e) {
      this.fail(e);
    } finally {
      this.draining = false;
    }
    if (this.open.commits.length > 0) this.scheduleLazy();
  }

  private async put(batch: Batch): Promise<void> {
    const key = walObjectKey(this.path, batch.id);
    await this.options.faults?.('wal:put', { id: batch.id });
    try {
      await this.store.put(key, encodeWalObject(this.epoch, batch.id, batch.commits), { ifNoneMatch: '*' });
    } catch (e) {
      if (isTaqubaError(e, 'PRECONDITION_FAILED')) {
        throw new FencedError(`a newer writer owns the store. epoch=${this.epoch} wal_id=${batch.id}`, { epoch: this.epoch, walId: batch.id }, e);
      }
      throw e;
    }
  }

  private releaseIdWaiters(): void {
    for (let i = this.idWaiters.length - 1; i >= 0; i--) {
      if (this.idWaiters[i].id <= this.durableId) {
        this.idWaiters[i].waiter.resolve();
        this.idWaiters.splice(i, 1);
      }
    }
  }

  /** Rejects everything pending; later calls reject with the same error. */
  fail(error: unknown): void {
    if (this.fatal !== undefined) return;
    this.fatal = error;
    const waiters = [...this.sealed.flatMap((b) => b.waiters), ...this.open.waiters, ...this.idWaiters.map((w) => w.waiter)];
    this.sealed.length = 0;
    this.open = emptyBatch(this.open.id);
    this.idWaiters.length = 0;
    for (const w of waiters) w.reject(error);
    this.onFatal(error);
  }
}

function emptyBatch(id: number): Batch {
  return { id, commits: [], bytes: 0, waiters: [], durable: false };
}
