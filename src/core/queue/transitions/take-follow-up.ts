/**
 * Taking a follow-up in the ack that enqueues it: the worker that acks a job keeps its slot and
 * runs the job's first follow-up next, written straight to Claimed in the ack's transaction
 * instead of to Pending. A workflow's next step then costs no claim transaction, no Pending write
 * and delete, and no wakeup: one transaction per step instead of two.
 *
 * Protocol (inside the ack's transaction, after the take-claim fence of the acked job):
 * 1. Eligible only when the follow-up is due now (not scheduled), has no dedup key, keeps its
 *    payload inline, is on the acked job's queue, and no job of strictly higher priority can be
 *    waiting there: the claim cursor knows the queue empty, or its lower bound (every live
 *    Pending key sorts at or after it) has a priority number at or above the follow-up's. With no
 *    bound known (no claim since open) it is not taken. Jobs of the same priority are overtaken:
 *    a run that can continue at once keeps going (depth first), as in-process workflow engines do.
 * 2. Staged as a claim would leave it: the Claimed record (attempts 1, claimedAt now) and index,
 *    counter claimed +1. The id-override check of an enqueue applies.
 * 3. Its lease and cancel state are registered BEFORE the commit, as a claim's are (the reaper
 *    and a racing cancel must see it); `undoRegistration` (claim.ts) removes them when this
 *    attempt does not commit.
 * Anything not eligible is enqueued as usual by the caller.
 */
import { AlreadyExistsError } from '../../errors.js';
import type { MutableJobRecord } from '../records/job-record.js';
import { jobIndexKey, pendingKeyPriority } from '../records/keys.js';
import type { QueueContext } from '../queue-context.js';
import type { StagedTxn } from '../storage/staged-txn.js';
import type { EnqueueResult, PreparedEnqueue } from './enqueue.js';
import type { Taken } from './claim.js';

/** Step 1: may `prepared`, a follow-up of a job of `queue`, be taken by the acking worker? */
export function mayTakeFollowUp(ctx: QueueContext, queue: string, prepared: PreparedEnqueue): boolean {
  const r = prepared.record;
  if (r.queue !== queue || r.status !== 'pending' || r.dedupKey !== undefined || r.payloadRef !== undefined) return false;
  const waiting = ctx.cursor.lowerBound(queue);
  if (waiting === undefined) return false;
  return waiting.empty || pendingKeyPriority(queue, waiting.key) >= r.priority;
}

/** Steps 2-3. Throws ALREADY_EXISTS like an enqueue when an override id is taken. */
export async function stageTakenFollowUp(ctx: QueueContext, s: StagedTxn, prepared: PreparedEnqueue, leaseMs: number): Promise<{ taken: Taken; result: EnqueueResult }> {
  const source = prepared.record;
  if (prepared.idOverride && (await s.get(jobIndexKey(source.id))) !== undefined) {
    throw new AlreadyExistsError(`job id already in use. id=${source.id}`, { id: source.id, queue: source.queue });
  }
  const now = ctx.clock.now();
  // A copy: the prepared record is reused if this transaction runs again after a conflict.
  const claimed: MutableJobRecord = { ...source, status: 'claimed', attempts: source.attempts + 1, claimedAt: now };
  s.putRecord(claimed);
  s.count(claimed.queue, 'claimed', 1);
  const token = ctx.nextToken();
  ctx.leases.insert(claimed.queue, claimed.id, token, now + leaseMs);
  const cancel = ctx.cancelTokens.install(claimed.id, token, claimed.cancelRequested);
  return { taken: { record: claimed, token, cancel }, result: { type: 'new', id: claimed.id } };
}
