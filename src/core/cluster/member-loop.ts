/**
 * The member loop (RFC 0003 "Member loop"): which members are live, which shards this member
 * should own, and the leases and engines (`ShardHost`s) of the shards it owns.
 *
 * Two timers. The keepalive (every `leaseMs / 12`) does only what keeps this member in the
 * cluster: it drops leases about to expire, beats, and renews each held lease when it is due
 * (`leaseMs / 3` after its last renewal started), each renewal a create-only put of its own, so
 * one slow put holds up only its own shard. The pass (every `leaseMs / 3`, sooner when a lease or
 * a member's deadline it waits for passes) lists members and leases, computes the desired owners,
 * hands over shards that should move, and takes the free ones that should be ours.
 *
 * A member that falls behind steps back (`MemberPace`) instead of taking and dropping shards in
 * a loop: it takes shards slowly or not at all, and a shard it dropped (lease lost or expired,
 * open failed or overtaken) is not taken again before a backoff that doubles with each drop.
 */
import { isTaqubaError, type TaqubaError } from '../errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import type { WorkflowRuntime } from '../workflow/index.js';
import { assignShards } from './assignment.js';
import type { ResolvedClusterOptions } from './cluster-options.js';
import type { Heartbeat, HeartbeatRecord } from './heartbeat.js';
import type { ClusterLayout } from './layout.js';
import { createLease, listLeaseTable, newestLeaseAfter, readNewestLease } from './leases.js';
import { MemberPace } from './member-pace.js';
import { MemberView } from './members.js';
import type { LeaseRecord } from './records.js';
import { OpenGate, ShardHost, withoutWriterLock } from './shard-host.js';

interface Held {
  seq: number;
  expiresAt: number;
  host: ShardHost;
  releasing: boolean;
  /** Set with `releasing`: settles when the release record is written (or failed). */
  released?: Promise<void>;
  /** The renewal in flight (creating record `seq + 1`), if any. */
  renewing?: Promise<void>;
  /**
   * A renewal record whose create failed with a store error. It may have landed, so the next try
   * sends the same bytes (`createObject` then recognises it as ours) rather than a new record
   * that would find seq + 1 taken and drop the shard.
   */
  pending?: LeaseRecord;
  /** When the newest renewal of this hold started (clock ms): the lease's age is measured from it. */
  renewedAt: number;
}

/** How leases were renewed and shards moved so far (tests and benchmarks). */
export interface RenewalStats {
  /** Successful renewals. */
  readonly renewals: number;
  /** Longest time between the start of one renewal of a shard and the end of the next (ms). */
  readonly maxGapMs: number;
  /** Longest renewal round trip (ms). */
  readonly maxRoundTripMs: number;
  /** Longest delay of a keepalive tick past its due time (a busy event loop, ms). */
  readonly maxTickLagMs: number;
  /** How long after its due time renewals were confirmed (ms): median and 99th percentile of the last 1024. */
  readonly lagP50Ms: number;
  readonly lagP99Ms: number;
  /** Shards taken, dropped (lost, expired, failed), and handed over. */
  readonly takes: number;
  readonly drops: number;
  readonly releases: number;
  /** Engine opens that failed (not counting hosts closed by the member while they opened). */
  readonly openFailures: number;
  /** Shards opened, and the longest and the last time from taking a shard to its worker running (ms). */
  readonly opens: number;
  readonly maxOpenMs: number;
  readonly lastOpenMs: number;
  /** Passes in which the member took no shard it should own because it was behind. */
  readonly steppedBack: number;
}

/** Lease records kept per shard besides the newest (older ones are deleted by the owner). */
const KEPT_LEASE_RECORDS = 2;
/** Renewal lags kept for the percentiles. */
const LAG_SAMPLES = 1024;

