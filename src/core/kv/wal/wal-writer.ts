/**
 * Group commit. Commits append their encoded bytes to the open batch; a flush seals the batch and
 * hands it to the sink: the next WAL object, stored with a create-only put (ObjectWalSink, the
 * protocol below), or one record appended to the writer's log segment (log-sink.ts, RFC 0002). One put is in flight at a time, and
 * everything that arrives meanwhile rides the next put together, so N concurrent durable commits
 * cost about one put per store round trip rather than N.
 *
 * Durability contract: the promise of `append` resolves only after the WAL object holding that
 * commit is stored. A non-durable commit's promise (nobody awaits it) settles the same way; its
 * batch is not put at once but waits up to `nonDurableFlushMs` for a durable commit to share the
 * put. A failed put is fatal and poisons the engine (through `onFatal`). Nothing unstored is
 * acknowledged, and each rejection says whether its commit may be stored:
 *  - the batch whose put failed rejects with the put's error: unknown outcome for a store error,
 *    not stored for FENCED (the id holds another writer's object);
 *  - batches never put reject with FENCED or CLOSED: not stored;
 *  - a put already in flight when something else poisons the engine (a fenced manifest update)
 *    settles first: its commits resolve if it landed, since then they are durable.
 *
 * Put protocol, per batch (fault point `wal:put`): create the next id, create-only. When the id
 * is taken, read what is there:
 *  1. our own bytes (a retried request that had landed): stored;
 *  2. an empty fence of an older epoch: a stray of a writer that lost a race to fence the store
 *     (its window's puts run in parallel, see fencing/claim-writer.ts); it holds no commits, so
 *     take the next id;
 *  3. anything else (a newer writer's fence or commits): FENCED.
 * A batch's id is fixed only when it is stored, so `cut` hands out promises of ids.
 */
import { ClosedError, FencedError, isTaqubaError } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { Clock } from '../../clock.js';
import { yieldToEventLoop } from '../../event-loop.js';
import { walObjectKey } from '../format.js';
import { decodeWalObject, encodeWalObject } from './wal-format.js';
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
  commits: Uint8Array[];
  bytes: number;
  waiters: Waiter[];
  /** True once a durable commit joined: the batch is then stored as soon as the writer is free. */
  durable: boolean;
  /** Resolves with the WAL id the batch was stored under (set up by `cut`, on demand). */
  stored?: Deferred<number>;
  /** Set by `cut`: a memtable ends with this batch, so the next one starts a new log segment. */
  endsSegment?: boolean;
}

/**
 * Where batches go: WAL objects (ObjectWalSink, the put protocol above) or an append log
 * (log-sink.ts). Batches are handed over one at a time, in order.
 */
export interface WalSink {
  /**
   * Stores one batch after position `after` (the last stored one). Resolves with the position it
   * was stored under (a WAL id, or a log segment) once it is durable and may be acknowledged;
   * `fencedAfter` says the writer is fenced from now on (the batch itself was taken over).
   */
  store(commits: readonly Uint8Array[], after: number): Promise<{ readonly id: number; readonly fencedAfter?: unknown }>;
  /** Called after a batch that ends a memtable is stored: the next batch starts a new segment. */
  roll?(): Promise<void>;
  /** Releases what the sink holds open. */
  close?(): Promise<void>;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(e: unknown): void;
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
  /** The source of the batching timers. */
  readonly clock: Clock;
}

