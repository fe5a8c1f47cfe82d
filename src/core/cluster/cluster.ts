/**
 * `Cluster`: one member of a cluster of processes sharing the shards of one store (RFC 0003).
 * The member loop (membership, desired owners, leases) lives here; the owned shards are
 * `ShardHost`s, commands for other members' shards go through inboxes (inbox.ts).
 */
import { utf8 } from '../bytes.js';
import { ClosedError, InvalidArgumentError, InvalidConfigError, isTaqubaError } from '../errors.js';
import { createObject } from '../objects/create-object.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import { checkObjectStore } from '../options.js';
import { createRunIdGenerator, WorkflowReader, type RunDetails, type RunSpec, type RunStatus, type SignalOutcome, type SubmitOutcome, type WorkflowRuntime } from '../workflow/index.js';
import { validateRunId } from '../workflow/validation.js';
import { validateSpec } from '../workflow/submit.js';
import { newCommandId, validateCommandId, type CommandOptions } from '../workflow/command-ledger.js';
import { checkCorrelationKey } from '../workflow/outcome.js';
import { DEFAULT_QUEUE_NAME } from '../workflow/constants.js';
import { DEFAULT_JOBS_QUEUE_NAME } from '../workflow/jobs/job-runner.js';
import type { JobSubmitOptions } from '../workflow/jobs/index.js';
import type { Job } from '../workflow/jobs/job.js';
import { ClusterJobHandle, finishedJob, prepareJob, type JobSource } from './cluster-jobs.js';
import { assignShards } from './assignment.js';
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options.js';
import { applyInbox, collectOrphanReplies, CommandSender, MAX_BACKOFF_FACTOR } from './inbox.js';
import { ClusterLayout, parseInboxKey, routingText, shardOfText } from './layout.js';
import { createLease, listLeaseTable, readNewestLease } from './leases.js';
import { MemberView } from './members.js';
import { decodeCluster, encodeCluster, encodeMember, type ClusterCommand, type LeaseRecord } from './records.js';
import { ShardHost, withoutWriterLock } from './shard-host.js';

interface Held {
  seq: number;
  expiresAt: number;
  host: ShardHost;
  releasing: boolean;
  /** Set with `releasing`: settles when the release record is written (or failed). */
  released?: Promise<void>;
  /** The renewal in flight (creating record `seq + 1`), if any. */
  renewing?: Promise<void>;
  /** When the newest renewal of this hold started (clock ms): the lease's age is measured from it. */
  renewedAt: number;
}

/** How leases were renewed so far (tests and benchmarks: how close a member came to losing a shard). */
export interface RenewalStats {
  /** Successful renewals. */
  readonly renewals: number;
  /** Longest time between the start of one renewal of a shard and the end of the next (ms). */
  readonly maxGapMs: number;
  /** Longest renewal round trip (ms). */
  readonly maxRoundTripMs: number;
  /** Longest delay of a renewal tick past its due time (a busy event loop, ms). */
  readonly maxTickLagMs: number;
}

/** Lease records kept per shard besides the newest (older ones are deleted by the owner). */
const KEPT_LEASE_RECORDS = 2;

