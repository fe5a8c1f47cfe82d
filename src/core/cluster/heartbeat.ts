/**
 * This member's own heartbeat object (RFC 0003 "Heartbeats and member ids"): written when the
 * member joins and every `leaseMs / 3` after (on the keepalive timer, never held up by a pass),
 * each time with `ifMatch` on the version this process wrote last. The object carries a random
 * incarnation token, so a put refused because the version moved tells this process that someone
 * else wrote under its member id:
 *
 * 1. Join: read the object. Absent: create it (create-only). Another incarnation's whose beat is
 *    fresh (`beatAt + leaseMs + maxClockSkewMs > now`): watch it for a beat interval and a quarter;
 *    if it changes, a live process runs with this id: refuse with LOCKED. Otherwise (stale, or
 *    quiet while watched: a crashed predecessor) take the object over with `ifMatch`.
 * 2. Beat: put with `ifMatch`. Refused: read the object. Ours (a retried put that had landed):
 *    adopt its version. Absent (collected while this process was paused): create it again.
 *    Another incarnation's: the later one yields. It is the one that started later (start time,
 *    then token, the same order for both processes), or this process when its own last beat is
 *    older than a membership timeout (a paused process the cluster already counts as gone).
 *    The one that yields stops with LOCKED; the other writes its beat over the object.
 *
 * `ifMatch` only serves to notice the other process. On the filesystem store it is not atomic
 * across processes, so a race may hide one conflict; the next beat shows it.
 */
import { decodeRecord } from '../codec.js';
import { isTaqubaError, StoreLockedError } from '../errors.js';
import type { ObjectStore, ObjectVersion } from '../objects/object-store.js';
import type { ClusterLayout } from './layout.js';
import { decodeMember, encodeMember, type MemberRecord } from './records.js';

/**
 * A heartbeat with this process's incarnation. The extra fields ride in the member record's body:
 * `decodeMember` ignores fields it does not know, so older members read these records unchanged,
 * and a record written by an older member has neither (`incarnation` undefined).
 */
export interface HeartbeatRecord extends MemberRecord {
  /** Random per process: tells two processes that use one member id apart. */
  readonly incarnation?: string;
  /** When the process started (its clock): the later of two processes with one id yields. */
  readonly startedAt?: number;
}

export function encodeHeartbeat(r: HeartbeatRecord): Uint8Array {
  return encodeMember(r);
}

/** CORRUPT_DATA (from `decodeMember`) when the object is not a member record. */
export function decodeHeartbeat(bytes: Uint8Array, key: string): HeartbeatRecord {
  const m = decodeMember(bytes, key);
  const body = (decodeRecord(bytes) as { body: Record<string, unknown> }).body;
  return {
    ...m,
    ...(typeof body.incarnation === 'string' ? { incarnation: body.incarnation } : {}),
    ...(typeof body.startedAt === 'number' ? { startedAt: body.startedAt } : {}),
  };
}

/** The LOCKED error of a member id in use by another live process. */
export function memberIdInUse(memberId: string, why: string, other: HeartbeatRecord): StoreLockedError {
  return new StoreLockedError(`cluster member id is in use by another live process; give every member its own memberId (${why}). member=${memberId}`, {
    reason: 'member_id_in_use',
    memberId,
    otherIncarnation: other.incarnation ?? null,
    otherStartedAt: other.startedAt ?? null,
  });
}

function randomToken(): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export interface HeartbeatOptions {
  readonly memberId: string;
  readonly leaseMs: number;
  readonly maxClockSkewMs: number;
  readonly clock: { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<void> };
  /** Called when this process keeps the id against a later one (it will stop by itself). */
  readonly onOtherYields: (other: HeartbeatRecord) => void;
}

