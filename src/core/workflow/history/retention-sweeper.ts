/**
 * Memo retention. With `memoRetentionMs` set, every terminating settlement writes a marker
 * `workflow/terminals/{ts}/{run}` in its own transaction (so a marker exists exactly when the
 * termination committed), and this sweep clears the memo and replay entries of runs whose marker
 * is older than the window.
 *
 * Sweep pass:
 * 1. cutoff = now − retention (runtime clock).
 * 2. Scan markers oldest first (the timestamp leads the key).
 * 3. A malformed marker (or one with an invalid run id) is deleted without clearing anything.
 * 4. The first marker with ts ≥ cutoff ends the pass (strict: a marker exactly one window old
 *    is kept until the next pass).
 * 5. Otherwise clear the run's entries, then delete the marker; a failed clear keeps the marker
 *    for the next pass and the pass moves on.
 * Deleting an entry an executing run might read is safe by design: every memo reader treats an
 * absent entry as "do the work again".
 *
 * Finished-run retention (finished-runs.ts) works the same way over its own index,
 * `workflow/ended/{q}/{ts}/{run}`, one runtime's queue at a time. Pass, in batches of at most
 * `FINISHED_BATCH` index entries:
 * 1. cutoff = now − retention; scan the index from its start (each batch deletes what it read).
 * 2. A malformed entry is dropped; the first entry with ts ≥ cutoff ends the pass (strict, as above).
 * 3. For each expired entry, read the record: it is deleted only if it still is the one that
 *    entry indexes (same end time), by compare-and-delete, so a run submitted again under the id
 *    that ended meanwhile keeps its new record. An undecodable record is deleted too (no read can
 *    use it) and logged.
 * 4. Then the batch's index entries go in one transaction. A crash between 3 and 4 leaves entries
 *    whose records are gone; the next pass drops them.
 */
import type { RuntimeContext } from '../context.js';
import { validateRunId } from '../validation.js';
import { endedIndexPrefix, finishedRunKey, parseEndedIndexKey, parseTerminalMarkerKey, TERMINALS_PREFIX } from '../keys.js';
import { utf8 } from '../../bytes.js';
import { showKey } from '../../show.js';
import { decodeFinishedRun } from '../records.js';

const PAGE = 100;
/** Index entries handled per batch of a finished-run sweep (one index-deleting transaction each). */
export const FINISHED_BATCH = 100;
/** Longest wait between two finished-run sweeps, so a record outlives its window by at most this. */
export const FINISHED_SWEEP_INTERVAL_MAX_MS = 3_600_000;

/** One sweep pass. Returns the number of runs whose entries were cleared. */
export async function sweepExpiredMemos(ctx: RuntimeContext, retentionMs: number): Promise<number> {
  const cutoff = ctx.clock.now() - retentionMs;
  const prefix = utf8(TERMINALS_PREFIX);
  let cursor: Uint8Array | undefined;
  let cleared = 0;
  for (;;) {
    const page = await ctx.queue.kvScan(prefix, { cursor, limit: PAGE });
    for (const [key] of page.entries) {
      const marker = parseTerminalMarkerKey(key);
      let valid = marker !== undefined;
      if (marker) {
        try {
          validateRunId(marker.runId);
        } catch {
          valid = false;
        }
      }
      if (!marker || !valid) {
        ctx.warn(`deleting a malformed terminal marker. key=${new TextDecoder().decode(key)}`);
        await ctx.queue.kvDelete(key);
        continue;
      }
      if (marker.terminatedAtMs >= cutoff) return cleared;
      try {
        await ctx.memo.clearMemosForRun(marker.runId);
      } catch (e) {
        ctx.warn(`clearing the memo of an expired run failed; keeping its marker. runId=${marker.runId}`, e);
        continue;
      }
      await ctx.queue.kvDelete(key);
      cleared++;
    }
    if (page.nextCursor === undefined) return cleared;
    cursor = page.nextCursor;
  }
}

/**
 * Runs `pass` at once (work left by an earlier process), then every `intervalMs`, until `stop`;
 * a failed pass is logged as `what` and tried again at the next interval.
 */
export async function runPeriodically(ctx: RuntimeContext, intervalMs: number, stop: AbortSignal, what: string, pass: () => Promise<unknown>): Promise<void> {
  while (!stop.aborted) {
    try {
      await pass();
    } catch (e) {
      if (stop.aborted) return;
      ctx.warn(`${what} failed`, e);
    }
    try {
      await ctx.clock.sleep(intervalMs, stop);
    } catch {
      return;
    }
  }
}

function isValidRunId(runId: string): boolean {
  try {
    validateRunId(runId);
    return true;
  } catch {
    return false;
  }
}

/**
 * One finished-run sweep pass of the runtime's queue (see the module comment). Returns the
 * number of records deleted; 0 at once for an infinite retention. Rejects with CLOSED or store
 * errors (the next pass resumes where this one stopped).
 */
export async function sweepExpiredFinishedRuns(ctx: RuntimeContext, retentionMs: number): Promise<number> {
  if (!Number.isFinite(retentionMs) || retentionMs <= 0) return 0;
  const cutoff = ctx.clock.now() - retentionMs;
  const prefix = endedIndexPrefix(ctx.queueName);
  let removed = 0;
  for (;;) {
    const page = await ctx.queue.kvScan(prefix, { limit: FINISHED_BATCH });
    const drop: Uint8Array[] = [];
    const expired: { runId: string; endedAtMs: number }[] = [];
    let reachedCutoff = false;
    for (const [key] of page.entries) {
      const entry = parseEndedIndexKey(ctx.queueName, key);
      if (!entry || !isValidRunId(entry.runId)) {
        ctx.warn(`deleting a malformed finished-run index entry. key=${showKey(key)}`);
        drop.push(key);
        continue;
      }
      if (entry.endedAtMs >= cutoff) {
        reachedCutoff = true;
        break;
      }
      drop.push(key);
      expired.push(entry);
    }
    const deleted = await Promise.all(expired.map((entry) => deleteRecordOf(ctx, entry.runId, entry.endedAtMs)));
    removed += deleted.filter(Boolean).length;
    if (drop.length > 0) await ctx.queue.commitEffects({ kvDeletes: drop });
    if (reachedCutoff || page.nextCursor === undefined) return removed;
  }
}

/** Step 3 for one entry: true when its record was deleted. */
async function deleteRecordOf(ctx: RuntimeContext, runId: string, endedAtMs: number): Promise<boolean> {
  const key = finishedRunKey(ctx.queueName, runId);
  const bytes = await ctx.queue.kvGet(key);
  if (bytes === undefined) return false;
  let recordEnded: number | undefined;
  try {
    recordEnded = decodeFinishedRun(bytes).endedAtMs;
  } catch (e) {
    ctx.warn(`deleting an undecodable finished-run record. runId=${runId}`, e);
  }
  if (recordEnded !== undefined && recordEnded !== endedAtMs) return false;
  return ctx.queue.kvCompareDelete(key, bytes);
}

/** How often a retention sweep runs: min(retention, 1 hour). */
export function sweepIntervalFor(retentionMs: number): number {
  return Math.min(retentionMs, FINISHED_SWEEP_INTERVAL_MAX_MS);
}
