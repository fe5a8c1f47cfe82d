/**
 * Ending claims nobody settled: the lease reaper (expired leases of this process) and the
 * open-time recovery (every claim a previous process left behind). Both commit without awaiting
 * durability: a lost reap is redone by the next tick or the next open.
 *
 * Failure or interruption (issue #13). A lease that expires while this process lives means its
 * holder neither settled nor extended it in time (a stuck or too slow handler): a failed try, as
 * a timeout is, counted against `maxAttempts` (a hung step fails after a few tries instead of
 * leaving many running copies). A claim found at open was held by a process that exited,
 * crashed or closed the queue (a tab reload), and a claim the queue abandoned (its payload could
 * not be fetched) never reached a handler: interruptions, no fault of the job. The try is given
 * back (`attempts − 1`) and `interruptions + 1` counted against the queue's `maxInterruptions`,
 * so a job that kills its process every time still ends in Dead.
 *
 * Reap protocol, per due entry, soonest first (entries are marked and refuse renewal):
 * 1. Begin the transaction, THEN re-check the registry token: a settlement (and a re-claim) that
 *    raced in between must then conflict with us on the Claimed key.
 * 2. Claimed record gone ⇒ drop the entry (settled, or its claim never committed).
 * 3. Stage the end of the claim: back to Pending at its original key (history lease_expired), or
 *    Dead with "lease expired" when out of attempts; an abandoned entry ends as an interruption.
 *    Commit; on conflict retry from 1.
 * 4. Remove the entry; note the Pending insert (wakes a worker) or broadcast completion.
 * A storage error aborts the rest of the tick; an undecodable record is logged and its entry
 * stays marked for the next tick while later entries continue.
 */
import { isTaqubaError } from '../../errors.js';
import { interruptedTooOftenError, LEASE_EXPIRED_ERROR } from '../constants.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import { withChanges, type JobRecord } from '../records/job-record.js';
import { claimedKey, spacePrefix } from '../records/keys.js';
import { notePendingInserts, type QueueContext } from '../queue-context.js';
import { attemptEntry, stageDead } from './settlement.js';
import { runTransaction, type StagedTxn } from '../storage/staged-txn.js';

interface EndOfClaim {
  /** The Pending key the job went back to, or undefined when it went to Dead. */
  readonly pendingKey: Uint8Array | undefined;
}

/**
 * Stages the end of a claim whose Claimed key the caller already deleted. `lease_expired` is a
 * failed try (Dead when out of attempts); `interrupted` gives the try back and counts an
 * interruption (Dead once `maxInterruptions` is reached). Boundary: the job dead-letters on the
 * interruption that makes the count equal to `maxInterruptions`, as a failure on attempt
 * `maxAttempts` does.
 */
function stageEndOfClaim(s: StagedTxn, stored: JobRecord, now: number, cause: 'lease_expired' | 'interrupted', maxInterruptions: number): EndOfClaim {
  let counts: { attempts: number; interruptions: number } | undefined;
  if (cause === 'interrupted') {
    counts = { attempts: Math.max(0, stored.attempts - 1), interruptions: stored.interruptions + 1 };
    if (counts.interruptions >= maxInterruptions) {
      stageDead(s, stored, now, interruptedTooOftenError(counts.interruptions), counts);
      return { pendingKey: undefined };
    }
  } else if (stored.attempts >= stored.maxAttempts) {
    stageDead(s, stored, now, LEASE_EXPIRED_ERROR);
    return { pendingKey: undefined };
  }
  const pending = withChanges(stored, { status: 'pending', ...counts }, ['claimedAt', 'runAt']);
  const key = s.putRecord(pending);
  s.appendHistory(stored.id, attemptEntry(stored, now, cause));
  s.count(stored.queue, 'claimed', -1);
  s.count(stored.queue, 'pending', 1);
  return { pendingKey: key };
}

/** One reaper sweep over due leases. Returns how many claims it ended. */
export async function reapExpiredLeases(ctx: QueueContext): Promise<number> {
  const due = ctx.leases.takeDue(ctx.clock.now());
  let ended = 0;
  for (const entry of due) {
    try {
      const outcome = await runTransaction(
        ctx.db,
        async (s) => {
          if (!ctx.leases.holds(entry.queue, entry.id, entry.token)) return 'settled' as const;
          const key = claimedKey(entry.queue, entry.id);
          const raw = await s.get(key);
          if (raw === undefined) return 'missing' as const;
          const stored = decodeJobRecord(raw);
          s.delete(key);
          const cause = entry.abandoned ? 'interrupted' : 'lease_expired';
          const end = stageEndOfClaim(s, stored, ctx.clock.now(), cause, ctx.configs.get(stored.queue).maxInterruptions);
          s.afterCommit(() => {
            ctx.leases.remove(entry.queue, entry.id, entry.token);
            if (end.pendingKey) notePendingInserts(ctx, entry.queue, end.pendingKey);
            else ctx.completion.notifyAll();
          });
          return 'ended' as const;
        },
        { durable: false },
      );
      if (outcome === 'missing') ctx.leases.remove(entry.queue, entry.id, entry.token);
      if (outcome === 'ended') ended++;
    } catch (e) {
      if (isTaqubaError(e, 'CORRUPT_DATA')) {
        ctx.logger.warn(`reaper skipped an undecodable claimed record. queue=${entry.queue} id=${entry.id}`, e);
        continue;
      }
      throw e;
    }
  }
  return ended;
}

const RECOVERY_PAGE = 256;

/**
 * Open-time recovery: every claimed record is an interrupted claim of a previous process. Each
 * goes back to Pending with its try given back and one more interruption (history interrupted),
 * or to Dead once the queue's `maxInterruptions` is reached. Undecodable records are logged and
 * left in place. A commit error fails the open. Returns the number of claims ended.
 */
export async function recoverInterruptedClaims(ctx: QueueContext): Promise<number> {
  let after: Uint8Array | undefined;
  let ended = 0;
  for (;;) {
    const page: Uint8Array[] = [];
    for await (const entry of ctx.db.scan({ prefix: spacePrefix('claimed'), start: after, startExclusive: after !== undefined, limit: RECOVERY_PAGE })) {
      page.push(entry.key);
    }
    if (page.length === 0) return ended;
    after = page[page.length - 1];
    for (const key of page) {
      try {
        await runTransaction(
          ctx.db,
          async (s) => {
            const raw = await s.get(key);
            if (raw === undefined) return;
            const stored = decodeJobRecord(raw);
            s.delete(key);
            const end = stageEndOfClaim(s, stored, ctx.clock.now(), 'interrupted', ctx.configs.get(stored.queue).maxInterruptions);
            s.afterCommit(() => {
              ended++;
              if (end.pendingKey) notePendingInserts(ctx, stored.queue, end.pendingKey);
            });
          },
          { durable: false },
        );
      } catch (e) {
        if (!isTaqubaError(e, 'CORRUPT_DATA')) throw e;
        ctx.logger.warn('recovery left an undecodable claimed record in place', e);
      }
    }
  }
}
