/**
 * `Queue`: the durable, single-writer job queue. The facade owns the engine handle and the
 * in-memory state (leases, cursors, notifiers) and delegates each transition to its module.
 *
 * Open protocol (`Queue.open`):
 * 1. Open the engine as writer: bumps the writer epoch (fencing any earlier writer) and replays
 *    the WAL.
 * 2. Restore persisted claim cursors and delete their records durably.
 * 3. Recover interrupted claims: every claimed record goes back to Pending with its try given
 *    back and one more interruption (or Dead at `maxInterruptions`), history `interrupted`. After
 *    2 so requeued keys move restored bounds back.
 * 4. Write the first heartbeat durably (when configured), then start the reaper, the scheduler
 *    and the heartbeat loop.
 *
 * Durability: enqueues, settlements, cancel, wake, dead requeue and KV writes resolve once their
 * WAL object is stored; claims and background sweeps commit without waiting (losing one in a
 * crash leaves the previous state, which recovery or the next tick redoes), and every later
 * durable commit flushes them first.
 */
import type { Clock } from '../clock.js';
import { InvalidConfigError, isTaqubaError } from '../errors.js';
import { KvDb } from '../kv/kv-db.js';
import type { ObjectStore } from '../objects/object-store.js';
import { checkObjectStore } from '../options.js';
import type { JobAttempt } from './records/attempt-history.js';
import { Claim, claimJobs } from './transitions/claim.js';
import { ClaimCursor } from './transitions/claim-cursor.js';
import { waitForCompletion, type WaitOutcome } from './reads/completion-wait.js';
import { persistCursors, restoreCursors } from './storage/cursor-store.js';
import { discardEffects, prepareEffects, stageEffects, validateKvWrites, type SettlementEffects } from './storage/effects.js';
import { buildRecord, prepareEnqueue, stageEnqueue, type EnqueueOptions, type EnqueueResult, type PreparedEnqueue } from './transitions/enqueue.js';
import { Heartbeat } from './leases/heartbeat.js';
import {
  attemptHistory,
  deadJobs,
  getJob,
  listJobs,
  listQueues,
  queueStats,
  type InspectionSource,
  type JobPage,
  type ListJobsOptions,
  type QueueStats,
} from './reads/inspection.js';
import { JobIdGenerator } from './records/job-id.js';
import type { JobRecord, JobStatus } from './records/job-record.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { userKey } from './records/keys.js';
import { kvCompareDelete, kvComparePut, kvDelete, kvGet, kvPut, kvScan, type KvPage, type KvScanOptions } from './storage/kv-namespace.js';
import { renewBinding } from './leases/lease-handle.js';
import { CancelTokens, LeaseRegistry } from './leases/lease-registry.js';
import { queueMergeOperator } from './records/merge-operator.js';
import { Broadcast, QueueNotifiers } from './workers/notifier.js';
import { cancelJob, deleteDeadJob, requeueDeadJob, wakeScheduledJob, type CancelOutcome, type RequeueDeadOptions, type WakeOutcome } from './transitions/operator-actions.js';
import { PayloadOffload } from './storage/payload-offload.js';
import { closedError, notePendingInserts, type QueueContext } from './queue-context.js';
import { resolveQueueOptions, type QueueOptions, type ResolvedQueueConfig, type ResolvedQueueOptions } from './queue-options.js';
import { reapExpiredLeases, recoverInterruptedClaims } from './transitions/reaper.js';
import { takeWaitingJob, type TakeGuard, type TakeOutcome } from './transitions/take-waiting.js';
import { sweepDead, sweepDone } from './transitions/retention.js';
import { promoteDueJobs } from './transitions/scheduler.js';
import { mayContinueInPlace, type Continuation } from './transitions/continue-in-place.js';
import { ackClaim, ackContinuing, assertClaim, deadLetterClaim, nackClaim, type NackOptions, type NackOutcome } from './transitions/settlement.js';
import { isAmbiguousCommitError, runTransaction } from './storage/staged-txn.js';
import { show } from '../show.js';
import { validateCount, validateDuration, validatePayload, validateQueueName } from './records/validation.js';