export class Heartbeat {
  readonly incarnation = randomToken();
  readonly startedAt: number;
  /** The version of our last beat as stored; the next beat puts `ifMatch` on it. */
  private version: ObjectVersion | undefined;
  /** When our last successful beat started (clock ms). */
  private beatOkAt = -Infinity;
  /**
   * Until when (our clock) lease records under our id written by another process are not ours
   * to take at once: set when we joined over another incarnation's fresh heartbeat (a crashed
   * predecessor, or a live process we could not see beat). Their leases must expire first.
   */
  predecessorUntil = -Infinity;

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: ClusterLayout,
    private readonly options: HeartbeatOptions,
  ) {
    this.startedAt = options.clock.now();
  }

  private get key(): string {
    return this.layout.memberKey(this.options.memberId);
  }

  private record(now: number): Uint8Array {
    const o = this.options;
    return encodeHeartbeat({ memberId: o.memberId, beatAt: now, leaseMs: o.leaseMs, incarnation: this.incarnation, startedAt: this.startedAt });
  }

  /**
   * Join step 1. Resolves once our heartbeat is stored. Rejects with LOCKED (another live process
   * beats under our id), CORRUPT_DATA, or store errors. `signal` aborts the watch.
   */
  async join(signal: AbortSignal): Promise<void> {
    const o = this.options;
    for (let attempt = 0; ; attempt++) {
      const now = o.clock.now();
      const existing = await this.store.get(this.key);
      if (existing === undefined) {
        if (await this.put(now, { ifNoneMatch: '*' })) return;
      } else {
        const other = decodeHeartbeat(existing.data, this.key);
        if (other.incarnation !== this.incarnation && other.beatAt + other.leaseMs + o.maxClockSkewMs > now) {
          // Fresh: a live twin beats within its interval (the keepalive timer keeps it); a crashed
          // predecessor does not. Watch a little past one interval.
          const watchMs = Math.round((other.leaseMs / 3) * 1.25);
          const changed = await this.watch(existing.version, watchMs, signal);
          if (changed) throw memberIdInUse(o.memberId, 'its heartbeat changed while this process was joining', changed);
          this.predecessorUntil = o.clock.now() + o.leaseMs + o.maxClockSkewMs;
        }
        // Our beat's time is when we write it (the watch took a while).
        if (await this.put(o.clock.now(), { ifMatch: existing.version })) return;
      }
      // Someone wrote between our read and our put: read again, and after a few rounds call it a twin.
      if (attempt >= 2) {
        const current = await this.store.get(this.key);
        throw memberIdInUse(o.memberId, 'its heartbeat kept changing while this process was joining', current ? decodeHeartbeat(current.data, this.key) : { memberId: o.memberId, beatAt: 0, leaseMs: 0 });
      }
    }
  }

  /** Polls the object until its version differs from `version` (resolves with it) or `ms` passed (undefined). */
  private async watch(version: ObjectVersion, ms: number, signal: AbortSignal): Promise<HeartbeatRecord | undefined> {
    const clock = this.options.clock;
    const until = clock.now() + ms;
    const step = Math.max(1, Math.round(ms / 6));
    while (clock.now() < until) {
      await clock.sleep(Math.min(step, until - clock.now()), signal);
      const current = await this.store.get(this.key);
      if (current !== undefined && current.version !== version) return decodeHeartbeat(current.data, this.key);
    }
    return undefined;
  }

  /** A conditional put of our beat; false when the precondition failed. */
  private async put(now: number, options: { ifNoneMatch: '*' } | { ifMatch: ObjectVersion }): Promise<boolean> {
    try {
      this.version = (await this.store.put(this.key, this.record(now), options)).version;
      this.beatOkAt = now;
      return true;
    } catch (e) {
      if (isTaqubaError(e, 'PRECONDITION_FAILED')) return false;
      throw e;
    }
  }

  /**
   * Step 2: one beat at `now`. Rejects with LOCKED when this process must yield its member id,
   * CORRUPT_DATA, or store errors (the next beat tries again).
   */
  async beat(now: number): Promise<void> {
    const o = this.options;
    const goodStanding = now - this.beatOkAt < o.leaseMs + o.maxClockSkewMs;
    if (this.version !== undefined && (await this.put(now, { ifMatch: this.version }))) return;
    const current = await this.store.get(this.key);
    if (current === undefined) {
      // Collected while we were paused past many membership timeouts (or never written): create it again.
      await this.put(now, { ifNoneMatch: '*' });
      return;
    }
    const other = decodeHeartbeat(current.data, this.key);
    if (other.incarnation === this.incarnation) {
      this.version = current.version; // our retried put had landed
      await this.put(now, { ifMatch: current.version });
      return;
    }
    const otherStarted = other.startedAt ?? -Infinity;
    const otherIsOlder = otherStarted < this.startedAt || (otherStarted === this.startedAt && (other.incarnation ?? '') < this.incarnation);
    if (otherIsOlder || !goodStanding) {
      throw memberIdInUse(o.memberId, otherIsOlder ? 'another process started earlier with it' : 'this process was paused past its membership timeout and another took the id over', other);
    }
    o.onOtherYields(other);
    await this.put(now, { ifMatch: current.version });
  }

  /** Removes our heartbeat on leave. */
  async remove(): Promise<void> {
    await this.store.delete(this.key);
  }

  /** When our last successful beat started (clock ms). */
  get lastBeatAt(): number {
    return this.beatOkAt;
  }
}
