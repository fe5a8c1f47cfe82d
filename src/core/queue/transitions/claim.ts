/**
 * Claiming: move up to `max` Pending jobs of one queue to Claimed in one non-durable transaction.
 *
 * Protocol (per queue, under the queue's claim lock):
 * 1. Observe the cursor (before the transaction's snapshot; see claim-cursor.ts). Known empty ⇒
 *    return nothing without scanning.
 * 2. Scan the queue's Pending prefix from the cursor bound up to the prefix end, ≤ max entries.
 * 3. Per job: delete the Pending key, write the Claimed record (attempts+1, claimedAt, dedup key
 *    stripped) and index, delete its dedup entry; counters pending −k, claimed +k.
 * 4. Register each lease and install each cancel signal BEFORE committing, so the reaper and a
 *    racing cancel can see the claim; a failed commit removes them again.
 * 5. Commit without awaiting durability (a lost claim leaves the job Pending: harmless), then
 *    advance the cursor. A conflict (a racing cancel) retries from step 1.
 * Offloaded payloads are fetched after the lock is released, concurrently. A job whose payload
 * object is missing or fails its checks (CORRUPT_DATA) can never be delivered: it is moved to Dead
 * at once with a reason naming the object, and only the other claims are returned.
 */
import { isTaqubaError } from '../../errors.js';
import type { JobRecord, MutableJobRecord } from '../records/job-record.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import { dedupKey, pendingQueuePrefix } from '../records/keys.js';
import type { KeyedMutex } from '../../keyed-mutex.js';
import { LeaseHandle } from '../leases/lease-handle.js';
import type { CancelState } from '../leases/lease-registry.js';
import { unreadablePayloadReason } from '../storage/payload-offload.js';
import type { QueueContext } from '../queue-context.js';
import { StagedTxn } from '../storage/staged-txn.js';
import type { ClaimCursor, CursorObservation } from './claim-cursor.js';

const CLAIM_BRAND = Symbol('Claim');

/**
 * One delivery of a job, returned only by claims. Settlement and lease calls take a `Claim`;
 * records from inspection cannot settle. Its token tells deliveries of the same job apart.
 */
export class Claim {
  /** @internal */
  readonly [CLAIM_BRAND] = true;

  /** @internal */
  constructor(
    /** The job as claimed (status claimed, attempts counted, payload materialised). */
    readonly job: JobRecord,
    /** @internal */
    readonly token: number,
    /** @internal The delivery's cancel state. */
    readonly cancelState: CancelState,
    /** Extends this claim's lease; cannot settle. */
    readonly lease: LeaseHandle,
  ) {}

  /** Fires when a cancel of this job is requested (pre-fired if it already was). */
  get signal(): AbortSignal {
    return this.cancelState.signal;
  }

  /**
   * @internal True once a cancel of this job was requested: `signal.aborted` without creating
   * the signal (an AbortController per delivery is a measurable share of a short step's CPU).
   */
  get cancelRequested(): boolean {
    return this.cancelState.fired;
  }

  get id(): string {
    return this.job.id;
  }

  get queue(): string {
    return this.job.queue;
  }
}

export function isClaim(value: unknown): value is Claim {
  return value instanceof Claim && value[CLAIM_BRAND] === true;
}

interface ClaimPass {
  taken: Taken[];
  lastKey?: Uint8Array;
  scanned: number;
}

/** A job staged as claimed, its lease and cancel state registered ahead of the commit. */
export interface Taken {
  readonly record: JobRecord;
  readonly token: number;
  readonly cancel: CancelState;
}

async function claimOnce(ctx: QueueContext, s: StagedTxn, queue: string, max: number, leaseMs: number, observed: CursorObservation): Promise<ClaimPass> {
  const prefix = pendingQueuePrefix(queue);
  const bound = observed.bound;
  const entries = [];
  for await (const entry of s.scan({ prefix, start: bound?.key, startExclusive: bound ? !bound.inclusive : undefined, limit: max, fillCache: true })) {
    entries.push(entry);
  }
  const now = ctx.clock.now();
  const expiresAt = now + leaseMs;
  const taken: Taken[] = [];
  let lastKey: Uint8Array | undefined;
  for (const entry of entries) {
    lastKey = entry.key;
    let claimed: MutableJobRecord;
    try {
      // A fresh object: it becomes the claimed record in place.
      claimed = decodeJobRecord(entry.value) as MutableJobRecord;
    } catch (e) {
      ctx.logger.warn(`skipping an undecodable pending record. queue=${queue}`, e);
      continue;
    }
    const dedup = claimed.dedupKey;
    claimed.status = 'claimed';
    claimed.claimedAt = now;
    claimed.attempts += 1;
    // Cleared by assignment, not `delete`: a deleted property turns the object into a slow
    // dictionary-mode object for the rest of the delivery, and an undefined field is not encoded.
    if (dedup !== undefined) claimed.dedupKey = undefined;
    if (claimed.runAt !== undefined) claimed.runAt = undefined;
    s.delete(entry.key);
    s.putRecord(claimed);
    if (dedup !== undefined) s.delete(dedupKey(queue, dedup));
    const token = ctx.nextToken();
    ctx.leases.insert(queue, claimed.id, token, expiresAt);
    const cancel = ctx.cancelTokens.install(claimed.id, token, claimed.cancelRequested);
    taken.push({ record: claimed, token, cancel });
  }
  if (taken.length > 0) {
    s.count(queue, 'pending', -taken.length);
    s.count(queue, 'claimed', taken.length);
  }
  return { taken, lastKey, scanned: entries.length };
}