/** @internal How a worker loop settles a claim (see `Queue.settleInLoop`). */
export type LoopSettlement =
  | { readonly type: 'ack'; readonly effects: SettlementEffects }
  | { readonly type: 'nack'; readonly error: string; readonly effects: SettlementEffects; readonly options?: NackOptions }
  | { readonly type: 'dead'; readonly reason: string; readonly effects: SettlementEffects };

/** `Queue.open` options that also carry the store path. */
export interface QueueOpenOptions extends QueueOptions {
  /** Object-key prefix of the queue's engine. */
  readonly path: string;
}

export class Queue {
  private closed = false;
  private readonly stopLoops = new AbortController();
  private loops: Promise<void>[] = [];
  private heartbeat: Heartbeat | undefined;
  private readonly claimLocks = new KeyedMutex();

  private constructor(
    private readonly ctx: QueueContext,
    private readonly options: ResolvedQueueOptions,
  ) {}

  /**
   * Opens the queue store at `path` as its single writer (see the open protocol above).
   * Rejects with INVALID_ARGUMENT when `store` is not an ObjectStore, INVALID_CONFIG for bad or
   * unknown options (naming the nearest known name), STORE_UNAVAILABLE / STORE_PERMISSION /
   * CORRUPT_DATA from the store, FENCED if another writer takes over during the open.
   * @example
   * const queue = await Queue.open(store, 'jobs', { clock: new MockClock() });
   * await queue.enqueue('emails', utf8('hello'));
   */
  static async open(store: ObjectStore, path: string, options?: QueueOptions): Promise<Queue>;
  static async open(store: ObjectStore, options: QueueOpenOptions): Promise<Queue>;
  static async open(store: ObjectStore, pathOrOptions: string | QueueOpenOptions, maybeOptions?: QueueOptions): Promise<Queue> {
    checkObjectStore(store);
    if (typeof pathOrOptions !== 'string' && (typeof pathOrOptions !== 'object' || pathOrOptions === null || Array.isArray(pathOrOptions))) {
      throw new InvalidConfigError(`Queue.open takes a path string or an options object with a path. value=${show(pathOrOptions)}`, { value: show(pathOrOptions) });
    }
    if (typeof pathOrOptions !== 'string' && maybeOptions !== undefined) {
      throw new InvalidConfigError('Queue.open takes options either with the path or after it, not both. option=path', { option: 'path' });
    }
    const path = typeof pathOrOptions === 'string' ? pathOrOptions : pathOrOptions.path;
    const raw = typeof pathOrOptions === 'string' ? maybeOptions : pathOrOptions;
    const options = resolveQueueOptions(path, raw);
    const db = await KvDb.open(store, {
      path,
      mergeOperator: queueMergeOperator,
      ...(options.flushIntervalMs === undefined ? {} : { flushIntervalMs: options.flushIntervalMs }),
      ...(options.memtableBytes === undefined ? {} : { memtableBytes: options.memtableBytes }),
    });
    let token = 0;
    let queue: Queue | undefined;
    const ids = new JobIdGenerator(options.clock, options.random);
    const ctx: QueueContext = {
      db,
      path,
      clock: options.clock,
      configs: options.configs,
      ids,
      leases: new LeaseRegistry(),
      cancelTokens: new CancelTokens(),
      cursor: new ClaimCursor(),
      notifiers: new QueueNotifiers(options.clock),
      completion: new Broadcast(),
      payloads: new PayloadOffload(options.payloadStore ?? store, options.payloadPath, options.payloadOffloadThreshold, ids, options.logger),
      logger: options.logger,
      nextToken: () => ++token,
      checkOpen: () => {
        if (queue?.closed) throw closedError(path);
      },
    };
    queue = new Queue(ctx, options);
    try {
      await restoreCursors(db, ctx.cursor, ctx.logger);
      await recoverInterruptedClaims(ctx);
      if (options.livenessHeartbeatMs !== null) queue.heartbeat = await Heartbeat.start(ctx, db, options.livenessHeartbeatMs);
    } catch (e) {
      await db.close().catch(() => undefined);
      throw e;
    }
    queue.startLoops();
    return queue;
  }

