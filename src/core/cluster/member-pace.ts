/**
 * How fast a member may go (RFC 0003 "Member pass", stepping back): what it measured of its own
 * keepalive (put round trips, timer lag), its failed engine opens, and the per-shard backoff
 * after drops. A member that falls behind takes shards slowly or not at all, starts renewals
 * earlier, and does not take a dropped shard straight back: taking more work while behind is
 * what turned a slow moment into shards taken and dropped in a loop (issue 25).
 */

/** How many shards a pass may take, and why it is held back (undefined when it is not). */
export interface TakeAllowance {
  readonly max: number;
  readonly reason?: string;
}

/** What the allowance needs to know of the member's held leases and heartbeat. */
export interface KeepaliveState {
  /** Held leases (not being handed over): shard, expiry and last renewal start (clock ms). */
  readonly leases: Iterable<{ readonly shard: number; readonly expiresAt: number; readonly renewedAt: number }>;
  /** When the last successful beat started (clock ms); undefined for a member that never beats. */
  readonly lastBeatAt: number | undefined;
}

export class MemberPace {
  /** Keepalive put round trips (renewals and beats) of the last lease: when each started, and how long it took (ms). */
  private readonly roundTrips: { at: number; ms: number }[] = [];
  /** How late the last keepalive tick fired (ms). */
  tickLagMs = 0;
  /** Passes in a row that found failed opens, and until when they hold back new takes. */
  private openFailuresInRow = 0;
  private openBlockedUntil = -Infinity;
  /** Per shard: when it may be taken again after a drop, and how many drops in a row. */
  private readonly backoff = new Map<number, { until: number; drops: number }>();

  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number,
  ) {}

  private get interval(): number {
    return Math.round(this.leaseMs / 3);
  }

  /** The drop point of a lease before its expiry (the owner gives it up this long before). */
  get safetyMs(): number {
    return this.leaseMs / 5;
  }

  noteRoundTrip(at: number, ms: number): void {
    this.roundTrips.push({ at, ms });
  }

  /** The slowest keepalive put of the last lease (ms); 0 without any. */
  slowestRoundTrip(): number {
    const since = this.now() - this.leaseMs;
    while (this.roundTrips.length > 0 && this.roundTrips[0]!.at < since) this.roundTrips.shift();
    let slowest = 0;
    for (const r of this.roundTrips) slowest = Math.max(slowest, r.ms);
    return slowest;
  }

  /**
   * When a lease renewed at `renewedAt` should be renewed next: an interval later, or sooner
   * when recent puts were slow, so that one as slow as the slowest recent one still lands before
   * the drop point with another such round trip to spare.
   */
  renewalDue(renewedAt: number): number {
    return renewedAt + Math.max(0, Math.min(this.interval, this.leaseMs - this.safetyMs - 2 * this.slowestRoundTrip()));
  }

  /** A pass found failed opens: no new takes for an interval, doubling with each such pass in a row (up to four leases). */
  noteOpenFailures(now: number): void {
    this.openFailuresInRow++;
    this.openBlockedUntil = now + Math.min(4 * this.leaseMs, this.interval * 2 ** (this.openFailuresInRow - 1));
  }

  noteOpened(): void {
    this.openFailuresInRow = 0;
  }

  /** A shard was dropped: returns how long (ms) it is not taken again, doubling with each drop in a row (one interval to two leases). */
  noteDrop(shard: number, now: number): number {
    const drops = (this.backoff.get(shard)?.drops ?? 0) + 1;
    const ms = Math.min(2 * this.leaseMs, this.interval * 2 ** (drops - 1));
    this.backoff.set(shard, { until: now + ms, drops });
    return ms;
  }

  /** The shard ran here for a lease: its next drop starts the backoff over. */
  forgive(shard: number): void {
    this.backoff.delete(shard);
  }

  /** Until when (clock ms) a dropped shard is not taken again; -Infinity when it may be. */
  backoffUntil(shard: number): number {
    return this.backoff.get(shard)?.until ?? -Infinity;
  }

  /**
   * None while a lease is within half an interval of its drop point, the last beat got through
   * over two intervals ago, timers fire over half an interval late or opens failed recently; one
   * while keepalive puts took over half an interval; any number otherwise.
   */
  allowance(now: number, state: KeepaliveState): TakeAllowance {
    const i = this.interval;
    if (this.tickLagMs > i / 2) return { max: 0, reason: `its timers run ${Math.round(this.tickLagMs)} ms late` };
    for (const l of state.leases) {
      if (l.expiresAt - this.safetyMs - now < i / 2) return { max: 0, reason: `the lease of shard ${l.shard} was last renewed ${Math.round(now - l.renewedAt)} ms ago` };
    }
    if (state.lastBeatAt !== undefined && now - state.lastBeatAt > 2 * i) return { max: 0, reason: `its last heartbeat got through ${Math.round(now - state.lastBeatAt)} ms ago` };
    if (now < this.openBlockedUntil) return { max: 0, reason: `shard engines failed to open in ${this.openFailuresInRow} pass(es) in a row` };
    const slowest = this.slowestRoundTrip();
    if (slowest > i / 2) return { max: 1, reason: `its lease and heartbeat puts took up to ${Math.round(slowest)} ms` };
    return { max: Infinity };
  }
}
