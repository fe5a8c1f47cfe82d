/**
 * Taking a waiting job out of the queue, only as it was read: the removal a hand-off of a run
 * commits (workflow/archive). Unlike `cancel`, it never touches a claimed job (a cancel would flag
 * it and fire its signal): a run can leave only between its steps.
 *
 * One durable transaction, retried on conflict: the job is located from its index, checked by the
 * caller's `accept` against the record read before (so a job woken, promoted, claimed or retried
 * since is `changed`, not taken), the caller-KV entries `expectKv` names must hold the bytes read
 * before, then the job's record, index, history and dedup entry are deleted with `effects` applied.
 */
import { equalBytes } from '../../bytes.js';
import { validateLookupId } from '../records/validation.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import type { JobRecord } from '../records/job-record.js';
import { dedupKey, historyKey, jobIndexKey, spaceOfKey, userKey } from '../records/keys.js';
import type { QueueContext } from '../queue-context.js';
import { discardEffects, prepareEffects, stageEffects, type SettlementEffects } from '../storage/effects.js';
import { isAmbiguousCommitError, runTransaction } from '../storage/staged-txn.js';

/** `taken`: removed with the effects. `claimed`: it runs now (nothing changed). `changed`: not as read. `not_found`: gone, done or dead. */
export type TakeOutcome = 'taken' | 'claimed' | 'changed' | 'not_found';

/** What the job and the caller's records must still be for the take to happen. */
export interface TakeGuard {
  /** Whether the stored record (payload not materialised) is the one read before. */
  readonly accept: (record: JobRecord) => boolean;
  /** Caller-KV entries that must hold exactly these bytes (null: absent). */
  readonly expectKv?: readonly (readonly [Uint8Array, Uint8Array | null])[];
}

export async function takeWaitingJob(ctx: QueueContext, id: string, guard: TakeGuard, effects: SettlementEffects): Promise<TakeOutcome> {
  ctx.checkOpen();
  validateLookupId(id);
  const prepared = await prepareEffects(ctx, effects);
  let outcome: TakeOutcome;
  try {
    outcome = await runTransaction(ctx.db, async (s): Promise<TakeOutcome> => {
      const key = await s.get(jobIndexKey(id));
      const raw = key === undefined ? undefined : await s.get(key);
      if (key === undefined || raw === undefined) return 'not_found';
      const space = spaceOfKey(key);
      if (space === 'claimed') return 'claimed';
      if (space !== 'pending' && space !== 'scheduled') return 'not_found';
      const record = decodeJobRecord(raw);
      if (!guard.accept(record)) return 'changed';
      for (const [k, expected] of guard.expectKv ?? []) {
        const now = await s.get(userKey(k));
        if (expected === null ? now !== undefined : now === undefined || !equalBytes(now, expected)) return 'changed';
      }
      s.delete(key);
      s.delete(jobIndexKey(id));
      s.delete(historyKey(id));
      if (record.dedupKey !== undefined) s.delete(dedupKey(record.queue, record.dedupKey));
      s.count(record.queue, space, -1);
      await stageEffects(ctx, s, prepared);
      s.afterCommit(async () => {
        ctx.cancelTokens.fireAndDrop(id);
        ctx.completion.notifyAll();
        await ctx.payloads.deleteQuietly(record.payloadRef);
      });
      return 'taken';
    });
  } catch (e) {
    if (!isAmbiguousCommitError(e)) await discardEffects(ctx, prepared);
    throw e;
  }
  if (outcome !== 'taken') await discardEffects(ctx, prepared);
  return outcome;
}
