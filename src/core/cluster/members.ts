/**
 * Which members are live (RFC 0003, member loop step 2), from one listing of the heartbeat
 * objects. A heartbeat seen for the first time is judged by the beat time it holds (with the
 * clock-skew margin); after that by its version: one that changed since the last listing is live
 * for a lease from now by our own clock, one that did not keeps its deadline. So a steady cluster
 * reads no heartbeat object, and only a first sighting depends on the other member's clock.
 */
import type { ObjectStore } from '../objects/object-store.js';
import type { ClusterLayout } from './layout.js';
import { decodeMember } from './records.js';

export class MemberView {
  /** Heartbeat versions last listed, and until when (our clock) each member counts as live. */
  private seen = new Map<string, { version: string; liveUntil: number }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly self: string,
    private readonly leaseMs: number,
    private readonly maxClockSkewMs: number,
  ) {}

  /** The live member ids, sorted; `includeSelf` adds this member. Rejects with store errors or CORRUPT_DATA. */
  async live(now: number, includeSelf: boolean): Promise<string[]> {
    const live = new Set<string>();
    if (includeSelf) live.add(this.self);
    const prefix = this.layout.membersPrefix;
    const listed: { id: string; key: string; version: string }[] = [];
    for await (const info of this.store.list(prefix)) listed.push({ id: info.key.slice(prefix.length), key: info.key, version: info.version });
    const seen = new Map<string, { version: string; liveUntil: number }>();
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
          liveUntil = now + this.leaseMs + this.maxClockSkewMs;
        } else {
          liveUntil = before.liveUntil;
        }
        seen.set(id, { version, liveUntil });
        if (liveUntil > now) live.add(id);
      }),
    );
    this.seen = seen;
    return [...live].sort();
  }
}
