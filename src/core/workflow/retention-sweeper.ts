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
 */
import type { RuntimeContext } from './context.js';
import { validateRunId } from './validation.js';
import { parseTerminalMarkerKey, TERMINALS_PREFIX } from './keys.js';
import { utf8 } from '../bytes.js';

const PAGE = 100;

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

/** Runs a pass at once (markers left by an earlier process), then one every `retentionMs`, until `stop`. */
export async function runRetentionLoop(ctx: RuntimeContext, retentionMs: number, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    try {
      await sweepExpiredMemos(ctx, retentionMs);
    } catch (e) {
      if (stop.aborted) return;
      ctx.warn('memo retention sweep failed', e);
    }
    try {
      await ctx.clock.sleep(retentionMs, stop);
    } catch {
      return;
    }
  }
}
