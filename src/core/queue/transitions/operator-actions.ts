/**
 * Actions on a job by id: cancel, wake a scheduled job early, requeue or delete a dead job. Each
 * is one durable transaction, retried on conflict, that starts from the job index (so a racing
 * claim, promotion or reap conflicts on the record key and the retry sees the new state).
 */
import { ConflictError, CorruptDataError, InvalidArgumentError, NotFoundError } from '../../errors.js';
import { checkOptions, optionNames } from '../../options.js';
import { discardEffects, prepareEffects, stageEffects, validateKvWrites, type SettlementEffects } from '../storage/effects.js';
import type { EnqueueResult } from './enqueue.js';
import { decodeJobRecord, encodeJobRecord } from '../records/job-record-codec.js';
import { withChanges, type JobRecord } from '../records/job-record.js';
import { dedupKey, historyKey, jobIndexKey, spaceOfKey, userKey } from '../records/keys.js';
import { payloadErrorOf } from '../storage/payload-offload.js';
import { notePendingInserts, type QueueContext } from '../queue-context.js';
import { attemptEntry } from './settlement.js';
import { isAmbiguousCommitError, runTransaction, type StagedTxn } from '../storage/staged-txn.js';
import { validateLookupId, validatePayload } from '../records/validation.js';

/** `removed`: a waiting job was deleted. `requested`: a claimed job was flagged and signalled. */
export type CancelOutcome = 'removed' | 'requested' | 'not_found';
export type WakeOutcome = 'woken' | 'not_scheduled' | 'not_found';

async function locate(s: StagedTxn, id: string): Promise<{ key: Uint8Array; record: JobRecord } | undefined> {
  const key = await s.get(jobIndexKey(id));
  if (key === undefined) return undefined;
  const raw = await s.get(key);
  if (raw === undefined) return undefined;
  return { key, record: decodeJobRecord(raw) };
}

/**
 * cancel / cancelWith. Pending or scheduled ⇒ record, index, history and dedup entry deleted,
 * effects applied (`removed`). Claimed ⇒ the durable cancel flag is set and the live signal fired;
 * the job keeps running and effects are discarded (`requested`). Done, dead or unknown ⇒
 * `not_found`, effects discarded. `recorded` caller-KV writes commit with `removed` and
 * `requested` alike (a command's answer, kept with whatever the cancel changed).
 */
export async function cancelJob(
  ctx: QueueContext,
  id: string,
  effects?: SettlementEffects,
  recorded?: Iterable<readonly [Uint8Array, Uint8Array]>,
): Promise<{ outcome: CancelOutcome; results: EnqueueResult[] }> {
  ctx.checkOpen();
  validateLookupId(id);
  const records = validateKvWrites(recorded);
  const prepared = await prepareEffects(ctx, effects);
  let result: { outcome: CancelOutcome; results: EnqueueResult[] };
  try {
    result = await runTransaction(ctx.db, async (s) => {
      const found = await locate(s, id);
      const space = found && spaceOfKey(found.key);
      if (!found || space === 'done' || space === 'dead' || space === undefined) return { outcome: 'not_found' as const, results: [] };
      const { key, record } = found;
      for (const [k, v] of records) s.put(userKey(k), v);
      if (space === 'claimed') {
        if (!record.cancelRequested) s.put(key, encodeJobRecord(withChanges(record, { cancelRequested: true })));
        s.afterCommit(() => {
          ctx.cancelTokens.fire(id);
        });
        return { outcome: 'requested' as const, results: [] };
      }
      s.delete(key);
      s.delete(jobIndexKey(id));
      s.delete(historyKey(id));
      if (record.dedupKey !== undefined) s.delete(dedupKey(record.queue, record.dedupKey));
      s.count(record.queue, space === 'pending' ? 'pending' : 'scheduled', -1);
      const results = await stageEffects(ctx, s, prepared);
      s.afterCommit(async () => {
        ctx.cancelTokens.fireAndDrop(id);
        ctx.completion.notifyAll();
        await ctx.payloads.deleteQuietly(record.payloadRef);
      });
      return { outcome: 'removed' as const, results };
    });
  } catch (e) {
    if (!isAmbiguousCommitError(e)) await discardEffects(ctx, prepared);
    throw e;
  }
  if (result.outcome !== 'removed') await discardEffects(ctx, prepared);
  return result;
}

/**
 * Moves a scheduled job to Pending now, with `wakePayload` attached (or cleared when omitted).
 * `not_scheduled` for any other existing job, `not_found` for an unknown one. `recorded` caller-KV
 * writes commit with the wake only.
 */
export async function wakeScheduledJob(ctx: QueueContext, id: string, wakePayload?: Uint8Array, recorded?: Iterable<readonly [Uint8Array, Uint8Array]>): Promise<WakeOutcome> {
  ctx.checkOpen();
  validateLookupId(id);
  if (wakePayload !== undefined) validatePayload(wakePayload, 'wakePayload');
  const records = validateKvWrites(recorded);
  return runTransaction(ctx.db, async (s) => {
    const found = await locate(s, id);
    if (!found) return 'not_found';
    if (spaceOfKey(found.key) !== 'scheduled') return 'not_scheduled';
    for (const [k, v] of records) s.put(userKey(k), v);
    const now = ctx.clock.now();
    const changes = wakePayload === undefined ? { status: 'pending' as const, wokenAt: now } : { status: 'pending' as const, wokenAt: now, wakePayload };
    const next = withChanges(found.record, changes, wakePayload === undefined ? ['runAt', 'wakePayload'] : ['runAt']);
    s.delete(found.key);
    const key = s.putRecord(next);
    s.count(next.queue, 'scheduled', -1);
    s.count(next.queue, 'pending', 1);
    s.afterCommit(() => notePendingInserts(ctx, next.queue, key));
    return 'woken';
  });
}

