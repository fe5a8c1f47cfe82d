/**
 * Promotion of due scheduled jobs (future-dated enqueues and nack backoff) to Pending. The
 * Scheduled space leads with run_at, so one global scan stops at the first job not yet due. Each
 * job moves in its own non-durable transaction that first re-checks that its key still exists
 * (a wake, cancel or earlier promotion may have moved it); a lost promotion is redone next tick.
 */
import { decodeJobRecord } from '../records/job-record-codec.js';
import { withChanges } from '../records/job-record.js';
import { spacePrefix, timeBound } from '../records/keys.js';
import { notePendingInserts, type QueueContext } from '../queue-context.js';
import { runTransaction } from '../storage/staged-txn.js';

const PAGE = 256;

/** One promotion sweep. Returns how many jobs became pending. */
export async function promoteDueJobs(ctx: QueueContext): Promise<number> {
  let promoted = 0;
  let after: Uint8Array | undefined;
  for (;;) {
    const now = ctx.clock.now();
    const due: Uint8Array[] = [];
    for await (const entry of ctx.db.scan({
      prefix: spacePrefix('scheduled'),
      start: after,
      startExclusive: after !== undefined,
      end: timeBound('scheduled', now + 1),
      limit: PAGE,
    })) {
      due.push(entry.key);
    }
    if (due.length === 0) return promoted;
    after = due[due.length - 1];
    for (const key of due) {
      await runTransaction(
        ctx.db,
        async (s) => {
          const raw = await s.get(key);
          if (raw === undefined) return;
          const stored = decodeJobRecord(raw);
          s.delete(key);
          const pendingKey = s.putRecord(withChanges(stored, { status: 'pending' }, ['runAt']));
          s.count(stored.queue, 'scheduled', -1);
          s.count(stored.queue, 'pending', 1);
          s.afterCommit(() => {
            promoted++;
            notePendingInserts(ctx, stored.queue, pendingKey);
          });
        },
        { durable: false },
      );
    }
  }
}
