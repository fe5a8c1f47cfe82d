/**
 * Continuing a claim in place: an ack whose job hands its work on to a next job of the same
 * queue, due now (a workflow's next step), keeps the job. Its Claimed record is rewritten as the
 * next job (same id) and the acking worker goes on holding it. One record put, where an ack plus
 * an enqueue and a claim write the acked record's delete, its index delete, the next record, its
 * index, a Pending put and delete and four counter merges; no claim transaction, no wakeup.
 *
 * Eligibility (`mayContinueInPlace`, asked by the caller before it prepares the settlement, since
 * the next job's id, the claim's, goes into the settlement's own writes):
 * - the queue keeps no done records (a continued job is not done; with `keepDoneMs` each job is
 *   kept as done, so the next one is enqueued as usual);
 * - the next payload is kept inline (an offloaded one would need its object written first);
 * - no job of strictly higher priority can be waiting: the claim cursor knows the queue empty, or
 *   its lower bound (every live Pending key sorts at or after it) has a priority number at or
 *   above the job's. With no bound known (no claim since open) it is not eligible. Jobs of the
 *   same priority are overtaken: a run that can continue at once keeps going (depth first), as
 *   in-process workflow engines do.
 *
 * Protocol (inside the ack's transaction, after the take-claim fence, settlement.ts):
 * 1. The stored record (not the claim's copy) becomes the next job's: payload and headers
 *    replaced; attempts 1, interruptions 0, enqueuedAt and claimedAt now; lastError, requeuedAt
 *    and wake fields cleared; priority, maxAttempts and `cancelRequested` kept (a cancel requested
 *    during the delivery reaches the next job). It is put at the same Claimed key, so the index
 *    and the counters do not change. Its attempt history, if it may have one, is deleted.
 * 2. The delivery moves to a fresh claim token BEFORE the commit: lease (now + leaseMs, unmarked)
 *    and cancel state replaced. A reaper that marked the old lease finds its token gone and leaves
 *    the continued job alone (a reaper that got in first wrote the Claimed key, so one of the two
 *    transactions conflicts). An attempt that does not commit puts the old entries back
 *    (`undoContinuation`), so a rerun passes the fence again.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { Claim, Taken } from './claim.js';
import type { QueueContext } from '../queue-context.js';
import { encodeJobRecord } from '../records/job-record-codec.js';
import { mayHaveHistory, type JobRecord } from '../records/job-record.js';
import { claimedKey, historyKey, pendingKeyPriority } from '../records/keys.js';
import { validateHeaders, validatePayload } from '../records/validation.js';
import type { CancelState, LeaseEntry } from '../leases/lease-registry.js';
import type { StagedTxn } from '../storage/staged-txn.js';

/** The next job a claim continues as: its payload and headers (queue, priority and attempts budget stay). */
export interface Continuation {
  readonly payload: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

/** What step 2 replaced, to put back when the attempt does not commit. */
export interface ContinuationRegistration {
  readonly taken: Taken;
  readonly previousLease: LeaseEntry;
  readonly previousCancel: CancelState;
}

/** The first two rules of eligibility: what the queue's configuration allows, whatever waits. */
function allowsInPlace(ctx: QueueContext, claim: Claim, payload: Uint8Array): boolean {
  return ctx.configs.get(claim.queue).keepDoneMs === null && !ctx.payloads.shouldOffload(payload);
}

/** May `claim` continue in place as a job with `payload`? (Eligibility above.) */
export function mayContinueInPlace(ctx: QueueContext, claim: Claim, payload: Uint8Array): boolean {
  if (!allowsInPlace(ctx, claim, payload)) return false;
  const waiting = ctx.cursor.lowerBound(claim.queue);
  if (waiting === undefined) return false;
  return waiting.empty || pendingKeyPriority(claim.queue, waiting.key) >= claim.job.priority;
}

/** Validates a continuation without I/O. Throws INVALID_ARGUMENT. */
export function validateContinuation(ctx: QueueContext, claim: Claim, next: Continuation): void {
  validatePayload(next.payload);
  validateHeaders(next.headers);
  if (!allowsInPlace(ctx, claim, next.payload)) {
    throw new InvalidArgumentError(`this claim cannot continue in place (the queue keeps done jobs, or the payload is offloaded); ack and enqueue instead. id=${claim.id}`, { id: claim.id, queue: claim.queue });
  }
}

/** Steps 1-2, on `stored`, the record the fence read (its Claimed key already staged for deletion). */
export function stageContinuation(ctx: QueueContext, s: StagedTxn, claim: Claim, stored: JobRecord, next: Continuation, leaseMs: number): ContinuationRegistration {
  const now = ctx.clock.now();
  // Built field by field: what the acked job had besides identity, priority, budget and the
  // cancel flag (errors, wakes, requeue marks, its payload object) belonged to it.
  const record: JobRecord = {
    id: stored.id,
    queue: stored.queue,
    payload: next.payload,
    headers: next.headers,
    status: 'claimed',
    attempts: 1,
    maxAttempts: stored.maxAttempts,
    interruptions: 0,
    enqueuedAt: now,
    claimedAt: now,
    priority: stored.priority,
    cancelRequested: stored.cancelRequested,
  };
  s.put(claimedKey(record.queue, record.id), encodeJobRecord(record));
  if (mayHaveHistory(stored)) s.delete(historyKey(record.id));
  const token = ctx.nextToken();
  const previousLease = ctx.leases.swap(record.queue, record.id, claim.token, token, now + leaseMs);
  // The fence just checked the token, and nothing awaits in between.
  if (previousLease === undefined) throw new Error(`internal: the lease of a fenced claim is gone. id=${record.id}`);
  const previousCancel = claim.cancelState;
  const cancel = ctx.cancelTokens.install(record.id, token, record.cancelRequested);
  return { taken: { record, token, cancel }, previousLease, previousCancel };
}

/** Puts back what `stageContinuation` replaced, unless something replaced it since. */
export function undoContinuation(ctx: QueueContext, r: ContinuationRegistration): void {
  ctx.leases.reinstate(r.previousLease, r.taken.token);
  ctx.cancelTokens.reinstate(r.previousCancel, r.taken.token);
}