/**
 * Throws CORRUPT_DATA (details `{ reason: 'payload_unreadable', id, object, problem }`, the read
 * error as cause) when `record`'s offloaded payload object is missing or fails its checks; store
 * errors pass through.
 */
async function assertPayloadReadable(ctx: QueueContext, record: JobRecord): Promise<void> {
  if (record.payloadRef === undefined) return;
  try {
    await ctx.payloads.materialize(record);
  } catch (e) {
    const payloadError = payloadErrorOf(e);
    if (payloadError === undefined) throw e;
    const problem = payloadError.code === 'NOT_FOUND' ? 'missing' : String((e as CorruptDataError).details.problem ?? 'unknown');
    throw new CorruptDataError(
      `payload object unreadable; dead job not requeued. id=${record.id} object=${payloadError.object} problem=${problem}`,
      { reason: 'payload_unreadable', id: record.id, object: payloadError.object, problem },
      e,
    );
  }
}

/**
 * Gives a dead job a fresh budget: back to Pending with attempts and interruptions 0, error, claim and failure
 * times and the cancel flag cleared; history keeps its entries and gains a `requeued` marker.
 * Works from the stored record (caller edits of a passed record are ignored).
 * Throws NOT_FOUND when the job is gone (e.g. swept by retention), INVALID_ARGUMENT when it is
 * not dead, CORRUPT_DATA (details.reason `payload_unreadable`, naming the object) when its
 * offloaded payload object is missing or corrupt: requeueing it would only dead-letter it again,
 * so restore the object or delete the job.
 */
/** Caller-KV changes committed with a dead requeue (the workflow layer revives a run this way). */
export interface RequeueDeadOptions {
  /** Caller KV puts committed in the requeue's transaction. */
  readonly kvWrites?: readonly (readonly [Uint8Array, Uint8Array])[];
  /** The requeue (and its puts) happens only while this caller-KV key is absent; else CONFLICT (reason `kv_exists`). */
  readonly unlessKvExists?: Uint8Array;
}

const REQUEUE_DEAD_OPTION_NAMES = optionNames<RequeueDeadOptions>({ kvWrites: true, unlessKvExists: true });

export async function requeueDeadJob(ctx: QueueContext, idOrRecord: string | JobRecord, options: RequeueDeadOptions = {}): Promise<void> {
  ctx.checkOpen();
  checkOptions(options, REQUEUE_DEAD_OPTION_NAMES, 'requeueDeadJob options', 'INVALID_ARGUMENT');
  const id = typeof idOrRecord === 'string' ? idOrRecord : idOrRecord?.id;
  validateLookupId(id);
  await runTransaction(ctx.db, async (s) => {
    const found = await locate(s, id);
    if (!found) throw new NotFoundError(`job not found. id=${id}`, { id });
    if (spaceOfKey(found.key) !== 'dead') {
      throw new InvalidArgumentError(`job is not dead. id=${id} status=${found.record.status}`, { id, status: found.record.status, reason: 'invalid_state' });
    }
    if (options.unlessKvExists !== undefined && (await s.get(userKey(options.unlessKvExists))) !== undefined) {
      throw new ConflictError(`the caller-KV key this requeue depends on exists. id=${id}`, { id, reason: 'kv_exists' });
    }
    for (const [k, v] of options.kvWrites ?? []) s.put(userKey(k), v);
    // Checked inside the transaction, so the record checked is the record requeued.
    await assertPayloadReadable(ctx, found.record);
    const now = ctx.clock.now();
    const next = withChanges(found.record, { status: 'pending', attempts: 0, interruptions: 0, cancelRequested: false, requeuedAt: now }, ['lastError', 'claimedAt', 'failedAt', 'runAt']);
    s.delete(found.key);
    const key = s.putRecord(next);
    s.appendHistory(id, { ...attemptEntry(next, now, 'requeued'), attempt: 0 });
    s.count(next.queue, 'dead', -1);
    s.count(next.queue, 'pending', 1);
    s.afterCommit(() => notePendingInserts(ctx, next.queue, key));
  });
}

/**
 * Deletes a dead job: its record, index and history in one durable transaction, then (after the
 * commit, best effort) its payload object, whatever state that object is in. Resolves true once
 * durable, false when the job is already gone (deleted, or swept by retention). Throws
 * INVALID_ARGUMENT when the job is not dead (cancel a waiting job instead).
 */
export async function deleteDeadJob(ctx: QueueContext, idOrRecord: string | JobRecord): Promise<boolean> {
  ctx.checkOpen();
  const id = typeof idOrRecord === 'string' ? idOrRecord : idOrRecord?.id;
  validateLookupId(id);
  return runTransaction(ctx.db, async (s) => {
    const found = await locate(s, id);
    if (!found) return false;
    if (spaceOfKey(found.key) !== 'dead') {
      throw new InvalidArgumentError(`job is not dead. id=${id} status=${found.record.status}`, { id, status: found.record.status, reason: 'invalid_state' });
    }
    const { key, record } = found;
    s.delete(key);
    s.delete(jobIndexKey(id));
    s.delete(historyKey(id));
    s.count(record.queue, 'dead', -1);
    s.afterCommit(() => ctx.payloads.deleteQuietly(record.payloadRef));
    return true;
  });
}
