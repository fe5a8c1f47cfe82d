/**
 * Retention sweeps, run in the reaper tick after lease reaping.
 *
 * Done sweep: the Done space leads with completed_at, so the scan stops at the first key too
 * young for the shortest configured retention; each older record is deleted when its own queue's
 * retention has elapsed (queues without retention keep their records). Dead sweep: the Dead space
 * leads with the queue, so it is scanned whole and each record's failed_at is checked.
 *
 * Each victim is its own non-durable transaction that re-checks its key (a lost delete is redone
 * next tick); a conflict skips the victim until the next tick. The done counter is cumulative and
 * never decremented; the dead counter is. Payload objects are deleted after the commit.
 */
import { isTaqubaError } from '../../errors.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import type { JobRecord } from '../records/job-record.js';
import { historyKey, jobIndexKey, spacePrefix, timeBound } from '../records/keys.js';
import type { QueueContext } from '../queue-context.js';
import { runTransaction } from '../storage/staged-txn.js';

const PAGE = 256;

async function deleteVictim(ctx: QueueContext, key: Uint8Array, space: 'done' | 'dead'): Promise<boolean> {
  try {
    return await runTransaction(
      ctx.db,
      async (s) => {
        const raw = await s.get(key);
        if (raw === undefined) return false;
        const record = decodeJobRecord(raw);
        s.delete(key);
        s.delete(jobIndexKey(record.id));
        s.delete(historyKey(record.id));
        if (space === 'dead') s.count(record.queue, 'dead', -1);
        s.afterCommit(() => ctx.payloads.deleteQuietly(record.payloadRef));
        return true;
      },
      { durable: false, retry: false },
    );
  } catch (e) {
    if (isTaqubaError(e, 'CONFLICT')) return false;
    throw e;
  }
}

function retentionOf(ctx: QueueContext, record: JobRecord, space: 'done' | 'dead'): number | null {
  const config = ctx.configs.get(record.queue);
  return space === 'done' ? config.keepDoneMs : config.deadRetentionMs;
}

/** Sweeps done records past their queue's retention. Returns how many it deleted. */
export async function sweepDone(ctx: QueueContext): Promise<number> {
  const retentions = ctx.configs.all().map((c) => c.keepDoneMs).filter((r): r is number => r !== null);
  if (retentions.length === 0) return 0;
  const now = ctx.clock.now();
  // Nothing completed at or after now − (shortest retention) can be old enough for any queue.
  const end = timeBound('done', now - Math.min(...retentions));
  return sweepSpace(ctx, 'done', end, (r) => r.completedAt ?? 0, now);
}

/** Sweeps dead records past their queue's dead retention. Returns how many it deleted. */
export async function sweepDead(ctx: QueueContext): Promise<number> {
  if (ctx.configs.all().every((c) => c.deadRetentionMs === null)) return 0;
  return sweepSpace(ctx, 'dead', undefined, (r) => r.failedAt ?? 0, ctx.clock.now());
}

async function sweepSpace(ctx: QueueContext, space: 'done' | 'dead', end: Uint8Array | undefined, since: (r: JobRecord) => number, now: number): Promise<number> {
  let deleted = 0;
  let after: Uint8Array | undefined;
  for (;;) {
    const victims: Uint8Array[] = [];
    let scanned = 0;
    for await (const entry of ctx.db.scan({ prefix: spacePrefix(space), start: after, startExclusive: after !== undefined, end, limit: PAGE })) {
      scanned++;
      after = entry.key;
      let record: JobRecord;
      try {
        record = decodeJobRecord(entry.value);
      } catch (e) {
        ctx.logger.warn(`retention skipped an undecodable ${space} record`, e);
        continue;
      }
      const retention = retentionOf(ctx, record, space);
      if (retention !== null && since(record) < now - retention) victims.push(entry.key);
    }
    for (const key of victims) if (await deleteVictim(ctx, key, space)) deleted++;
    if (scanned < PAGE) return deleted;
  }
}