  private startLoops(): void {
    const signal = this.stopLoops.signal;
    const loop = async (intervalMs: number, tick: () => Promise<unknown>, what: string): Promise<void> => {
      while (!signal.aborted) {
        try {
          await this.ctx.clock.sleep(intervalMs, signal);
        } catch {
          return;
        }
        try {
          await tick();
        } catch (e) {
          if (signal.aborted) return;
          this.ctx.logger.warn(`${what} tick failed`, e);
          // A fenced or failed engine stays failed: stop ticking.
          if (isTaqubaError(e, 'FENCED') || isTaqubaError(e, 'CLOSED')) return;
        }
      }
    };
    this.loops = [
      loop(this.options.reaperIntervalMs, () => this.runReaperTick(), 'reaper'),
      loop(this.options.schedulerIntervalMs, () => promoteDueJobs(this.ctx), 'scheduler'),
    ];
    if (this.heartbeat) this.loops.push(this.heartbeat.run(signal));
  }

  private async runReaperTick(): Promise<void> {
    await reapExpiredLeases(this.ctx);
    await sweepDone(this.ctx);
    await sweepDead(this.ctx);
  }

  /**
   * Stops the background loops, writes the closing heartbeat (best effort), persists the claim
   * cursors and closes the engine (flushing it). Claims still held are not settled: the next open
   * requeues them. Later calls reject with CLOSED. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopLoops.abort();
    await Promise.allSettled(this.loops);
    const db = this.ctx.db;
    if (this.heartbeat) await this.heartbeat.beat(true).catch((e) => this.ctx.logger.warn('closing heartbeat failed', e));
    try {
      await persistCursors(db, this.ctx.cursor);
    } catch (e) {
      this.ctx.logger.warn('persisting claim cursors failed', e);
    }
    await db.close();
  }

  // ---- accessors ----

  /** The clock every timestamp of this queue comes from. */
  get clock(): Clock {
    return this.ctx.clock;
  }

  /** The engine writer epoch of this handle. */
  get writerEpoch(): number {
    return this.ctx.db.epoch;
  }

  /**
   * @internal Resolves when the engine's background work is done (memtable flushes, compactions,
   * deletes of retired objects). For tests and benchmarks that want a quiet engine.
   */
  async whenIdle(): Promise<void> {
    this.ctx.checkOpen();
    await this.ctx.db.whenIdle();
  }

  /** The resolved configuration of `queue`. */
  queueConfig(queue: string): ResolvedQueueConfig {
    validateQueueName(queue);
    return this.ctx.configs.get(queue);
  }

  /** The object-key prefix of this queue's engine (its `Queue.open` path). */
  get path(): string {
    return this.ctx.path;
  }

  /** Draws an id from the monotonic generator without enqueuing (use with `idOverride`). */
  nextJobId(): string {
    return this.ctx.ids.next();
  }

  // ---- enqueue ----

  /**
   * Enqueues a job and returns its id (the existing job's id on a dedup hit). Durable when it
   * resolves. Rejects with INVALID_ARGUMENT (queue name, payload type, options), ALREADY_EXISTS
   * (override id in use), CLOSED, or store errors.
   */
  async enqueue(queue: string, payload: Uint8Array, options?: EnqueueOptions): Promise<string> {
    return (await this.enqueueWithKv(queue, payload, options, [])).id;
  }