/** Removes the lease and cancel state of a job taken by a transaction that did not commit. */
function undoRegistration(ctx: QueueContext, t: Taken): void {
  ctx.leases.remove(t.record.queue, t.record.id, t.token);
  ctx.cancelTokens.clear(t.record.id, t.token);
}

/** The delivery of a job taken by a committed transaction. */
export function claimOf(ctx: QueueContext, t: Taken): Claim {
  const lease = LeaseHandle.bind({ registry: ctx.leases, clock: ctx.clock, queue: t.record.queue, id: t.record.id, token: t.token, cancel: t.cancel });
  return new Claim(t.record, t.token, t.cancel, lease);
}

/** Settles a claim as dead with `reason` (injected by the queue, so this module need not import settlement). */
export type DeadLetterFn = (claim: Claim, reason: string) => Promise<unknown>;

/**
 * Claims up to `max` jobs of `queue` with a lease of `leaseMs`. Inputs are validated by the caller.
 * `deadLetter` settles the claims whose payload object is unreadable.
 */
export async function claimJobs(ctx: QueueContext, locks: KeyedMutex, queue: string, max: number, leaseMs: number, deadLetter: DeadLetterFn): Promise<Claim[]> {
  if (max === 0) return [];
  const cursor: ClaimCursor = ctx.cursor;
  if (cursor.begin(queue).knownEmpty) return [];
  const taken = await locks.run(queue, async () => {
    for (;;) {
      ctx.checkOpen();
      const observed = cursor.begin(queue);
      if (observed.knownEmpty) return [];
      const s = new StagedTxn(ctx.db.begin());
      let result: ClaimPass;
      try {
        result = await claimOnce(ctx, s, queue, max, leaseMs, observed);
      } catch (e) {
        s.txn.rollback();
        throw e;
      }
      if (result.lastKey === undefined) {
        s.txn.rollback();
        cursor.markEmpty(queue, observed);
        return [];
      }
      try {
        if (s.isEmpty) s.txn.rollback();
        else {
          s.flushCounters();
          await s.txn.commit({ durable: false });
        }
      } catch (e) {
        for (const t of result.taken) undoRegistration(ctx, t);
        if (isTaqubaError(e, 'CONFLICT')) continue;
        throw e;
      }
      cursor.advance(queue, result.lastKey, observed);
      if (result.scanned < max) cursor.markEmpty(queue, observed);
      return result.taken;
    }
  });
  const claims: Claim[] = new Array(taken.length);
  let offloaded = false;
  for (let i = 0; i < taken.length; i++) {
    claims[i] = claimOf(ctx, taken[i]);
    if (taken[i].record.payloadRef !== undefined) offloaded = true;
  }
  if (!offloaded) return claims;
  const delivered = await materializeClaims(ctx, claims, deadLetter);
  // Every job taken went to Dead: claim again, so a caller waiting for a job (claimWithWait, an
  // idle worker) is not told the queue is empty while jobs wait behind them. Each pass settles
  // at least one job, so this ends.
  if (delivered.length === 0) return claimJobs(ctx, locks, queue, max, leaseMs, deadLetter);
  return delivered;
}

/**
 * Fetches the offloaded payloads of `claims` (outside the claim lock). A CORRUPT_DATA payload
 * dead-letters its claim and drops it from the result. Any other failure (a store error) rejects
 * once the corrupt ones are settled; the remaining claims stay committed, never delivered, so
 * they are abandoned: the next reaper tick requeues them as interruptions (no try consumed).
 */
async function materializeClaims(ctx: QueueContext, claims: Claim[], deadLetter: DeadLetterFn): Promise<Claim[]> {
  const fetched = await Promise.allSettled(claims.map((c) => ctx.payloads.materialize(c.job)));
  const out: Claim[] = [];
  let failure: { error: unknown } | undefined;
  for (let i = 0; i < claims.length; i++) {
    const c = claims[i];
    const r = fetched[i];
    if (r.status === 'fulfilled') {
      out.push(r.value === c.job ? c : new Claim(r.value, c.token, c.cancelState, c.lease));
    } else if (isTaqubaError(r.reason, 'CORRUPT_DATA')) {
      const reason = unreadablePayloadReason(r.reason);
      ctx.logger.warn(`dead-lettering a job whose payload cannot be read. queue=${c.queue} id=${c.id} ${reason}`, r.reason);
      try {
        await deadLetter(c, reason);
      } catch (e) {
        // The claim stays taken; its job comes back when the lease expires and is tried again.
        ctx.logger.warn(`dead-lettering a job with an unreadable payload failed. queue=${c.queue} id=${c.id}`, e);
      }
    } else {
      failure ??= { error: r.reason };
    }
  }
  if (failure) {
    // Dead-lettered claims already left the registry, so this marks only the undelivered ones.
    const now = ctx.clock.now();
    for (const c of claims) ctx.leases.abandon(c.queue, c.id, c.token, now);
    throw failure.error;
  }
  return out;
}
