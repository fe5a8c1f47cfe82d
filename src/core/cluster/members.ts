/**
 * Which members are live (RFC 0003, member loop step 2), from one listing of the heartbeat
 * objects. A heartbeat seen for the first time is judged by the beat time it holds (with the
 * clock-skew margin); after that by its version: one that changed since the last listing was
 * written after that listing started, so it is live for a membership timeout (`leaseMs +
 * maxClockSkewMs`) from then, by our own clock; one that did not change keeps its deadline. So
 * a steady cluster reads no heartbeat object, and only a first sighting depends on the other
 * member's clock.
 *
 * Dead members' heartbeats are collected here too: one unchanged for `HEARTBEAT_GC_FACTOR`
 * membership timeouts is deleted by whichever live member notices first (step 7).
 */
import type { ObjectStore } from '../objects/object-store.js';
import type { ClusterLayout } from './layout.js';
import { decodeMember } from './records.js';

/** A heartbeat unchanged for this many membership timeouts is deleted. */
export const HEARTBEAT_GC_FACTOR = 10;

export class MemberView {
  /** Heartbeat versions last listed, and until when (our clock) each member counts as live. */
  private seen = new Map<string, { version: string; liveUntil: number }>();
  /** When the previous listing started (our clock): a version changed since was written after it. */
  private listedAt: number | undefined;
  /** Heartbeats being collected (key), so two passes do not race on one. */
  private readonly collecting = new Set<string>();

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly self: string,
    private readonly leaseMs: number,
    private readonly maxClockSkewMs: number,
    /** Told about each collected heartbeat (member id) and each failed collection. */
    private readonly onCollect: (memberId: string, error?: unknown) => void = () => undefined,
  ) {}

  /** The membership timeout: how long a member is live after its heartbeat was seen to change. */
  private get timeoutMs(): number {
    return this.leaseMs + this.maxClockSkewMs;
  }

  /** The live member ids, sorted; `includeSelf` adds this member. Rejects with store errors or CORRUPT_DATA. */
  async live(now: number, includeSelf: boolean): Promise<string[]> {
    const live = new Set<string>();
    if (includeSelf) live.add(this.self);
    const prefix = this.layout.membersPrefix;
    const listed: { id: string; key: string; version: string }[] = [];
    for await (const info of this.store.list(prefix)) listed.push({ id: info.key.slice(prefix.length), key: info.key, version: info.version });
    // A changed heartbeat was written after the previous listing started. After a long gap (our
    // own process was paused or starved) it may be older than that, but a live member beats every
    // leaseMs / 3, so its newest beat is at most that old.
    const changedAfter = Math.max(this.listedAt ?? -Infinity, now - Math.round(this.leaseMs / 3));
    const seen = new Map<string, { version: string; liveUntil: number }>();
    const dead: { id: string; key: string; version: string }[] = [];
    await Promise.all(
      listed.map(async ({ id, key, version }) => {
        if (id === this.self) return;
        const before = this.seen.get(id);
        let liveUntil: number;
        if (before === undefined) {
          const stored = await this.store.get(key);
          if (!stored) return;
          const m = decodeMember(stored.data, key);
          liveUntil = m.beatAt + m.leaseMs + this.maxClockSkewMs;
        } else if (before.version !== version) {
          liveUntil = Math.max(before.liveUntil, changedAfter + this.timeoutMs);
        } else {
          liveUntil = before.liveUntil;
        }
        seen.set(id, { version, liveUntil });
        if (liveUntil > now) live.add(id);
        else if (now > liveUntil + (HEARTBEAT_GC_FACTOR - 1) * this.timeoutMs) dead.push({ id, key, version });
      }),
    );
    this.seen = seen;
    this.listedAt = now;
    for (const d of dead) void this.collect(d.id, d.key, d.version);
    return [...live].sort();
  }

  /**
   * When the next live member's deadline passes (our clock), so the member loop can look again
   * right then: a member that stopped beating leaves the assignment at its deadline, not at the
   * next regular pass. Infinity when no other member is live.
   */
  nextDeadline(now: number): number {
    let next = Infinity;
    for (const { liveUntil } of this.seen.values()) if (liveUntil > now && liveUntil < next) next = liveUntil;
    return next;
  }

  /**
   * Deletes a dead member's heartbeat if it is still the version we judged. The store has no
   * conditional delete, so a member coming back between our read and our delete (after being
   * gone for many timeouts) loses one beat: its next beat finds its object gone and creates it
   * again, and meanwhile the others count it as new (first sighting, by the time it holds).
   */
  private async collect(id: string, key: string, version: string): Promise<void> {
    if (this.collecting.has(key)) return;
    this.collecting.add(key);
    try {
      const current = await this.store.get(key);
      if (current === undefined || current.version !== version) return;
      await this.store.delete(key);
      this.seen.delete(id);
      this.onCollect(id);
    } catch (e) {
      this.onCollect(id, e);
    } finally {
      this.collecting.delete(key);
    }
  }
}
