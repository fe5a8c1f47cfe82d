/**
 * Rate limits per key: at most `limit` runs of a key start in any window of `periodMs`. A
 * submission over the limit is not refused: its step 0 is scheduled for the earliest time that
 * keeps the limit, and never before the key's previous start, so runs start in submission order.
 *
 * State (keys.ts `rate/{k}`): the key's last `limit` start times, as `[time, count]` pairs.
 * A new start s must leave every window of `periodMs` with at most `limit` starts; starts never
 * go back, so that is s ≥ (the `limit`-th latest start) + periodMs. Read, computed and written
 * with the submission's commit under the key's lock (flow-locks.ts), so a crash never loses a
 * start that was scheduled nor records one that was not. The limit and period are the latest
 * submission's.
 *
 * Sweep: the record also keeps `until`, its last start plus that period; from then on no start it
 * holds is within a period of now, so it binds nothing (`nextStart` would drop every start) and a
 * background pass of the running runtime deletes it (`sweepExpiredRateLimits`), under the key's
 * lock and after reading it again, so a start recorded meanwhile is never lost. A key used again
 * later starts from an empty record, which is what it would have computed anyway.
 */
import { fromUtf8 } from '../../bytes.js';
import type { RuntimeContext } from '../context.js';
import { flowRateKey } from '../keys.js';
import type { RateLimit } from './flow-options.js';
import { withFlowLock } from './flow-locks.js';
import { decodeRateStarts, encodeRateStarts } from './flow-records.js';
import type { Admission } from './new-run.js';

/**
 * The start of the next run of a key whose last starts are `starts` (flat `[time, count]` pairs,
 * oldest first), at `now`, and the starts to keep after it.
 */
export function nextStart(starts: readonly number[], limit: number, periodMs: number, now: number): { start: number; starts: number[] } {
  // Starts a full period ago no longer bound anything.
  const kept: number[] = [];
  for (let i = 0; i < starts.length; i += 2) if (starts[i]! > now - periodMs) kept.push(starts[i]!, starts[i + 1]!);
  let start = Math.max(now, kept.length > 0 ? kept[kept.length - 2]! : now);
  // The limit-th latest start: the new one must come a period after it.
  let seen = 0;
  for (let i = kept.length - 2; i >= 0; i -= 2) {
    seen += kept[i + 1]!;
    if (seen >= limit) {
      start = Math.max(start, kept[i]! + periodMs);
      break;
    }
  }
  if (kept.length > 0 && kept[kept.length - 2] === start) kept[kept.length - 1]!++;
  else kept.push(start, 1);
  // Only the last `limit` starts can bind a later one.
  let excess = kept.reduce((n, v, i) => (i % 2 === 1 ? n + v : n), 0) - limit;
  while (excess > 0) {
    const drop = Math.min(excess, kept[1]!);
    kept[1]! -= drop;
    excess -= drop;
    if (kept[1] === 0) kept.splice(0, 2);
  }
  return { start, starts: kept };
}

/**
 * Runs `admit` under the rate limit `r`'s lock with what it decided: the run's start time (none
 * when it may start now) and the key's record, to commit with the run.
 */
export function withRateLimit<T>(ctx: RuntimeContext, r: RateLimit, admit: (admission: Admission) => Promise<T>): Promise<T> {
  const key = flowRateKey(ctx.queueName, r.key);
  return withFlowLock(ctx.queue, ctx.queueName, 'rate', r.key, async () => {
    const bytes = await ctx.queue.kvGet(key);
    const now = Math.floor(ctx.clock.now());
    const next = nextStart(bytes === undefined ? [] : decodeRateStarts(bytes).starts, r.limit, r.periodMs, now);
    const record = encodeRateStarts({ starts: next.starts, until: next.start + r.periodMs });
    return admit({ ...(next.start > now ? { runAt: next.start } : {}), writes: [[key, record]] });
  });
}

/** How often a running runtime looks for rate-limit records that bind nothing any more. */
export const RATE_SWEEP_INTERVAL_MS = 5 * 60_000;

const SWEEP_PAGE = 500;

/**
 * Deletes the rate-limit records of the runtime's queue whose `until` has passed (see the module
 * comment), each under its key's lock after reading it again. Resolves with how many went. A
 * record that does not decode is left (and named in a warning): its key's next submission reports
 * it. Rejects with CLOSED or store errors.
 */
export async function sweepExpiredRateLimits(ctx: RuntimeContext): Promise<number> {
  const prefix = flowRateKey(ctx.queueName, '');
  const prefixLength = prefix.length;
  const expired = (bytes: Uint8Array | undefined): boolean => {
    const until = bytes === undefined ? undefined : decodeRateStarts(bytes).until;
    return until !== undefined && until <= ctx.clock.now();
  };
  let swept = 0;
  let cursor: Uint8Array | undefined;
  do {
    const page = await ctx.queue.kvScan(prefix, { limit: SWEEP_PAGE, ...(cursor === undefined ? {} : { cursor }) });
    for (const [key, value] of page.entries) {
      try {
        if (!expired(value)) continue;
      } catch (e) {
        ctx.warn('rate-limit record does not decode; left for its key to report', { key: fromUtf8(key), error: (e as Error)?.message });
        continue;
      }
      const name = decodeURIComponent(fromUtf8(key.subarray(prefixLength)));
      await withFlowLock(ctx.queue, ctx.queueName, 'rate', name, async () => {
        // A submission may have recorded a start since the scan.
        if (!expired(await ctx.queue.kvGet(key))) return;
        await ctx.queue.commitEffects({ kvDeletes: [key] });
        swept++;
      });
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return swept;
}
