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
import type { JobRecord } from './job-record.js';
import { decodeJobRecord, withChanges } from './job-record.js';
import { claimedKey, dedupKey, pendingQueuePrefix } from './keys.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { LeaseHandle } from './lease-handle.js';
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
    /** Fires when a cancel of this job is requested (pre-fired if it already was). */
    readonly signal: AbortSignal,
    /** Extends this claim's lease; cannot settle. */
    readonly lease: LeaseHandle,
  ) {}

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
  signal: AbortSignal;
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
    let stored: JobRecord;
    try {
      stored = decodeJobRecord(entry.value);
    } catch (e) {
      ctx.logger.warn(`skipping an undecodable pending record. queue=${queue}`, e);
      continue;
    }
    const claimed = withChanges(stored, { status: 'claimed', claimedAt: now, attempts: stored.attempts + 1 }, ['dedupKey', 'runAt']);
    s.delete(entry.key);
    s.putRecord(claimed);
    if (stored.dedupKey !== undefined) s.delete(dedupKey(queue, stored.dedupKey));
    const token = ctx.nextToken();
    ctx.leases.insert(queue, claimed.id, token, expiresAt);
    const signal = ctx.cancelTokens.install(claimed.id, token, claimed.cancelRequested);
    taken.push({ record: claimed, token, signal });
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
  const records = await Promise.all(taken.map((t) => ctx.payloads.materialize(t.record)));
  return taken.map((t, i) =>
    new Claim(records[i], t.token, t.signal, LeaseHandle.bind({ registry: ctx.leases, clock: ctx.clock, queue, id: t.record.id, token: t.token, signal: t.signal })),
  );
}

/** Key of a claim's record (stable for the claim's life). */
export function claimKeyOf(claim: Claim): Uint8Array {
  return claimedKey(claim.queue, claim.id);
}
