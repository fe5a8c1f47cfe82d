/**
 * Settling a claim: ack, nack and dead-letter, each one durable transaction (retried on conflict).
 *
 * Take-claim protocol, the fence of every settlement, inside the transaction:
 * 1. The lease registry must hold this claim's exact token, else CLAIM_LOST.
 * 2. The Claimed record must exist in the snapshot, else CLAIM_LOST (reaped, already settled).
 * 3. Stage the DELETE of the Claimed key, so a racing reap, re-claim or cancel writing that key
 *    makes one side conflict; the loser retries and fails step 1 or 2.
 * The record read in step 2 (not the claim's copy) is the base of what the settlement writes, so
 * a cancel flag set during the delivery is kept.
 * After commit: the lease entry is removed (token-fenced), the cancel signal dropped.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { JobAttempt } from '../records/attempt-history.js';
import { claimOf, isClaim, type Claim } from './claim.js';
import { stageContinuation, undoContinuation, validateContinuation, type Continuation, type ContinuationRegistration } from './continue-in-place.js';
import { discardEffects, NO_EFFECTS, prepareEffects, stageEffects, type PreparedEffects, type SettlementEffects } from '../storage/effects.js';
import type { EnqueueResult } from './enqueue.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import { mayHaveHistory, withChanges, type JobRecord } from '../records/job-record.js';
import { claimedKey, historyKey, jobIndexKey } from '../records/keys.js';
import { claimLostError } from '../leases/lease-handle.js';
import { notePendingInserts, type QueueContext } from '../queue-context.js';
import { retryBackoffMs } from './retry-backoff.js';
import { isAmbiguousCommitError, runTransaction, type StagedTxn } from '../storage/staged-txn.js';
import { validateDuration } from '../records/validation.js';

/** `retried`: the job waits for another attempt. `dead_lettered`: it was out of attempts. */
export type NackOutcome = { readonly type: 'retried' } | { readonly type: 'dead_lettered'; readonly results: EnqueueResult[] };

export function assertClaim(claim: unknown): asserts claim is Claim {
  if (!isClaim(claim)) throw new InvalidArgumentError('expected a Claim returned by a claim call (inspection records cannot settle)');
}

/** Steps 1–3 of the take-claim protocol. Returns the stored record's bytes. */
async function takeClaimBytes(ctx: QueueContext, s: StagedTxn, claim: Claim): Promise<Uint8Array> {
  if (!ctx.leases.holds(claim.queue, claim.id, claim.token)) throw claimLostError(claim.queue, claim.id, 'lease no longer held');
  const key = claimedKey(claim.queue, claim.id);
  const raw = await s.get(key);
  if (raw === undefined) throw claimLostError(claim.queue, claim.id, 'claimed record gone');
  s.delete(key);
  return raw;
}

/** Steps 1–3 of the take-claim protocol. Returns the stored record. */
async function takeClaim(ctx: QueueContext, s: StagedTxn, claim: Claim): Promise<JobRecord> {
  return decodeJobRecord(await takeClaimBytes(ctx, s, claim));
}

function releaseClaim(ctx: QueueContext, claim: Claim): void {
  ctx.leases.remove(claim.queue, claim.id, claim.token);
  ctx.cancelTokens.clear(claim.id, claim.token);
}

export function attemptEntry(record: JobRecord, now: number, outcome: JobAttempt['outcome'], error?: string): JobAttempt {
  const entry: { -readonly [K in keyof JobAttempt]: JobAttempt[K] } = { attempt: record.attempts, recordedAt: now, outcome };
  if (record.claimedAt !== undefined) entry.claimedAt = record.claimedAt;
  if (error !== undefined) entry.error = error;
  return entry;
}

/**
 * Stages the move of a taken claim to Dead. claimedAt is kept on every dead record. `counts`
 * (an interruption) replaces the record's counters; the history entry keeps the try's number.
 */
export function stageDead(s: StagedTxn, stored: JobRecord, now: number, error: string, counts?: { attempts: number; interruptions: number }): void {
  const dead = withChanges(stored, { status: 'dead', failedAt: now, lastError: error, ...counts }, ['runAt', 'completedAt']);
  s.putRecord(dead);
  s.appendHistory(stored.id, attemptEntry(stored, now, 'dead_lettered', error));
  s.count(stored.queue, 'claimed', -1);
  s.count(stored.queue, 'dead', 1);
}

/**
 * Runs a settlement with prepared effects; discards their objects unless they may have committed.
 * `onIssued` (worker loops): called once the commit is issued, i.e. applied unless it conflicts.
 */
async function settle<T>(
  ctx: QueueContext,
  effects: SettlementEffects | undefined,
  onIssued: (() => void) | undefined,
  fn: (s: StagedTxn, prepared: PreparedEffects) => Promise<T>,
): Promise<T> {
  ctx.checkOpen();
  const prepared = await prepareEffects(ctx, effects);
  try {
    return await runTransaction(ctx.db, (s) => fn(s, prepared), onIssued === undefined ? undefined : { onIssued });
  } catch (e) {
    if (!isAmbiguousCommitError(e)) await discardEffects(ctx, prepared);
    throw e;
  }
}

function validateReason(reason: unknown, name: string): asserts reason is string {
  if (typeof reason !== 'string') throw new InvalidArgumentError(`${name} must be a string. ${name}=${String(reason)}`, { name });
}

/** ack / ackWith. */
export async function ackClaim(ctx: QueueContext, claim: Claim, effects?: SettlementEffects, onIssued?: () => void): Promise<EnqueueResult[]> {
  return (await acknowledge(ctx, claim, effects, onIssued, undefined)).results;
}