function nonce(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * Joins the cluster `options.name` on `store` as a member (creating the cluster with
 * `options.shards` shards if it does not exist), and starts the member loop: the member takes a
 * fair share of the shards, runs their workflows, and hands them over when it leaves.
 * Rejects with INVALID_CONFIG (bad options, or a cluster created with another shard count),
 * INVALID_ARGUMENT (runner or hook of the wrong shape), CORRUPT_DATA or store errors.
 * @example
 * const cluster = await openCluster(store, { name: 'orders', shards: 16, runner });
 * await cluster.submit({ runId: 'order-42', input });
 * await cluster.leave();
 */
export async function openCluster(store: ObjectStore, options: ClusterOptions): Promise<Cluster> {
  checkObjectStore(store);
  const resolved = resolveClusterOptions(options);
  const layout = new ClusterLayout(resolved.name);
  const created = await createObject(store, layout.clusterKey, encodeCluster({ shards: resolved.shards }));
  if (!created.created) {
    const existing = created.existing ?? (await store.get(layout.clusterKey));
    if (existing) {
      const record = decodeCluster(existing.data, layout.clusterKey);
      if (record.shards !== resolved.shards) {
        throw new InvalidConfigError(`cluster ${resolved.name} was created with ${record.shards} shards; shards cannot change. shards=${resolved.shards}`, {
          option: 'shards',
          value: resolved.shards,
          existing: record.shards,
        });
      }
    }
  }
  const cluster = new Cluster(store, resolved, layout);
  await cluster.start();
  return cluster;
}

export class Cluster {
  private readonly shardStore: ObjectStore;
  private readonly held = new Map<number, Held>();
  /** Hosts being closed, awaited before the shard is opened again here. */
  private readonly closing = new Map<number, Promise<void>>();
  private readonly leaseCache = new Map<string, LeaseRecord>();
  private readonly readers = new Map<string, Promise<WorkflowReader>>();
  private readonly stop = new AbortController();
  private readonly nextRunId: () => string;
  private readonly sender: CommandSender;
  private loop: Promise<void> | undefined;
  private renewLoop: Promise<void> | undefined;
  private renewal = { renewals: 0, maxGapMs: 0, maxRoundTripMs: 0, maxTickLagMs: 0 };
  private inboxLoop: Promise<void> | undefined;
  private left: Promise<void> | undefined;
  private liveMembers: readonly string[] = [];
  private passChain: Promise<void> = Promise.resolve();
  /** When `collectReplies` last ran (clock ms). */
  private repliesCollectedAt = -Infinity;
  private readonly memberView: MemberView;

  /** @internal Use `openCluster`. */
  constructor(
    private readonly store: ObjectStore,
    private readonly options: ResolvedClusterOptions,
    private readonly layout: ClusterLayout,
  ) {
    this.shardStore = withoutWriterLock(store);
    this.memberView = new MemberView(store, layout, options.memberId, options.leaseMs, options.maxClockSkewMs);
    this.nextRunId = createRunIdGenerator(options.clock);
    this.sender = new CommandSender(store, layout, { clock: options.clock, pollMs: options.inboxPollMs, timeoutMs: options.commandTimeoutMs, signal: this.stop.signal });
  }

  /** This member's id (its heartbeat object's name). */
  get memberId(): string {
    return this.options.memberId;
  }

  /** The shard count, fixed at the cluster's creation. */
  get shardCount(): number {
    return this.options.shards;
  }

  /** The cluster name (the key prefix of all its objects). */
  get name(): string {
    return this.options.name;
  }

  /** The shard a run id belongs to. INVALID_ARGUMENT for a bad run id. */
  shardOf(runId: string): number {
    validateRunId(runId);
    return shardOfText(runId, this.options.shards);
  }

  /**
   * The shard a signal on `correlationKey` goes to: that of the text before its first `#` (the
   * whole key without one). A run waits only on keys of its own shard, e.g. `${runId}#approval`.
   */
  shardOfCorrelationKey(correlationKey: string): number {
    checkCorrelationKey(correlationKey);
    return shardOfText(routingText(correlationKey), this.options.shards);
  }

  /** Shards this member owns and runs now, ascending. */
  ownedShards(): number[] {
    return [...this.held.entries()].filter(([, h]) => !h.releasing && h.host.openRuntime !== undefined).map(([s]) => s).sort((a, b) => a - b);
  }

  /** The live members as of the last loop pass, sorted. */
  members(): readonly string[] {
    return this.liveMembers;
  }

  /** @internal */
  async start(): Promise<void> {
    await this.pass();
    this.loop = this.runLoop();
    this.renewLoop = this.options.takesShards ? this.runRenewals() : Promise.resolve();
    this.inboxLoop = this.options.takesShards ? this.runInbox() : Promise.resolve();
  }

  /**
   * Applies the commands for the shards this member runs: one listing of every inbox per poll,
   * backing off while nothing comes (on S3 a listing is the costly request).
   */
  private async runInbox(): Promise<void> {
    const o = this.options;
    const signal = this.stop.signal;
    /** Shards whose batches are being applied: one apply per shard at a time, never waited on by the others. */
    const applying = new Set<number>();
    let waitMs = o.inboxPollMs;
    while (!signal.aborted) {
      await o.clock.sleep(waitMs, signal).catch(() => undefined);
      if (signal.aborted) return;
      let found = 0;
      try {
        const byShard = new Map<number, string[]>();
        const root = this.layout.inboxRoot;
        if (this.held.size > 0) {
          for await (const info of this.store.list(root)) {
            const shard = parseInboxKey(info.key.slice(root.length));
            if (shard === undefined || applying.has(shard) || this.localRuntime(shard) === undefined) continue;
            const keys = byShard.get(shard) ?? [];
            keys.push(info.key);
            byShard.set(shard, keys);
          }
        }
        for (const [shard, keys] of byShard) {
          const runtime = this.localRuntime(shard);
          if (!runtime) continue;
          found += keys.length;
          applying.add(shard);
          void applyInbox(this.store, this.layout, shard, keys, { runtime, jobs: this.localJobsRuntime(shard) }, signal)
            .catch((e) => {
              // CLOSED / FENCED: the shard was dropped or handed over mid-batch; its next owner applies the batch.
              const moved = isTaqubaError(e, 'CLOSED') || isTaqubaError(e, 'FENCED');
              if (!signal.aborted) o.logger[moved ? 'debug' : 'warn']('cluster inbox batch failed; retrying', { member: this.memberId, shard, error: (e as Error)?.message });
            })
            .finally(() => applying.delete(shard));
        }
      } catch (e) {
        if (!signal.aborted) o.logger.warn('cluster inbox listing failed; retrying', { member: this.memberId, error: (e as Error)?.message });
      }
      waitMs = found > 0 || applying.size > 0 ? o.inboxPollMs : Math.min(Math.round(waitMs * 1.5), o.inboxPollMs * MAX_BACKOFF_FACTOR);
    }
  }

  private async runLoop(): Promise<void> {
    const interval = Math.round(this.options.leaseMs / 3);
    while (!this.stop.signal.aborted) {
      try {
        await this.options.clock.sleep(interval, this.stop.signal);
      } catch {
        return;
      }
      try {
        await this.pass();
        // Not awaited: listings on a slow store must not delay the next lease renewal.
        void this.collectReplies();
      } catch (e) {
        if (this.stop.signal.aborted) return;
        this.options.logger.warn('cluster member pass failed; retrying', { member: this.memberId, error: (e as Error)?.message });
      }
    }
  }

  /**
   * Renews every held shard each `leaseMs / 3`, on its own timer: the member pass lists and reads
   * (slow on a loaded store) and must never delay a renewal. Each renewal is one create-only put,
   * not awaited here, so one slow put holds up only its own shard's next renewal.
   */
  private async runRenewals(): Promise<void> {
    const o = this.options;
    const interval = Math.round(o.leaseMs / 3);
    let due = o.clock.now() + interval;
    while (!this.stop.signal.aborted) {
      try {
        await o.clock.sleep(Math.max(0, due - o.clock.now()), this.stop.signal);
      } catch {
        return;
      }
      const now = o.clock.now();
      this.renewal.maxTickLagMs = Math.max(this.renewal.maxTickLagMs, now - due);
      due = now + interval;
      this.dropExpired(now);
      for (const [shard, h] of this.held) {
        if (h.releasing || h.renewing) continue;
        const renewing = this.renew(shard, h)
          .catch((e) => {
            if (!this.stop.signal.aborted) o.logger.warn('cluster lease renewal failed; retrying', { member: this.memberId, shard, error: (e as Error)?.message });
          })
          .finally(() => {
            if (h.renewing === renewing) h.renewing = undefined;
          });
        h.renewing = renewing;
      }
    }
  }

  /** Drops every held shard whose lease is about to expire by this member's clock (a paused or starved member). */
  private dropExpired(now: number): void {
    const safetyMs = this.options.leaseMs / 5;
    for (const [shard, h] of this.held) {
      if (!h.releasing && now >= h.expiresAt - safetyMs) this.drop(shard, `lease expired before it was renewed (a paused or slow member; ${now - h.renewedAt} ms since the last renewal started)`);
    }
  }

  /** @internal Tests and benchmarks: how lease renewals went so far. */
  renewalStats(): RenewalStats {
    return { ...this.renewal };
  }

  /**
   * Once per `commandTimeoutMs`, deletes the replies of owned shards that no sender will read:
   * those of batches sent more than twice the timeout ago (plus the clock-skew margin on both
   * clocks and the senders' longest poll backoff).
   */
  private async collectReplies(): Promise<void> {
    const o = this.options;
    const now = o.clock.now();
    if (now - this.repliesCollectedAt < o.commandTimeoutMs) return;
    // Set first: a failed collection waits for the next period (an overlapping one only repeats deletes).
    this.repliesCollectedAt = now;
    const sentBefore = now - 2 * o.commandTimeoutMs - 2 * o.maxClockSkewMs - MAX_BACKOFF_FACTOR * o.inboxPollMs;
    try {
      for (const shard of this.ownedShards()) {
        if (this.stop.signal.aborted) return;
        await collectOrphanReplies(this.store, this.layout, shard, sentBefore);
      }
    } catch (e) {
      if (!this.stop.signal.aborted) o.logger.warn('cluster reply collection failed; retrying next period', { member: this.memberId, error: (e as Error)?.message });
    }
  }

  /** @internal Tests: one member-loop pass now. */
  async passNow(): Promise<void> {
    await this.pass();
  }

  /** One pass of the member loop, never two at once (both would create the same lease seq). */
  private pass(): Promise<void> {
    const next = this.passChain.then(() => this.passOnce());
    this.passChain = next.catch(() => undefined);
    return next;
  }

  /** One pass of the member loop (RFC 0003 "Member loop"). */
  private async passOnce(): Promise<void> {
    const o = this.options;
    const now = o.clock.now();
    this.dropExpired(now);
    for (const [shard, h] of this.held) {
      if (!h.releasing && h.host.failure !== undefined) this.drop(shard, `shard stopped: ${(h.host.failure as Error)?.message ?? String(h.host.failure)}`);
    }
    // Leases are renewed by their own loop (runRenewals), never held up by this pass's reads.
    const beat = o.takesShards ? this.store.put(this.layout.memberKey(o.memberId), encodeMember({ memberId: o.memberId, beatAt: now, leaseMs: o.leaseMs })) : Promise.resolve();
    const [live, table] = await Promise.all([
      beat.then(() => this.memberView.live(now, o.takesShards && !this.stop.signal.aborted)),
      // A client member (takesShards false) needs no lease table.
      o.takesShards ? listLeaseTable(this.store, this.layout, o.shards) : Promise.resolve([]),
    ]);
    if (live.join() !== this.liveMembers.join()) o.logger.info('cluster membership changed', { member: this.memberId, members: live.join(',') });
    this.liveMembers = live;
    if (!o.takesShards) return;
    const desired = assignShards(o.shards, live);
    const work: Promise<void>[] = [];
    for (let shard = 0; shard < o.shards; shard++) {
      const { newestSeq, keys } = table[shard]!;
      const h = this.held.get(shard);
      if (h) {
        if (h.releasing) continue;
        // A renewal in flight may have created h.seq + 1 before this listing: that one is ours.
        // Past it is another member's (a lost renewal drops the shard by itself).
        if (newestSeq > h.seq + (h.renewing ? 1 : 0)) {
          this.drop(shard, `lease record ${newestSeq} created by another member`);
          continue;
        }
        // Not awaited: the hand-over waits for in-flight steps, and must not hold up the loop.
        if (desired[shard] !== o.memberId) void this.release(shard, h).catch((e) => o.logger.warn('cluster release failed', { member: this.memberId, shard, error: (e as Error)?.message }));
        else work.push(this.collectLeases(keys));
      } else if (o.takesShards && !this.stop.signal.aborted && desired[shard] === o.memberId) {
        work.push(
          (async () => {
            const newest = await readNewestLease(this.store, keys, this.leaseCache);
            if (this.takeable(newest, now)) await this.take(shard, newest?.seq ?? 0);
          })(),
        );
      }
    }
    await Promise.all(work);
    // Records never change once created; keep the cache to the newest keys.
    const newestKeys = new Set(table.map((t) => t.keys[t.keys.length - 1]));
    for (const key of this.leaseCache.keys()) if (!newestKeys.has(key)) this.leaseCache.delete(key);
  }

  /** Free for us: never leased, released, ours from an earlier life, or expired with the skew margin. */
  private takeable(newest: LeaseRecord | undefined, now: number): boolean {
    if (newest === undefined || newest.kind === 'release' || newest.owner === this.memberId) return true;
    return newest.expiresAt + this.options.maxClockSkewMs < now;
  }

  private leaseRecord(seq: number, kind: 'hold' | 'release'): LeaseRecord {
    return { seq, kind, owner: this.memberId, expiresAt: kind === 'hold' ? this.options.clock.now() + this.options.leaseMs : 0, nonce: nonce() };
  }

  private async take(shard: number, newestSeq: number): Promise<void> {
    const record = this.leaseRecord(newestSeq + 1, 'hold');
    if (!(await createLease(this.store, this.layout, shard, record))) return; // another member won it
    this.leaseCache.set(this.layout.leaseKey(shard, record.seq), record);
    // Our own earlier host of this shard (dropped) may still be closing: the new one opens after
    // it (its open would fence it anyway, but waiting keeps its last commits from failing
    // needlessly), in the background, so the loop is never held up.
    const host = new ShardHost(shard, this.shardStore, this.layout, this.options, this.closing.get(shard));
    this.held.set(shard, { seq: record.seq, expiresAt: record.expiresAt, host, releasing: false, renewedAt: record.expiresAt - this.options.leaseMs });
    this.options.logger.info('cluster shard taken', { member: this.memberId, shard, seq: record.seq });
    // Not awaited: the engine opens in the background (replay can take a while), and the member
    // loop must keep renewing meanwhile. A failed open shows as `host.failure` at the next pass.
    host.ready.catch((e) => this.options.logger.warn('cluster shard failed to open', { member: this.memberId, shard, error: (e as Error)?.message }));
  }

  private async renew(shard: number, h: Held): Promise<void> {
    const record = this.leaseRecord(h.seq + 1, 'hold');
    const startedAt = record.expiresAt - this.options.leaseMs;
    // No listing after a renewal: a record past ours shows in the next pass's lease table, and
    // the engine's fencing covers the moment in between.
    if (!(await createLease(this.store, this.layout, shard, record, false))) {
      if (this.held.get(shard) === h) this.drop(shard, 'lease renewal lost to another member');
      return;
    }
    const now = this.options.clock.now();
    const r = this.renewal;
    r.renewals++;
    r.maxGapMs = Math.max(r.maxGapMs, now - h.renewedAt);
    r.maxRoundTripMs = Math.max(r.maxRoundTripMs, now - startedAt);
    h.seq = record.seq;
    h.expiresAt = record.expiresAt;
    h.renewedAt = startedAt;
    this.leaseCache.set(this.layout.leaseKey(shard, record.seq), record);
  }

  /** Deletes a held shard's old lease records (keys from this pass's listing, all older than our newest). */
  private async collectLeases(keys: readonly string[]): Promise<void> {
    const old = keys.slice(0, Math.max(0, keys.length - KEPT_LEASE_RECORDS));
    for (const key of old) await this.store.delete(key).catch(() => undefined);
  }

  /** Hands a shard over: stop its work, then a release record so the next owner need not wait for expiry. */
  private release(shard: number, h: Held): Promise<void> {
    h.releasing = true;
    h.released = this.handOver(shard, h);
    return h.released;
  }

  private async handOver(shard: number, h: Held): Promise<void> {
    await h.host.close();
    // A renewal in flight takes seq + 1; the release record comes after it.
    await h.renewing;
    try {
      await createLease(this.store, this.layout, shard, this.leaseRecord(h.seq + 1, 'release'));
      this.options.logger.info('cluster shard released', { member: this.memberId, shard });
    } finally {
      if (this.held.get(shard) === h) this.held.delete(shard);
    }
  }

  /** Stops using a shard at once, writing nothing (the lease is lost or about to be). */
  private drop(shard: number, why: string): void {
    const h = this.held.get(shard);
    if (!h) return;
    this.held.delete(shard);
    this.options.logger.warn('cluster shard dropped', { member: this.memberId, shard, reason: why });
    const closed = h.host.close();
    this.closing.set(shard, closed);
    void closed.finally(() => {
      if (this.closing.get(shard) === closed) this.closing.delete(shard);
    });
  }

  /** The local runtime of `shard` when this member owns it and it is open. */
  private localRuntime(shard: number): WorkflowRuntime | undefined {
    const h = this.held.get(shard);
    return h && !h.releasing ? h.host.openRuntime : undefined;
  }

  /** The local typed-jobs runtime of `shard` when this member owns it and it is open. */
  private localJobsRuntime(shard: number): WorkflowRuntime | undefined {
    const h = this.held.get(shard);
    return h && !h.releasing ? h.host.openJobsRuntime : undefined;
  }

  /** @internal Tests: the open runtime of an owned shard. */
  runtimeOf(shard: number): WorkflowRuntime | undefined {
    return this.localRuntime(shard);
  }

  /** @internal Tests: the queue of an owned shard, also after it was fenced. */
  queueOf(shard: number): Queue | undefined {
    return this.held.get(shard)?.host.openQueue;
  }

  /**
   * Runs `local` on the shard's runtime when this member owns it, else sends `command` through
   * the shard's inbox. A local call that meets FENCED or CLOSED (the shard moved meanwhile) goes
   * through the inbox instead.
   */
  private async route<T>(shard: number, command: ClusterCommand, options: CommandOptions | undefined, local: (runtime: WorkflowRuntime, once: CommandOptions) => Promise<T>): Promise<T> {
    if (this.left !== undefined) throw new ClosedError(`cluster member ${this.memberId} has left`);
    // One id for the local call and the inbox, so a local call cut short by a move is applied once.
    const commandId = options?.commandId ?? newCommandId(this.options.clock);
    validateCommandId(commandId);
    const once = { commandId };
    const runtime = this.localRuntime(shard);
    if (runtime) {
      try {
        return await local(runtime, once);
      } catch (e) {
        if (!isTaqubaError(e, 'FENCED') && !isTaqubaError(e, 'CLOSED')) throw e;
      }
    }
    return (await this.sender.send(shard, { ...command, commandId })) as T;
  }

  /**
   * Starts a run in its shard, from any member; idempotent on (run id, input) like
   * `WorkflowRuntime.submit`. A spec without a run id gets a fresh one. Rejects like
   * `WorkflowRuntime.submit`, plus TIMEOUT (no owner answered within `commandTimeoutMs`; the
   * submission may still apply) and CLOSED after `leave`. Every call is a command with an id
   * (`options.commandId`, else a fresh one) kept with its effect in the shard: a TIMEOUT names it
   * (`details.commandId`), and sending the same spec again with that id applies it at most once.
   * The same holds for `signal`, `cancel`, `submitJob` and `cancelJob`.
   */
  async submit(spec: RunSpec, options?: CommandOptions): Promise<SubmitOutcome> {
    validateSpec(spec, undefined); // typed errors here, before a command is sent
    const runId = spec.runId ?? this.nextRunId();
    const shard = this.shardOf(runId);
    const full: RunSpec = { ...spec, runId };
    const command: ClusterCommand = {
      type: 'submit',
      runId,
      ...(spec.input === undefined ? {} : { input: spec.input }),
      ...(spec.headers === undefined ? {} : { headers: { ...spec.headers } }),
      ...(spec.priority === undefined ? {} : { priority: spec.priority }),
      ...(spec.maxAttemptsPerStep === undefined ? {} : { maxAttemptsPerStep: spec.maxAttemptsPerStep }),
      ...(spec.runAt === undefined ? {} : { runAt: spec.runAt }),
      ...(spec.kvWrites === undefined ? {} : { kvWrites: [...spec.kvWrites].map(([k, v]) => [typeof k === 'string' ? utf8(k) : k, v] as [Uint8Array, Uint8Array]) }),
    };
    return this.route(shard, command, options, (rt, once) => rt.submit(full, once));
  }

  /** Sends a durable signal to the shard of `correlationKey` (see `shardOfCorrelationKey`). */
  async signal(correlationKey: string, payload: Uint8Array, options?: CommandOptions): Promise<SignalOutcome> {
    const shard = this.shardOfCorrelationKey(correlationKey);
    return this.route(shard, { type: 'signal', correlationKey, payload }, options, (rt, once) => rt.signal(correlationKey, payload, once));
  }

  /** Cancels an active run, from any member (as `WorkflowRuntime.cancel`). */
  async cancel(runId: string, options?: CommandOptions): Promise<boolean> {
    const shard = this.shardOf(runId);
    return this.route(shard, { type: 'cancel', runId }, options, (rt, once) => rt.cancel(runId, once));
  }

  private reader(shard: number, queueName = this.options.runtimeOptions.queueName ?? DEFAULT_QUEUE_NAME): Promise<WorkflowReader> {
    const id = `${shard}/${queueName}`;
    let reader = this.readers.get(id);
    if (!reader) {
      reader = WorkflowReader.open(this.store, this.layout.queuePath(shard), {
        pollIntervalMs: null,
        clock: this.options.clock,
        logger: this.options.logger,
        queueName,
        ...(this.options.queueOptions.payloadPath === undefined ? {} : { payloadPath: this.options.queueOptions.payloadPath }),
      });
      this.readers.set(id, reader);
      reader.catch(() => this.readers.delete(id));
    }
    return reader;
  }

  /** A run of `queueName` in `shard`, from the local runtime or a refreshed reader; null when the shard's engine was never written. */
  private async readRun(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName?: string): Promise<RunDetails | null> {
    if (local) return local.getRun(runId);
    let reader: WorkflowReader;
    try {
      reader = await this.reader(shard, queueName);
    } catch (e) {
      if (isTaqubaError(e, 'NOT_FOUND')) return null;
      throw e;
    }
    await reader.refresh();
    return reader.getRun(runId);
  }

  private get jobSource(): JobSource {
    return {
      store: this.store,
      clock: this.options.clock,
      pollMs: this.options.inboxPollMs,
      memoPrefix: (id) => this.layout.jobsMemoPrefix(shardOfText(id, this.options.shards)),
      status: (id) => {
        const shard = shardOfText(id, this.options.shards);
        return this.statusIn(shard, id, this.localJobsRuntime(shard), DEFAULT_JOBS_QUEUE_NAME);
      },
    };
  }

  /**
   * Submits a typed job (one of the `jobs` option) to its shard, from any member; like
   * `JobRunner.submit` (idempotent on the job's key). Await `handle.result()` on any member.
   * Rejects with INVALID_ARGUMENT (`unregistered_job`, `invalid_job_input`, `invalid_spec`),
   * INPUT_MISMATCH, TIMEOUT, CLOSED or store errors.
   */
  async submitJob<I, O, E>(job: Job<I, O, E>, input: I, options: JobSubmitOptions & CommandOptions = {}): Promise<ClusterJobHandle<O, E>> {
    const { commandId, ...jobOptions } = options;
    const prepared = await prepareJob(this.options.jobs, job, input, jobOptions, this.nextRunId);
    const source = this.jobSource;
    const done = await finishedJob<O, E>(source, job, prepared);
    if (done) return done;
    const shard = shardOfText(prepared.runId, this.options.shards);
    const spec = { runId: prepared.runId, input: prepared.input, ...prepared.spec };
    const command: ClusterCommand = { type: 'submitJob', ...spec };
    // The jobs runtime opens with the shard's; CLOSED sends the submission through the inbox.
    const outcome = await this.route(shard, command, commandId === undefined ? undefined : { commandId }, async (_rt, once) => {
      const jobs = this.localJobsRuntime(shard);
      if (!jobs) throw new ClosedError(`shard ${shard} has no jobs runtime here`);
      return jobs.submit(spec, once);
    });
    return new ClusterJobHandle<O, E>(source, job, outcome.runId, outcome.newlySubmitted);
  }

  /**
   * Cancels a pending or running typed job, from any member (as `JobRunner.cancel`): its
   * `ctx.signal` fires and the run ends cancelled, so `result()` rejects with JOB_FAILED
   * (`no_outcome`). Resolves false when the job is not active (finished, cancelled, unknown).
   * Rejects with INVALID_ARGUMENT (bad id, or a member without the jobs option), TIMEOUT, CLOSED
   * after `leave`, or store errors.
   */
  async cancelJob(id: string, options?: CommandOptions): Promise<boolean> {
    validateRunId(id);
    const shard = shardOfText(id, this.options.shards);
    return this.route(shard, { type: 'cancelJob', runId: id }, options, async (_rt, once) => {
      const jobs = this.localJobsRuntime(shard);
      if (!jobs) throw new ClosedError(`shard ${shard} has no jobs runtime here`);
      return jobs.cancel(id, once);
    });
  }

  /** A handle on a job submitted earlier (by any member), typed by `job`; no I/O. INVALID_ARGUMENT for an unknown job or a bad id. */
  jobHandle<I, O, E>(job: Job<I, O, E>, id: string): ClusterJobHandle<O, E> {
    if (typeof job?.name !== 'string' || this.options.jobs.get(job.name) !== job) throw new InvalidArgumentError(`job is not in this cluster's jobs option. job=${String(job?.name)}`, { reason: 'unregistered_job' });
    validateRunId(id);
    return new ClusterJobHandle<O, E>(this.jobSource, job, id, false);
  }

  /**
   * An active run's status from any member: the owner's runtime here, else a read-only reader of
   * the shard, refreshed first. Null for an unknown or terminated run (also a run submitted whose
   * shard's engine was never written yet).
   */
  readStatus(runId: string): Promise<RunStatus | null> {
    const shard = this.shardOf(runId);
    return this.statusIn(shard, runId, this.localRuntime(shard));
  }

  /** A run's status in `shard`: from `local` when this member runs the shard, else from its record through a reader. */
  private async statusIn(shard: number, runId: string, local: WorkflowRuntime | undefined, queueName?: string): Promise<RunStatus | null> {
    if (local) return local.readStatus(runId);
    const details = await this.readRun(shard, runId, undefined, queueName);
    if (details === null) return null;
    const state = details.state === 'running' ? 'running' : details.state === 'cancelling' ? 'cancelling' : 'pending';
    return { runId, state, currentStep: details.currentStep };
  }

  /** An active run in detail (as `WorkflowRuntime.getRun`), from any member. */
  async getRun(runId: string): Promise<RunDetails | null> {
    const shard = this.shardOf(runId);
    return this.readRun(shard, runId, this.localRuntime(shard));
  }

  /** @internal Tests: stop the member loop only, keeping the shards' workers running (a zombie). */
  halt(): void {
    this.stop.abort();
  }

  /**
   * Leaves the cluster cleanly: stops the member loop, hands every shard over (its in-flight
   * steps finish, its engine closes, a release record lets the next owner take it at once), and
   * removes the heartbeat. Safe to call twice.
   */
  leave(): Promise<void> {
    this.left ??= (async () => {
      this.stop.abort();
      await this.loop;
      await this.renewLoop;
      await this.inboxLoop;
      await Promise.all([...this.held.entries()].map(([shard, h]) => (h.releasing ? (h.released ?? Promise.resolve()) : this.release(shard, h)).catch((e) => this.options.logger.warn('cluster release failed', { shard, error: (e as Error)?.message }))));
      await Promise.all([...this.closing.values()]);
      if (this.options.takesShards) await this.store.delete(this.layout.memberKey(this.memberId));
      for (const r of this.readers.values()) await r.then((x) => x.close()).catch(() => undefined);
    })();
    return this.left;
  }

  /** Same as `leave`. */
  close(): Promise<void> {
    return this.leave();
  }
}