function nonce(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export class MemberLoop {
  private readonly shardStore: ObjectStore;
  readonly held = new Map<number, Held>();
  /** Hosts being closed, awaited before the shard is opened again here. */
  private readonly closing = new Map<number, Promise<void>>();
  private readonly leaseCache = new Map<string, LeaseRecord>();
  /** Lease records this process created: a record under our id that is not here is from another process. */
  private readonly ownRecords = new WeakSet<LeaseRecord>();
  private readonly memberView: MemberView;
  private readonly gate = new OpenGate();
  private readonly pace: MemberPace;
  private liveMembers: readonly string[] = [];
  private passChain: Promise<void> = Promise.resolve();
  private passes: Promise<void> | undefined;
  private keepalives: Promise<void> | undefined;
  private beating: Promise<void> | undefined;
  private beatDueAt = -Infinity;
  /** When the next pass should run (clock ms). */
  private nextPassAt = -Infinity;
  /** Why the member is stepping back (logged once per episode), undefined when it is not. */
  private behind: string | undefined;
  private readonly lags: number[] = [];
  private stats = { renewals: 0, maxGapMs: 0, maxRoundTripMs: 0, maxTickLagMs: 0, takes: 0, drops: 0, releases: 0, openFailures: 0, opens: 0, maxOpenMs: 0, lastOpenMs: 0, steppedBack: 0 };

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly options: ResolvedClusterOptions,
    /** This member's heartbeat; undefined for a client member (takes no shards, never beats). */
    private readonly heartbeat: Heartbeat | undefined,
    private readonly signal: AbortSignal,
    /** This member must stop (LOCKED: another process has its member id). */
    private readonly onFatal: (e: TaqubaError) => void,
    /** Called after each timed pass (the cluster's housekeeping: orphaned replies). */
    private readonly onPass: () => void = () => undefined,
  ) {
    this.shardStore = withoutWriterLock(store);
    const o = options;
    this.pace = new MemberPace(o.leaseMs, () => o.clock.now());
    this.memberView = new MemberView(store, layout, o.memberId, o.leaseMs, o.maxClockSkewMs, (id, error) => {
      if (error === undefined) o.logger.info('cluster heartbeat of a dead member collected', { member: o.memberId, dead: id });
      else o.logger.debug('cluster heartbeat collection failed; retrying later', { member: o.memberId, dead: id, error: (error as Error)?.message });
    });
  }

  private get interval(): number {
    return Math.round(this.options.leaseMs / 3);
  }

  private get takesShards(): boolean {
    return this.heartbeat !== undefined;
  }

  /** Runs the first pass, then starts the timers. */
  async start(): Promise<void> {
    this.beatDueAt = this.options.clock.now() + this.interval;
    // The keepalive first: the first pass may take shards, and on a slow store it can take a while.
    this.keepalives = this.takesShards ? this.runKeepalive() : Promise.resolve();
    await this.pass();
    this.passes = this.runPasses();
  }

  /** Settles when both timers have stopped (after the signal aborted). */
  async stopped(): Promise<void> {
    await this.passes;
    await this.keepalives;
    await this.beating;
  }

  /** Shards this member owns and runs now, ascending. */
  ownedShards(): number[] {
    return [...this.held.entries()].filter(([, h]) => !h.releasing && h.host.openRuntime !== undefined).map(([s]) => s).sort((a, b) => a - b);
  }

  /** The live members as of the last pass, sorted. */
  members(): readonly string[] {
    return this.liveMembers;
  }

  renewalStats(): RenewalStats {
    const sorted = [...this.lags].sort((a, b) => a - b);
    return { ...this.stats, lagP50Ms: percentile(sorted, 50), lagP99Ms: percentile(sorted, 99) };
  }

  /** The local runtime of `shard` when this member owns it and it is open. */
  localRuntime(shard: number): WorkflowRuntime | undefined {
    const h = this.held.get(shard);
    return h && !h.releasing ? h.host.openRuntime : undefined;
  }

  /** The local typed-jobs runtime of `shard` when this member owns it and it is open. */
  localJobsRuntime(shard: number): WorkflowRuntime | undefined {
    const h = this.held.get(shard);
    return h && !h.releasing ? h.host.openJobsRuntime : undefined;
  }

  /** The queue of a held shard, also after it was fenced (tests). */
  queueOf(shard: number): Queue | undefined {
    return this.held.get(shard)?.host.openQueue;
  }

  /**
   * The keepalive timer: drops expiring leases, beats, renews due leases. It wakes when the next
   * of those is due (at least every `leaseMs / 12`) and never awaits a store call, so one slow
   * put delays nothing else.
   */
  private async runKeepalive(): Promise<void> {
    const clock = this.options.clock;
    const tick = Math.max(1, Math.round(this.interval / 4));
    let due = clock.now() + tick;
    while (!this.signal.aborted) {
      try {
        await clock.sleep(Math.max(0, due - clock.now()), this.signal);
      } catch {
        return;
      }
      const now = clock.now();
      this.pace.tickLagMs = now - due;
      this.stats.maxTickLagMs = Math.max(this.stats.maxTickLagMs, now - due);
      this.keepalive(now);
      due = now + tick;
      if (this.beating === undefined) due = Math.min(due, this.beatDueAt);
      for (const h of this.held.values()) if (!h.releasing && !h.renewing) due = Math.min(due, this.renewalDue(h));
      due = Math.max(due, now + 1);
    }
  }

  private keepalive(now: number): void {
    const o = this.options;
    this.dropExpired(now);
    const heartbeat = this.heartbeat;
    if (heartbeat && this.beating === undefined && now >= this.beatDueAt) {
      this.beatDueAt = now + this.interval;
      this.beating = heartbeat
        .beat(now)
        .then(() => this.pace.noteRoundTrip(now, o.clock.now() - now))
        .catch((e) => {
          if (isTaqubaError(e, 'LOCKED')) this.onFatal(e);
          else if (!this.signal.aborted) o.logger.warn('cluster heartbeat failed; retrying', { member: o.memberId, error: (e as Error)?.message });
        })
        .finally(() => (this.beating = undefined));
    }
    for (const [shard, h] of this.held) this.renewIfDue(shard, h, now);
  }

  /** When a held lease's next renewal should start (sooner while the store is slow, see `MemberPace.renewalDue`). */
  private renewalDue(h: Held): number {
    return this.pace.renewalDue(h.renewedAt);
  }

  private renewIfDue(shard: number, h: Held, now: number): void {
    if (this.signal.aborted || h.releasing || h.renewing || this.held.get(shard) !== h || now < this.renewalDue(h)) return;
    const o = this.options;
    const renewing = this.renew(shard, h).then(
      () => {
        if (h.renewing !== renewing) return;
        h.renewing = undefined;
        // A renewal that came back late may be due again already: start the next one now rather
        // than at the next tick. (After a failure the tick retries, so a failing store is not hammered.)
        this.renewIfDue(shard, h, o.clock.now());
      },
      (e) => {
        if (h.renewing === renewing) h.renewing = undefined;
        if (!this.signal.aborted) o.logger.warn('cluster lease renewal failed; retrying', { member: o.memberId, shard, error: (e as Error)?.message });
      },
    );
    h.renewing = renewing;
  }

  /** Drops every held shard whose lease is about to expire by this member's clock (a paused or starved member). */
  private dropExpired(now: number): void {
    for (const [shard, h] of this.held) {
      if (!h.releasing && now >= h.expiresAt - this.pace.safetyMs) this.drop(shard, `its lease expires before a renewal got through (${Math.round(now - h.renewedAt)} ms since the last renewal started; the member or the store is too slow)`);
    }
  }

  /** The pass timer: waits until `nextPassAt` (at most one interval), then runs a pass. */
  private async runPasses(): Promise<void> {
    const o = this.options;
    while (!this.signal.aborted) {
      const wait = Math.min(this.interval, Math.max(0, this.nextPassAt - o.clock.now()));
      try {
        await o.clock.sleep(wait, this.signal);
      } catch {
        return;
      }
      try {
        await this.pass();
        this.onPass();
      } catch (e) {
        if (this.signal.aborted) return;
        o.logger.warn('cluster member pass failed; retrying', { member: o.memberId, error: (e as Error)?.message });
        this.nextPassAt = o.clock.now() + this.interval;
      }
    }
  }

  /** One pass now, never two at once (both would create the same lease seq). */
  pass(): Promise<void> {
    const next = this.passChain.then(() => this.passOnce());
    this.passChain = next.catch(() => undefined);
    return next;
  }

  /** One pass of the member loop (RFC 0003 "Member loop"). */
  private async passOnce(): Promise<void> {
    const o = this.options;
    const clock = o.clock;
    const now = clock.now();
    this.dropExpired(now);
    let failedOpens = 0;
    for (const [shard, h] of this.held) {
      if (h.releasing || h.host.failure === undefined || h.host.closedByOwner) continue;
      const opened = h.host.openedAt !== undefined;
      if (!opened) failedOpens++;
      this.drop(shard, `${opened ? 'its engine stopped' : 'its engine failed to open'}: ${(h.host.failure as Error)?.message ?? String(h.host.failure)}`);
    }
    if (failedOpens > 0) {
      this.stats.openFailures += failedOpens;
      this.pace.noteOpenFailures(now);
    }
    const takes = this.takesShards && !this.signal.aborted;
    const [live, table] = await Promise.all([this.memberView.live(now, takes), takes ? listLeaseTable(this.store, this.layout, o.shards) : Promise.resolve([])]);
    if (live.join() !== this.liveMembers.join()) o.logger.info('cluster membership changed', { member: o.memberId, members: live.join(',') });
    this.liveMembers = live;
    let nextAt = now + this.interval;
    if (takes) {
      const desired = assignShards(o.shards, live);
      const leases = [...this.held].filter(([, h]) => !h.releasing).map(([shard, h]) => ({ shard, expiresAt: h.expiresAt, renewedAt: h.renewedAt }));
      const allowance = this.pace.allowance(now, { leases, lastBeatAt: this.heartbeat?.lastBeatAt });
      /** Shards that should be ours and may be free: their newest lease record decides. */
      const candidates: { shard: number; keys: readonly string[] }[] = [];
      const work: Promise<void>[] = [];
      for (let shard = 0; shard < o.shards; shard++) {
        const { newestSeq, keys } = table[shard]!;
        const h = this.held.get(shard);
        if (h) {
          if (h.releasing) continue;
          // A renewal in flight (or waiting to be retried) may have created h.seq + 1 before this
          // listing: that one is ours. Past it is another member's.
          if (newestSeq > h.seq + (h.renewing || h.pending ? 1 : 0)) {
            this.drop(shard, `lease record ${newestSeq} was created by another member`);
            continue;
          }
          // Not awaited: the hand-over waits for in-flight steps, and must not hold up the loop.
          if (desired[shard] !== o.memberId) void this.release(shard, h).catch((e) => o.logger.warn('cluster release failed', { member: o.memberId, shard, error: (e as Error)?.message }));
          else {
            if (h.host.openedAt !== undefined && now - h.host.openedAt >= o.leaseMs) this.pace.forgive(shard); // held and running for a lease
            work.push(this.collectLeases(keys));
          }
          continue;
        }
        if (desired[shard] !== o.memberId) continue;
        const backoffUntil = this.pace.backoffUntil(shard);
        if (backoffUntil > now) {
          nextAt = Math.min(nextAt, backoffUntil);
          continue;
        }
        candidates.push({ shard, keys });
      }
      let heldBack = false;
      if (candidates.length > 0 && allowance.max === 0) heldBack = true;
      else if (candidates.length > 0) {
        const newest = await Promise.all(candidates.map((c) => readNewestLease(this.store, c.keys, this.leaseCache)));
        let takesLeft = allowance.max;
        candidates.forEach(({ shard }, i) => {
          const freeAt = this.freeAt(newest[i]);
          if (clock.now() <= freeAt) nextAt = Math.min(nextAt, freeAt + 1);
          else if (takesLeft-- > 0) work.push(this.take(shard, newest[i]?.seq ?? 0));
          else heldBack = true;
        });
      }
      this.noteBehind(allowance.reason, heldBack);
      if (heldBack) nextAt = Math.min(nextAt, now + this.interval / 2);
      await Promise.all(work);
      this.pruneLeaseCache(table.map((t) => t.keys[t.keys.length - 1]));
    }
    // Look again as soon as a member we count as live may have died: its shards move then.
    nextAt = Math.min(nextAt, this.memberView.nextDeadline(now) + 1);
    this.nextPassAt = Math.max(nextAt, now + this.interval / 10);
  }

  /**
   * When (our clock, exclusive) a shard whose newest lease record is `newest` is free for us:
   * never leased or released: now; ours from this process: now (the drop backoff applies);
   * another member's hold, or one under our id from another process while that may still be
   * live (RFC 0003 "Heartbeats and member ids"): once it expired with the skew margin.
   */
  private freeAt(newest: LeaseRecord | undefined): number {
    if (newest === undefined || newest.kind === 'release') return -Infinity;
    if (newest.owner === this.options.memberId && (this.ownRecords.has(newest) || this.options.clock.now() >= (this.heartbeat?.predecessorUntil ?? -Infinity))) return -Infinity;
    return newest.expiresAt + this.options.maxClockSkewMs;
  }

  private noteBehind(reason: string | undefined, heldBack: boolean): void {
    const o = this.options;
    if (heldBack) this.stats.steppedBack++;
    if (reason !== undefined && this.behind === undefined && heldBack) {
      o.logger.warn('cluster member is behind; it takes shards slowly or not at all until it catches up', { member: o.memberId, reason });
      this.behind = reason;
    } else if (reason === undefined && this.behind !== undefined) {
      o.logger.info('cluster member caught up; taking shards again', { member: o.memberId });
      this.behind = undefined;
    }
  }

  /** Records never change once created; keep the cache to each shard's newest listed key and later. */
  private pruneLeaseCache(newestKeys: readonly (string | undefined)[]): void {
    const newestByPrefix = new Map<string, string>();
    for (const key of newestKeys) if (key !== undefined) newestByPrefix.set(key.slice(0, key.lastIndexOf('/') + 1), key);
    for (const key of this.leaseCache.keys()) {
      const newest = newestByPrefix.get(key.slice(0, key.lastIndexOf('/') + 1));
      if (newest !== undefined && key < newest) this.leaseCache.delete(key);
    }
  }

  private leaseRecord(seq: number, kind: 'hold' | 'release'): LeaseRecord {
    const o = this.options;
    return { seq, kind, owner: o.memberId, expiresAt: kind === 'hold' ? o.clock.now() + o.leaseMs : 0, nonce: nonce() };
  }

  private remember(shard: number, record: LeaseRecord): void {
    this.leaseCache.set(this.layout.leaseKey(shard, record.seq), record);
    this.ownRecords.add(record);
  }

  /**
   * Takes a free shard (RFC 0003 member loop step 5): creates lease record `newestSeq + 1`, then
   * lists past it. The hold counts (and is renewed) from the create, so a slow listing does not
   * eat into the lease; the engine opens only once the listing showed nothing later.
   */
  private async take(shard: number, newestSeq: number): Promise<void> {
    const o = this.options;
    const record = this.leaseRecord(newestSeq + 1, 'hold');
    if (!(await createLease(this.store, this.layout, shard, record, false))) return; // another member won it
    this.remember(shard, record);
    let settle!: (ok: boolean) => void;
    const checked = new Promise<boolean>((resolve) => (settle = resolve));
    // Our own earlier host of this shard (dropped) may still be closing: the new one opens after
    // it (its open would fence it anyway, but waiting keeps its last commits from failing
    // needlessly), in the background, so the loop is never held up.
    const previous = this.closing.get(shard) ?? Promise.resolve();
    const host = new ShardHost(shard, this.shardStore, this.layout, o, Promise.all([previous.catch(() => undefined), checked]).then(() => undefined), this.gate);
    const h: Held = { seq: record.seq, expiresAt: record.expiresAt, host, releasing: false, renewedAt: record.expiresAt - o.leaseMs };
    this.held.set(shard, h);
    let problem: string | undefined;
    try {
      const later = await newestLeaseAfter(this.store, this.layout, shard, record.seq);
      // Renewals may have started meanwhile: records up to ours in flight are ours. Past them: our
      // seq had been retired and deleted and someone moved on (we were paused for a long time).
      if (later !== undefined && later > h.seq + (h.renewing || h.pending ? 1 : 0)) problem = `lease record ${later} is past ours (${record.seq})`;
    } catch (e) {
      problem = `the listing after taking it failed: ${(e as Error)?.message}`;
    }
    settle(problem === undefined);
    if (problem !== undefined) {
      if (this.held.get(shard) === h) this.drop(shard, problem);
      return;
    }
    this.stats.takes++;
    o.logger.info('cluster shard taken', { member: o.memberId, shard, seq: record.seq });
    // Not awaited: the engine opens in the background (replay can take a while), and the loop
    // must keep its pace meanwhile. A failed open shows as `host.failure` at the next pass.
    const takenAt = o.clock.now();
    host.ready.then(
      () => {
        this.pace.noteOpened();
        const s = this.stats;
        s.opens++;
        s.lastOpenMs = o.clock.now() - takenAt;
        s.maxOpenMs = Math.max(s.maxOpenMs, s.lastOpenMs);
      },
      (e) => {
        if (host.closedByOwner) o.logger.debug('cluster shard closed while it opened', { member: o.memberId, shard });
        else o.logger.warn('cluster shard failed to open', { member: o.memberId, shard, error: (e as Error)?.message });
      },
    );
  }

  private async renew(shard: number, h: Held): Promise<void> {
    const o = this.options;
    const due = this.renewalDue(h);
    const previous = h.renewedAt;
    const record = h.pending ?? this.leaseRecord(h.seq + 1, 'hold');
    h.pending = record;
    const startedAt = record.expiresAt - o.leaseMs;
    // No listing after a renewal: a record past ours shows in the next pass's lease table, and
    // the engine's fencing covers the moment in between. A store error leaves `pending` set.
    const created = await createLease(this.store, this.layout, shard, record, false);
    h.pending = undefined;
    if (!created) {
      if (this.held.get(shard) === h) this.drop(shard, `its lease renewal (record ${record.seq}) lost to another member`);
      return;
    }
    const now = o.clock.now();
    const s = this.stats;
    s.renewals++;
    s.maxGapMs = Math.max(s.maxGapMs, now - previous);
    s.maxRoundTripMs = Math.max(s.maxRoundTripMs, now - startedAt);
    this.pace.noteRoundTrip(startedAt, now - startedAt);
    this.lags.push(Math.max(0, now - due));
    if (this.lags.length > LAG_SAMPLES) this.lags.shift();
    h.seq = record.seq;
    h.expiresAt = record.expiresAt;
    h.renewedAt = startedAt;
    this.remember(shard, record);
  }

  /** Deletes a held shard's old lease records (keys from this pass's listing, all older than our newest). */
  private async collectLeases(keys: readonly string[]): Promise<void> {
    const old = keys.slice(0, Math.max(0, keys.length - KEPT_LEASE_RECORDS));
    for (const key of old) await this.store.delete(key).catch(() => undefined);
  }

  /** Hands a shard over: stop its work, then a release record so the next owner need not wait for expiry. */
  release(shard: number, h: Held): Promise<void> {
    h.releasing = true;
    this.stats.releases++;
    h.released = this.handOver(shard, h);
    return h.released;
  }

  private async handOver(shard: number, h: Held): Promise<void> {
    await h.host.close();
    // A renewal in flight takes seq + 1; the release record comes after it.
    await h.renewing;
    try {
      await createLease(this.store, this.layout, shard, this.leaseRecord(h.seq + 1, 'release'));
      this.options.logger.info('cluster shard released', { member: this.options.memberId, shard });
    } finally {
      if (this.held.get(shard) === h) this.held.delete(shard);
    }
  }

  /**
   * Stops using a shard at once, writing nothing (the lease is lost or about to be), and holds
   * off taking it again: the backoff doubles with each drop in a row (from one interval to two
   * leases) and is forgiven once the shard ran here for a lease.
   */
  private drop(shard: number, why: string): void {
    const h = this.held.get(shard);
    if (!h) return;
    const o = this.options;
    this.held.delete(shard);
    this.stats.drops++;
    const now = o.clock.now();
    const backoffMs = this.pace.noteDrop(shard, now);
    o.logger.warn('cluster shard dropped', { member: o.memberId, shard, reason: why, retakeAfterMs: backoffMs });
    const closed = h.host.close();
    this.closing.set(shard, closed);
    void closed.finally(() => {
      if (this.closing.get(shard) === closed) this.closing.delete(shard);
    });
  }

  /**
   * After the timers stopped: hands every held shard over (in-flight steps finish, engines close,
   * release records let the next owners take over at once), then removes the heartbeat unless
   * `keepHeartbeat` (another process now beats under our id).
   */
  async leave(keepHeartbeat: boolean): Promise<void> {
    const o = this.options;
    await this.stopped();
    await Promise.all(
      [...this.held.entries()].map(([shard, h]) =>
        (h.releasing ? (h.released ?? Promise.resolve()) : this.release(shard, h)).catch((e) => o.logger.warn('cluster release failed', { member: o.memberId, shard, error: (e as Error)?.message })),
      ),
    );
    await Promise.all([...this.closing.values()]);
    if (this.heartbeat && !keepHeartbeat) await this.heartbeat.remove();
  }

  /** Logs that another process with our member id will yield to us (heartbeat conflict). */
  static otherYields(options: ResolvedClusterOptions, other: HeartbeatRecord): void {
    options.logger.error('cluster member id is also used by another process, which started later; it will stop', {
      member: options.memberId,
      otherIncarnation: other.incarnation,
      otherStartedAt: other.startedAt,
    });
  }
}