/**
 * `ackWith` that continues the claim in place as `next` (continue-in-place.ts): resolves, once
 * durable, with the claim of the continued job (same id, a fresh token). `claim` is asserted
 * by the caller (`Queue.ackContinuing`).
 */
export async function ackContinuing(ctx: QueueContext, claim: Claim, next: Continuation, effects: SettlementEffects | undefined, leaseMs: number): Promise<Claim> {
  validateContinuation(ctx, claim, next);
  const { continued } = await acknowledge(ctx, claim, effects, undefined, { next, leaseMs });
  return claimOf(ctx, continued!.taken);
}

async function acknowledge(
  ctx: QueueContext,
  claim: Claim,
  effects: SettlementEffects | undefined,
  onIssued: (() => void) | undefined,
  continuation: { readonly next: Continuation; readonly leaseMs: number } | undefined,
): Promise<{ results: EnqueueResult[]; continued: ContinuationRegistration | undefined }> {
  assertClaim(claim);
  // The continuation registered by the attempt that committed; an attempt that did not commit
  // (a conflict reruns the function, a failure rejects) has its registration undone.
  let continued: ContinuationRegistration | undefined;
  const forget = (): void => {
    if (continued !== undefined) undoContinuation(ctx, continued);
    continued = undefined;
  };
  try {
    const results = await settle(ctx, effects, onIssued, async (s, prepared) => {
      forget();
      const queue = claim.queue;
      const id = claim.id;
      let payloadRef: string | undefined;
      if (continuation !== undefined) {
        const stored = await takeClaim(ctx, s, claim);
        payloadRef = stored.payloadRef;
        continued = stageContinuation(ctx, s, claim, stored, continuation.next, continuation.leaseMs);
      } else if (ctx.configs.get(queue).keepDoneMs !== null) {
        const stored = await takeClaim(ctx, s, claim);
        const now = ctx.clock.now();
        s.putRecord(withChanges(stored, { status: 'done', completedAt: now }, ['runAt']));
        s.appendHistory(id, attemptEntry(stored, now, 'completed'));
      } else {
        // Nothing is written from the stored record, so it is not decoded: its existence is the
        // fence, and the payload reference never changes during a claim (the claim's copy has it).
        await takeClaimBytes(ctx, s, claim);
        payloadRef = claim.job.payloadRef;
        s.delete(jobIndexKey(id));
        if (mayHaveHistory(claim.job)) s.delete(historyKey(id));
      }
      if (continued === undefined) {
        s.count(queue, 'claimed', -1);
        s.count(queue, 'done', 1);
      }
      const results = prepared === NO_EFFECTS ? [] : await stageEffects(ctx, s, prepared);
      s.afterCommit(() => {
        releaseClaim(ctx, claim);
        ctx.completion.notifyAll();
        if (payloadRef !== undefined) return ctx.payloads.deleteQuietly(payloadRef);
      });
      return results;
    });
    return { results, continued };
  } catch (e) {
    forget();
    throw e;
  }
}

/** Options of a nack. */
export interface NackOptions {
  /**
   * Wait at least this long (ms) before the next attempt, e.g. an HTTP `Retry-After`: the retry
   * runs at now + max(queue backoff, retryAfterMs). Attempts are counted as usual.
   */
  readonly retryAfterMs?: number;
}

/** nack / nackWith. Effects apply only if this nack dead-letters the job. */
export async function nackClaim(ctx: QueueContext, claim: Claim, error: string, effects?: SettlementEffects, onIssued?: () => void, options?: NackOptions): Promise<NackOutcome> {
  assertClaim(claim);
  validateReason(error, 'error');
  const retryAfterMs = options?.retryAfterMs ?? 0;
  validateDuration(retryAfterMs, 'retryAfterMs');
  return settle(ctx, effects, onIssued, async (s, prepared): Promise<NackOutcome> => {
    const stored = await takeClaim(ctx, s, claim);
    const now = ctx.clock.now();
    if (stored.attempts >= stored.maxAttempts) {
      stageDead(s, stored, now, error);
      const results = await stageEffects(ctx, s, prepared);
      s.afterCommit(() => {
        releaseClaim(ctx, claim);
        ctx.completion.notifyAll();
      });
      return { type: 'dead_lettered', results };
    }
    const backoff = Math.max(retryBackoffMs(ctx.configs.get(stored.queue), stored.attempts), retryAfterMs);
    const next =
      backoff === 0
        ? withChanges(stored, { status: 'pending', lastError: error }, ['claimedAt', 'runAt'])
        : withChanges(stored, { status: 'scheduled', lastError: error, runAt: now + backoff }, ['claimedAt']);
    const key = s.putRecord(next);
    s.appendHistory(stored.id, attemptEntry(stored, now, 'retried', error));
    s.count(stored.queue, 'claimed', -1);
    s.count(stored.queue, next.status === 'pending' ? 'pending' : 'scheduled', 1);
    s.afterCommit(async () => {
      releaseClaim(ctx, claim);
      if (next.status === 'pending') notePendingInserts(ctx, stored.queue, key);
      await discardEffects(ctx, prepared);
    });
    return { type: 'retried' };
  });
}

/** deadLetter / deadLetterWith: to Dead now, whatever attempts remain (attempts unchanged). */
export async function deadLetterClaim(ctx: QueueContext, claim: Claim, reason: string, effects?: SettlementEffects, onIssued?: () => void): Promise<EnqueueResult[]> {
  assertClaim(claim);
  validateReason(reason, 'reason');
  return settle(ctx, effects, onIssued, async (s, prepared) => {
    const stored = await takeClaim(ctx, s, claim);
    stageDead(s, stored, ctx.clock.now(), reason);
    const results = await stageEffects(ctx, s, prepared);
    s.afterCommit(() => {
      releaseClaim(ctx, claim);
      ctx.completion.notifyAll();
    });
    return results;
  });
}
