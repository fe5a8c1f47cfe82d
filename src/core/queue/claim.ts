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
 * Offloaded payloads are fetched after the lock is released, concurrently.
 */
import { isTaqubaError } from '../errors.js';
import type { JobRecord, MutableJobRecord } from './job-record.js';
import { decodeJobRecord } from './job-record.js';
import { claimedKey, dedupKey, pendingQueuePrefix } from './keys.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { LeaseHandle } from './lease-handle.js';
import type { CancelState } from './lease-registry.js';
import type { QueueContext } from './queue-context.js';
import { StagedTxn } from './staged-txn.js';
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

interface Taken {
  record: JobRecord;
  token: number;
  cancel: CancelState;
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

function undoRegistrations(ctx: QueueContext, queue: string, taken: Taken[]): void {
  for (const t of taken) {
    ctx.leases.remove(queue, t.record.id, t.token);
    ctx.cancelTokens.clear(t.record.id, t.token);
  }
}

/** Claims up to `max` jobs of `queue` with a lease of `leaseMs`. Inputs are validated by the caller. */
export async function claimJobs(ctx: QueueContext, locks: KeyedMutex, queue: string, max: number, leaseMs: number): Promise<Claim[]> {
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
        undoRegistrations(ctx, queue, result.taken);
        if (isTaqubaError(e, 'CONFLICT')) continue;
        throw e;
      }
      cursor.advance(queue, result.lastKey, observed);
      if (result.scanned < max) cursor.markEmpty(queue, observed);
      return result.taken;
    }
  });
  // Payload fetches happen outside the lock. If one fails the claims stay committed and their
  // jobs come back when the leases expire.
  let records: JobRecord[] | undefined;
  for (const t of taken) {
    if (t.record.payloadRef !== undefined) {
      records = await Promise.all(taken.map((x) => ctx.payloads.materialize(x.record)));
      break;
    }
  }
  const claims: Claim[] = new Array(taken.length);
  for (let i = 0; i < taken.length; i++) {
    const t = taken[i];
    const lease = LeaseHandle.bind({ registry: ctx.leases, clock: ctx.clock, queue, id: t.record.id, token: t.token, cancel: t.cancel });
    claims[i] = new Claim(records === undefined ? t.record : records[i], t.token, t.cancel, lease);
  }
  return claims;
}

/** Key of a claim's record (stable for the claim's life). */
export function claimKeyOf(claim: Claim): Uint8Array {
  return claimedKey(claim.queue, claim.id);
}