export class WalWriter {
  private open: Batch = emptyBatch();
  /** Sealed batches waiting for their put, oldest first; the one in flight is not among them. */
  private readonly sealed: Batch[] = [];
  private inFlight: Batch | undefined;
  private draining = false;
  private timerArmed = false;
  private lazyArmed = false;
  private putsSinceYield = 0;
  private fatal: unknown;
  /** Highest WAL id known stored by this writer (or its fence's end before the first put); the next batch tries the id after it. */
  durableId: number;

  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
    private readonly epoch: number,
    firstId: number,
    private readonly options: WalWriterOptions,
    private readonly onFatal: (error: unknown) => void,
    private readonly sink: WalSink = new ObjectWalSink(store, path, epoch, options.faults),
  ) {
    this.durableId = firstId - 1;
  }

  /** Releases the sink (an open log segment). */
  async close(): Promise<void> {
    await this.sink.close?.();
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
   * Seals the open batch (if it has anything) and starts storing it. Resolves with the id of the
   * last WAL object that holds a commit appended so far, once it is stored; rejects when the
   * writer fails first. Used when a memtable is frozen: its contents end at that id.
   */
  cut(): Promise<number> {
    return this.sealAll(true);
  }

  /** Stores everything appended so far. */
  async flush(): Promise<void> {
    await this.sealAll(false);
  }

  /**
   * `endSegment`: the commits so far end a memtable, so the batch holding the last of them also
   * ends its log segment, and the id resolves only once the next segment exists (a flush may then
   * retire this one). With nothing pending, an empty batch carries the roll.
   */
  private sealAll(endSegment: boolean): Promise<number> {
    if (this.fatal !== undefined) return Promise.reject(this.fatal);
    if (this.open.commits.length > 0 || (endSegment && !this.inFlight && this.sealed.length === 0)) this.seal();
    const last = this.sealed.at(-1) ?? this.inFlight;
    if (!last) return Promise.resolve(this.durableId);
    if (endSegment) last.endsSegment = true;
    last.stored ??= deferred<number>();
    // An empty batch is durable-worthy too: it only rolls the segment.
    if (last.commits.length === 0) last.durable = true;
    void this.drain();
    return last.stored.promise;
  }

  private seal(): void {
    this.sealed.push(this.open);
    this.open = emptyBatch();
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
    else void this.options.clock.sleep(this.options.flushIntervalMs).then(start);
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
    const armedFor = this.open;
    void this.options.clock.sleep(this.options.nonDurableFlushMs ?? DEFAULT_NON_DURABLE_FLUSH_MS).then(() => {
      this.lazyArmed = false;
      if (this.fatal !== undefined || this.open.commits.length === 0) return;
      if (this.open !== armedFor) return this.scheduleLazy();
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
        // Out of `sealed` while in flight: a failure elsewhere leaves this batch to its put.
        const batch = this.sealed.shift()!;
        this.inFlight = batch;
        let id = this.durableId;
        let fencedAfter: unknown;
        try {
          if (batch.commits.length > 0) ({ id, fencedAfter } = await this.sink.store(batch.commits, this.durableId));
        } catch (e) {
          this.inFlight = undefined;
          for (const w of batch.waiters) w.reject(e);
          batch.stored?.reject(e);
          throw e;
        }
        // Stored: these commits are durable even if the engine failed meanwhile.
        for (const w of batch.waiters) w.resolve();
        if (fencedAfter !== undefined) {
          this.inFlight = undefined;
          batch.stored?.resolve(id);
          throw fencedAfter;
        }
        if (this.fatal === undefined) this.durableId = id;
        try {
          // Read after the await: a cut may have marked the batch while it was in flight.
          if (batch.endsSegment && this.fatal === undefined) await this.sink.roll?.();
        } catch (e) {
          batch.stored?.reject(e);
          throw e;
        } finally {
          this.inFlight = undefined;
        }
        batch.stored?.resolve(id);
        if (this.fatal !== undefined) break;
        // Same reason as the delete queue: with a store that answers at once, back-to-back
        // puts would be one endless microtask chain; let timers run now and then.
        if (++this.putsSinceYield % YIELD_EVERY_PUTS === 0) await yieldToEventLoop();
      }
    } catch (e) {
      this.fail(e);
    } finally {
      this.draining = false;
    }
    if (this.open.commits.length > 0) this.scheduleLazy();
  }

  /**
   * Stops the writer: every commit not yet handed to the store rejects as not stored (FENCED
   * when fenced, else CLOSED with the cause), and so does every later call. A put in flight
   * settles its own commits.
   */
  fail(error: unknown): void {
    if (this.fatal !== undefined) {
      // Learning that we were fenced outranks an earlier failure: later calls say FENCED.
      if (isTaqubaError(error, 'FENCED') && !isTaqubaError(this.fatal, 'FENCED')) {
        this.fatal = error;
        this.onFatal(error);
      }
      return;
    }
    const notStored = isTaqubaError(error, 'FENCED')
      ? error
      : new ClosedError(`commit not stored: the engine failed. cause=${(error as Error)?.message ?? String(error)}`, { reason: 'failed' }, error);
    this.fatal = notStored;
    const pending = [...this.sealed, this.open];
    this.sealed.length = 0;
    this.open = emptyBatch();
    for (const batch of pending) {
      for (const w of batch.waiters) w.reject(notStored);
      batch.stored?.reject(notStored);
    }
    this.onFatal(error);
  }
}

/** The put protocol above: each batch a new WAL object, create-only, at the next free id. */
export class ObjectWalSink implements WalSink {
  constructor(
    private readonly objects: ObjectStore,
    private readonly path: string,
    private readonly epoch: number,
    private readonly faults: FaultHook | undefined,
  ) {}

  async store(commits: readonly Uint8Array[], after: number): Promise<{ id: number }> {
    for (let id = after + 1; ; id++) {
      const key = walObjectKey(this.path, id);
      await this.faults?.('wal:put', { id });
      const result = await createObject(this.objects, key, encodeWalObject(this.epoch, id, commits));
      if (result.created) return { id };
      if (result.existing && isStrayFence(result.existing.data, key, this.epoch)) continue;
      throw new FencedError(`a newer writer owns the store. epoch=${this.epoch} wal_id=${id}`, { epoch: this.epoch, walId: id });
    }
  }
}

/** An empty WAL object of an epoch older than ours (see the put protocol). Undecodable bytes are not. */
function isStrayFence(bytes: Uint8Array, key: string, epoch: number): boolean {
  try {
    const wal = decodeWalObject(bytes, key);
    return wal.commits.length === 0 && wal.epoch < epoch;
  } catch {
    return false;
  }
}

function emptyBatch(): Batch {
  return { commits: [], bytes: 0, waiters: [], durable: false };
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // a failure is also reported through onFatal and the waiters
  return { promise, resolve, reject };
}