  /**
   * Enqueue plus caller KV puts in one transaction. `already_enqueued` (dedup hit) applies no KV.
   * INVALID_ARGUMENT for a KV value over MAX_KV_VALUE_SIZE, before any I/O.
   */
  async enqueueWithKv(
    queue: string,
    payload: Uint8Array,
    options: EnqueueOptions | undefined,
    kvWrites: Iterable<readonly [Uint8Array, Uint8Array]>,
  ): Promise<EnqueueResult> {
    this.ctx.checkOpen();
    const writes = validateKvWrites(kvWrites);
    const prepared = await prepareEnqueue(this.ctx, queue, payload, options);
    let result: EnqueueResult | undefined;
    try {
      result = await runTransaction(this.ctx.db, async (s) => {
        const r = await stageEnqueue(this.ctx, s, prepared);
        if (r.type === 'new') for (const [k, v] of writes) s.put(userKey(k), v);
        return r;
      });
    } finally {
      // No committed record names the object: a dedup hit or a failure before commit.
      if (result?.type !== 'new') await this.ctx.payloads.deleteQuietly(prepared.record.payloadRef);
    }
    return result;
  }

  /**
   * Enqueues all payloads atomically with the queue's defaults; ids are returned in input order.
   * An empty batch is a no-op. Objects written for oversized payloads are removed if any write or
   * the commit fails.
   */
  async enqueueBatch(queue: string, payloads: readonly Uint8Array[]): Promise<string[]> {
    this.ctx.checkOpen();
    validateQueueName(queue);
    if (!Array.isArray(payloads)) validatePayload(payloads, 'payloads');
    for (const p of payloads) validatePayload(p);
    if (payloads.length === 0) return [];
    const prepared: PreparedEnqueue[] = [];
    let committed = false;
    try {
      // Validated above; only payloads over the offload threshold need the async path.
      for (const p of payloads) {
        prepared.push(this.ctx.payloads.shouldOffload(p) ? await prepareEnqueue(this.ctx, queue, p) : { record: buildRecord(this.ctx, queue, p), idOverride: false });
      }
      await runTransaction(this.ctx.db, async (s) => {
        let minKey: Uint8Array | undefined;
        for (const p of prepared) {
          const key = s.putRecord(p.record);
          if (minKey === undefined) minKey = key;
        }
        s.count(queue, 'pending', prepared.length);
        // Generated ids increase, so the first key is the smallest.
        s.afterCommit(() => notePendingInserts(this.ctx, queue, minKey!, prepared.length));
      });
      committed = true;
    } finally {
      if (!committed) await this.ctx.payloads.deleteAllQuietly(prepared.map((p) => p.record.payloadRef));
    }
    return prepared.map((p) => p.record.id);
  }

  // ---- claiming ----

  /**
   * Claims up to `max` jobs of `queue` in claim order (priority, then id), all with one lease of
   * `leaseMs`. Not awaited for durability. `max` 0 ⇒ [] without I/O. Rejects with
   * INVALID_ARGUMENT, CLOSED or store errors (a failed payload fetch: the claims stay taken until
   * their leases expire). A job whose offloaded payload object is missing or corrupt is never
   * returned: it is moved to Dead with a reason naming the object (`payload object corrupt.
   * object=... problem=...` or `payload object missing. object=...`).
   */
  async claimBatch(queue: string, max: number, leaseMs: number): Promise<Claim[]> {
    this.ctx.checkOpen();
    validateQueueName(queue);
    validateCount(max, 'max');
    validateDuration(leaseMs, 'leaseMs');
    return claimJobs(this.ctx, this.claimLocks, queue, max, leaseMs, (claim, reason) => deadLetterClaim(this.ctx, claim, reason));
  }

  /** Claims the next job of `queue`, or undefined. */
  async claim(queue: string, leaseMs: number): Promise<Claim | undefined> {
    return (await this.claimBatch(queue, 1, leaseMs))[0];
  }

