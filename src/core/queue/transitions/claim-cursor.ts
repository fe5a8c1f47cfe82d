/**
 * Per-queue claim cursor: where the next claim scan of a queue's Pending range may start, and
 * whether the queue is known to be empty. Claiming deletes Pending keys, and each delete is a
 * tombstone until compaction; without a bound every claim would walk all of them.
 *
 * Invariant: when a bound is known, every live Pending key of the queue sorts at or after it.
 * When unknown (cold start, crash), claims scan from the front.
 *
 * Protocol (claim side, per queue, serialised by the claim lock):
 * 1. `begin` BEFORE the claim transaction takes its snapshot: any insert the snapshot misses then
 *    bumps the epoch after this point and voids an emptiness verdict taken from it.
 * 2. Scan from the bound; nothing ⇒ `markEmpty(observed)`.
 * 3. After the claim commits, `advance(lastClaimedKey, observed)`; a short batch also marks empty.
 *
 * Insert side: every writer of a Pending key calls `noteInserts` AFTER its commit. Noting before
 * would let a claim scan without the key and record emptiness at the already-bumped epoch,
 * stranding the job until the next insert.
 */
import { compareBytes } from '../../bytes.js';

export interface CursorBound {
  readonly key: Uint8Array;
  readonly inclusive: boolean;
}

/** What a claim saw at `begin`. */
export interface CursorObservation {
  readonly bound: CursorBound | undefined;
  readonly boundVersion: number;
  readonly epoch: number;
  readonly knownEmpty: boolean;
}

/** The persisted form of one queue's cursor (written at clean close). */
export interface CursorSnapshot {
  readonly bound: CursorBound | undefined;
  readonly empty: boolean;
}

interface CursorState {
  bound: CursorBound | undefined;
  /** Bumped whenever an insert moves the bound; `advance` drops its update if it changed. */
  boundVersion: number;
  /** Count of committed Pending inserts. */
  epoch: number;
  /** Epoch at which a complete scan found nothing. */
  emptyAsOf: number | undefined;
  /** Smallest key inserted at or after the bound that no advance has reflected yet. */
  minInsertAhead: Uint8Array | undefined;
}

export class ClaimCursor {
  private readonly states = new Map<string, CursorState>();

  private state(queue: string): CursorState {
    let s = this.states.get(queue);
    if (!s) {
      s = { bound: undefined, boundVersion: 0, epoch: 0, emptyAsOf: undefined, minInsertAhead: undefined };
      this.states.set(queue, s);
    }
    return s;
  }

  /** Step 1 of a claim. */
  begin(queue: string): CursorObservation {
    const s = this.state(queue);
    return { bound: s.bound, boundVersion: s.boundVersion, epoch: s.epoch, knownEmpty: s.emptyAsOf === s.epoch };
  }

  /**
   * What is known of the queue's waiting jobs without a scan: `empty`, or a key every live
   * Pending key sorts at or after, or nothing (cold start, or no claim yet).
   */
  lowerBound(queue: string): { readonly empty: true } | { readonly empty: false; readonly key: Uint8Array } | undefined {
    const s = this.state(queue);
    if (s.emptyAsOf === s.epoch) return { empty: true };
    return s.bound === undefined ? undefined : { empty: false, key: s.bound.key };
  }

  /** A complete scan that began at `observed` found no (more) jobs. Keeps the bound. */
  markEmpty(queue: string, observed: CursorObservation): void {
    this.state(queue).emptyAsOf = observed.epoch;
  }

  /** After a claim committed with `claimed` as its last key. */
  advance(queue: string, claimed: Uint8Array, observed: CursorObservation): void {
    const s = this.state(queue);
    const clamp = s.minInsertAhead;
    s.minInsertAhead = undefined;
    // An insert behind the bound moved it during the claim: that bound is authoritative.
    if (s.boundVersion !== observed.boundVersion) return;
    if (clamp !== undefined && compareBytes(clamp, claimed) <= 0) {
      // A key inserted ahead of the bound while we claimed may sort before our last claimed key,
      // and our snapshot may not have seen it (ids are drawn before commit, and requeues return
      // a job to its older key). Resume from it rather than skip past it. Equal means the claimed
      // job itself was reinserted (its lease ran out meanwhile).
      s.bound = { key: clamp, inclusive: true };
    } else {
      s.bound = { key: claimed, inclusive: false };
    }
  }

  /** After a commit that inserted `count` Pending keys of `queue`, the smallest being `minKey`. */
  noteInserts(queue: string, minKey: Uint8Array): void {
    const s = this.state(queue);
    const wasEmpty = s.emptyAsOf === s.epoch;
    s.epoch++;
    const bound = s.bound;
    if (bound !== undefined) {
      const c = compareBytes(minKey, bound.key);
      if (c < 0 || (c === 0 && !bound.inclusive)) {
        s.bound = { key: minKey, inclusive: true };
        s.boundVersion++;
        s.minInsertAhead = undefined;
        return;
      }
    } else if (wasEmpty) {
      // The whole queue was seen empty, so nothing can sort before this key.
      s.bound = { key: minKey, inclusive: true };
      s.boundVersion++;
      s.minInsertAhead = undefined;
      return;
    }
    if (s.minInsertAhead === undefined || compareBytes(minKey, s.minInsertAhead) < 0) s.minInsertAhead = minKey;
  }

  /** Queues with state worth persisting at close. */
  export(): Map<string, CursorSnapshot> {
    const out = new Map<string, CursorSnapshot>();
    for (const [queue, s] of this.states) {
      const empty = s.emptyAsOf === s.epoch;
      if (s.bound !== undefined || empty) out.set(queue, { bound: s.bound, empty });
    }
    return out;
  }

  /** Restores a persisted cursor (at open, before any traffic or recovery requeue). */
  restore(queue: string, snapshot: CursorSnapshot): void {
    const s = this.state(queue);
    s.bound = snapshot.bound;
    s.boundVersion++;
    s.minInsertAhead = undefined;
    s.emptyAsOf = snapshot.empty ? s.epoch : undefined;
  }
}