  /** `claim` with the queue's configured lease. */
  async claimNext(queue: string): Promise<Claim | undefined> {
    validateQueueName(queue);
    return this.claim(queue, this.ctx.configs.get(queue).leaseMs);
  }

  /**
   * Resolves true on the queue's next insert wakeup (or at once for a wakeup stored before the
   * call), false after `maxWaitMs`. Does not guarantee a job is still there.
   */
  async waitForJobsOn(queue: string, maxWaitMs: number, signal?: AbortSignal): Promise<boolean> {
    this.ctx.checkOpen();
    validateQueueName(queue);
    validateDuration(maxWaitMs, 'maxWaitMs');
    const waiter = this.ctx.notifiers.get(queue).register();
    try {
      return await waiter.wait(maxWaitMs, signal);
    } finally {
      waiter.dispose();
    }
  }

  /**
   * Claims one job, waiting up to `maxWaitMs` for one to arrive. Registers for wakeups before
   * each attempt; a success passes one wakeup on so a backlog keeps waking workers; a wakeup that
   * loses the race keeps waiting until the full deadline.
   */
  async claimWithWait(queue: string, leaseMs: number, maxWaitMs: number, signal?: AbortSignal): Promise<Claim | undefined> {
    this.ctx.checkOpen();
    validateQueueName(queue);
    validateDuration(leaseMs, 'leaseMs');
    validateDuration(maxWaitMs, 'maxWaitMs');
    const deadline = this.ctx.clock.now() + maxWaitMs;
    const notify = this.ctx.notifiers.get(queue);
    for (;;) {
      const waiter = notify.register();
      try {
        const claim = await this.claim(queue, leaseMs);
        if (claim) {
          notify.notifyOne();
          return claim;
        }
        const remaining = deadline - this.ctx.clock.now();
        if (remaining <= 0 || signal?.aborted) return undefined;
        const woke = await waiter.wait(remaining, signal);
        if (!woke) return undefined;
      } finally {
        waiter.dispose();
      }
    }
  }

  // ---- settlement ----

  /**
   * Acks a claim: the job is done (kept as a Done record when the queue keeps done jobs, else
   * deleted with its index and history). Durable. Rejects with CLAIM_LOST (nothing applied) when
   * the claim was reaped, superseded or already settled.
   */
  async ack(claim: Claim): Promise<void> {
    await ackClaim(this.ctx, claim);
  }

  /** `ack` plus settlement effects in the same transaction; results align with `effects.enqueues`. */
  async ackWith(claim: Claim, effects: SettlementEffects): Promise<EnqueueResult[]> {
    return ackClaim(this.ctx, claim, effects);
  }

  /**
   * @internal For the workflow runtime: whether `claim` may continue in place as a job with
   * `payload` (transitions/continue-in-place.ts: the queue keeps no done jobs, the payload stays
   * inline, nothing of higher priority waits). Ask right before `ackContinuing`.
   */
  mayContinueInPlace(claim: Claim, payload: Uint8Array): boolean {
    assertClaim(claim);
    return mayContinueInPlace(this.ctx, claim, payload);
  }

  /**
   * @internal For the workflow runtime: `ackWith` that keeps the job, rewritten in place as
   * `next` (same id, queue, priority and attempts budget; a fresh try) and still claimed by this
   * worker with the queue's lease, so it runs next in the same slot. Resolves, once durable, with
   * the continued job's claim. INVALID_ARGUMENT when it may not (see `mayContinueInPlace`).
   */
  async ackContinuing(claim: Claim, next: Continuation, effects?: SettlementEffects): Promise<Claim> {
    assertClaim(claim);
    return ackContinuing(this.ctx, claim, next, effects, this.ctx.configs.get(claim.queue).leaseMs);
  }

  /**
   * Reports a failed attempt. Out of attempts ⇒ Dead; else back to Pending (zero backoff) or
   * Scheduled at now + min(base·2^(attempts−1), max), or later when `options.retryAfterMs` asks
   * for a longer wait. Durable. CLAIM_LOST as for `ack`; INVALID_ARGUMENT for a negative or
   * non-finite `retryAfterMs`.
   */
  async nack(claim: Claim, error: string, options?: NackOptions): Promise<NackOutcome> {
    return nackClaim(this.ctx, claim, error, undefined, undefined, options);
  }

  /** `nack` whose effects apply only if this nack dead-letters the job (discarded on retry). */
  async nackWith(claim: Claim, error: string, effects: SettlementEffects, options?: NackOptions): Promise<NackOutcome> {
    return nackClaim(this.ctx, claim, error, effects, undefined, options);
  }

  /** Moves the job to Dead now, whatever attempts remain. Durable. CLAIM_LOST as for `ack`. */
  async deadLetter(claim: Claim, reason: string): Promise<void> {
    await deadLetterClaim(this.ctx, claim, reason);
  }

  /** `deadLetter` plus settlement effects. */
  async deadLetterWith(claim: Claim, reason: string, effects: SettlementEffects): Promise<EnqueueResult[]> {
    return deadLetterClaim(this.ctx, claim, reason, effects);
  }

  /**
   * @internal For worker loops: settles `claim` like ackWith / nackWith / deadLetterWith and calls
   * `onIssued` as soon as the settlement's commit is issued (applied, unless it conflicts), before
   * its durability is awaited; resolves once it is durable.
   */
  async settleInLoop(claim: Claim, outcome: LoopSettlement, onIssued: () => void): Promise<void> {
    if (outcome.type === 'ack') await ackClaim(this.ctx, claim, outcome.effects, onIssued);
    else if (outcome.type === 'nack') await nackClaim(this.ctx, claim, outcome.error, outcome.effects, onIssued, outcome.options);
    else await deadLetterClaim(this.ctx, claim, outcome.reason, outcome.effects, onIssued);
  }

  /**
   * Sets the claim's lease to expire `extensionMs` from now (may shorten it; memory only).
   * Returns the new expiry. Throws CANCELLED after a cancel request, CLAIM_LOST when the lease
   * is gone or the reaper already took it.
   */
  renewLease(claim: Claim, extensionMs: number): number {
    assertClaim(claim);
    validateDuration(extensionMs, 'extensionMs');
    return renewBinding(
      { registry: this.ctx.leases, clock: this.ctx.clock, queue: claim.queue, id: claim.id, token: claim.token, cancel: claim.cancelState },
      this.ctx.clock.now() + extensionMs,
    );
  }

  /** The in-memory lease expiry of a job claimed by this handle, if any. */
  leaseExpiry(queue: string, id: string): number | undefined {
    return this.ctx.leases.expiry(queue, id);
  }

  // ---- operator actions ----

  /** Cancels a job: `removed` (waiting job deleted), `requested` (claimed job signalled), `not_found`. Durable. */
  async cancel(id: string): Promise<CancelOutcome> {
    return (await cancelJob(this.ctx, id)).outcome;
  }

  /**
   * `cancel` whose effects apply only when the outcome is `removed`; `recorded` caller-KV writes
   * apply with `removed` and `requested` (what a cancel command answered, kept with its change).
   */
  async cancelWith(id: string, effects: SettlementEffects, recorded?: Iterable<readonly [Uint8Array, Uint8Array]>): Promise<{ outcome: CancelOutcome; results: EnqueueResult[] }> {
    return cancelJob(this.ctx, id, effects, recorded);
  }

  /**
   * Deletes a waiting (pending or scheduled) job and applies `effects` in the same transaction;
   * true once durable. False, with nothing applied, when the job is claimed, settled or unknown:
   * unlike `cancel`, a claimed job is left alone (no cancel request). The workflow runtime
   * replaces a debounced run's scheduled first step this way (`takeWaiting` with no guard).
   */
  async removeWaitingWith(id: string, effects: SettlementEffects): Promise<boolean> {
    return (await takeWaitingJob(this.ctx, id, { accept: () => true }, effects)) === 'taken';
  }

  /**
   * @internal Removes a waiting (pending or scheduled) job with `effects`, only while `guard`
   * holds (the record and caller-KV entries as read before); a claimed job is left alone
   * (`claimed`). Durable. The workflow layer's run hand-off (take-waiting.ts).
   */
  async takeWaiting(id: string, guard: TakeGuard, effects: SettlementEffects): Promise<TakeOutcome> {
    return takeWaitingJob(this.ctx, id, guard, effects);
  }

  /** Makes a scheduled job pending now with an optional wake payload; `recorded` caller-KV writes commit with the wake. Durable. */
  async wakeScheduled(id: string, wakePayload?: Uint8Array, recorded?: Iterable<readonly [Uint8Array, Uint8Array]>): Promise<WakeOutcome> {
    return wakeScheduledJob(this.ctx, id, wakePayload, recorded);
  }

  /**
   * Requeues a dead job with a fresh attempt budget. Durable. Rejects with NOT_FOUND when the
   * job is gone, INVALID_ARGUMENT when it is not dead, CORRUPT_DATA (details.reason
   * `payload_unreadable`, details.object the key) when its offloaded payload object is missing
   * or corrupt (the job stays dead: restore the object, or delete the job). `options` commits
   * caller-KV puts with the requeue, only while a key is absent (else CONFLICT, reason `kv_exists`).
   */
  async requeueDeadJob(idOrRecord: string | JobRecord, options?: RequeueDeadOptions): Promise<void> {
    await requeueDeadJob(this.ctx, idOrRecord, options);
  }

  /**
   * Deletes a dead job (record, index, history, then its payload object, readable or not).
   * Resolves true once durable, false when the job is already gone. Rejects with
   * INVALID_ARGUMENT when the job is not dead (use `cancel` for a waiting job).
   */
  async deleteDeadJob(idOrRecord: string | JobRecord): Promise<boolean> {
    return deleteDeadJob(this.ctx, idOrRecord);
  }

  /** Runs one lease-reaper sweep now (not the retention sweeps). Returns claims ended. */
  async reapNow(): Promise<number> {
    this.ctx.checkOpen();
    return reapExpiredLeases(this.ctx);
  }

  /** Runs one promotion sweep of due scheduled jobs now. Returns jobs promoted. */
  async promoteScheduledNow(): Promise<number> {
    this.ctx.checkOpen();
    return promoteDueJobs(this.ctx);
  }

  /** Runs the done and dead retention sweeps now. Returns records deleted. */
  async sweepRetentionNow(): Promise<{ done: number; dead: number }> {
    this.ctx.checkOpen();
    return { done: await sweepDone(this.ctx), dead: await sweepDead(this.ctx) };
  }

  /**
   * Applies settlement effects with no job transition: follow-up enqueues and caller KV writes and
   * deletes in one durable transaction, all or nothing (for repairs that must not be half done,
   * like the workflow runtime's dead-step reconciliation). Results align with `effects.enqueues`.
   * An empty effects object commits nothing. Rejects with INVALID_ARGUMENT (before any write),
   * CLOSED, or store errors.
   */
  async commitEffects(effects: SettlementEffects): Promise<EnqueueResult[]> {
    this.ctx.checkOpen();
    const prepared = await prepareEffects(this.ctx, effects);
    try {
      return await runTransaction(this.ctx.db, (s) => stageEffects(this.ctx, s, prepared));
    } catch (e) {
      if (!isAmbiguousCommitError(e)) await discardEffects(this.ctx, prepared);
      throw e;
    }
  }

  // ---- caller KV ----

  /** The caller value under `key`, or undefined. */
  async kvGet(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.ctx.checkOpen();
    return kvGet(this.ctx.db, key);
  }

  /** Durable put; INVALID_ARGUMENT when the value exceeds MAX_KV_VALUE_SIZE. */
  async kvPut(key: Uint8Array, value: Uint8Array): Promise<void> {
    this.ctx.checkOpen();
    await kvPut(this.ctx.db, key, value);
  }

  /** Durable unconditional delete. */
  async kvDelete(key: Uint8Array): Promise<void> {
    this.ctx.checkOpen();
    await kvDelete(this.ctx.db, key);
  }

  /** Puts only if the current value equals `expected` (null: absent). Durable; no lost updates. */
  async kvComparePut(key: Uint8Array, expected: Uint8Array | null, value: Uint8Array): Promise<boolean> {
    this.ctx.checkOpen();
    return kvComparePut(this.ctx.db, key, expected, value);
  }

  /** Deletes only if the current value equals `expected`. Durable. */
  async kvCompareDelete(key: Uint8Array, expected: Uint8Array): Promise<boolean> {
    this.ctx.checkOpen();
    return kvCompareDelete(this.ctx.db, key, expected);
  }

  /** One page of caller entries under `prefix`, in key order. */
  async kvScan(prefix: Uint8Array, options?: KvScanOptions): Promise<KvPage> {
    this.ctx.checkOpen();
    return kvScan(this.ctx.db, prefix, options);
  }

  // ---- inspection ----

  private async inSnapshot<T>(fn: (source: InspectionSource) => Promise<T>): Promise<T> {
    this.ctx.checkOpen();
    const txn = this.ctx.db.begin();
    try {
      return await fn({ reader: txn, payloads: this.ctx.payloads, recheck: this.ctx.db });
    } finally {
      txn.rollback();
    }
  }

  /** Counts by state (done is cumulative); zeros for an unknown queue. */
  async stats(queue: string): Promise<QueueStats> {
    this.ctx.checkOpen();
    return queueStats(this.ctx.db, queue);
  }

  /** Every queue that ever had a job. */
  async listQueues(): Promise<string[]> {
    this.ctx.checkOpen();
    return listQueues(this.ctx.db);
  }

  /**
   * The job with its payload, or undefined. A job whose offloaded payload object is missing or
   * corrupt comes back with an empty `payload` and `payloadError` saying why (never a rejection).
   * Rejects with CORRUPT_DATA for an undecodable record, CLOSED or store errors.
   */
  async getJob(id: string): Promise<JobRecord | undefined> {
    return this.inSnapshot((source) => getJob(source, id));
  }

  /**
   * One page of the jobs of `queue` in `status`. Jobs with an unreadable payload object are
   * listed with `payloadError` set, as in `getJob`.
   */
  async listJobs(queue: string, status: JobStatus, options?: ListJobsOptions): Promise<JobPage> {
    return this.inSnapshot((source) => listJobs(source, queue, status, options));
  }

  /** Dead jobs of `queue` in id order after `afterId`; `payloadError` as in `getJob`. */
  async deadJobs(queue: string, afterId: string | undefined, limit: number): Promise<JobRecord[]> {
    return this.inSnapshot((source) => deadJobs(source, queue, afterId, limit));
  }

  /** The job's attempt history in write order. */
  async attemptHistory(id: string): Promise<JobAttempt[]> {
    this.ctx.checkOpen();
    return attemptHistory(this.ctx.db, id);
  }

  /** Waits until the job is done, dead or gone, up to `timeoutMs`. In process only. */
  async waitForCompletion(id: string, timeoutMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    this.ctx.checkOpen();
    return waitForCompletion(this.ctx, (jobId) => this.getJob(jobId), id, timeoutMs, signal);
  }

  /** @internal For worker loops: the queue's wakeup notifier. */
  notifierOf(queue: string) {
    return this.ctx.notifiers.get(queue);
  }

  /** @internal For tests and tooling: a snapshot of live leases. */
  liveLeases() {
    return this.ctx.leases.list();
  }

  /** @internal Logger of this handle (worker loops log through it). */
  get logger() {
    return this.ctx.logger;
  }
}
