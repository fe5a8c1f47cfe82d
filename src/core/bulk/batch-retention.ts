/**
 * Batch retention (reference `batch_retention`): with `batchRetentionMs` set, a batch is forgotten
 * (`Bulk.forget`: item memos, markers, log, manifest) that long after it first ended.
 *
 * Records, in the caller KV beside the batch's own:
 *   workflow/bulk-terminals/<ended at ms:20>/<batch>   a marker, empty (the key says it all)
 *   workflow/bulk/<batch>/ended                       { at: ended at ms, c: the batch's creation ms }
 * When a batch run finishes, both are written in one commit unless `ended` exists for this batch
 * (same creation time): the oldest marker governs, so the window counts from the batch's first end
 * and a later re-run does not extend it. (The markers live outside `workflow/bulk/` so that no
 * batch id can name their prefix; `c` tells a leftover of a forget cut short from this batch.)
 *
 * Sweep pass (at worker start, then every min(retention, 1 h)):
 * 1. cutoff = now − retention (the runtime clock); scan markers oldest first.
 * 2. A malformed marker is deleted. The first marker with ts ≥ cutoff ends the pass (strict: a
 *    marker exactly one window old is kept until the next pass).
 * 3. The batch's `ended` record says when the batch now under that id first ended; another time
 *    (or none) means the marker is stale (the batch was forgotten by hand, maybe submitted again):
 *    delete the marker only. Otherwise forget the batch, then delete the marker. A batch driven
 *    in this process right now keeps its marker for the next pass; another failure is logged and
 *    keeps it too.
 */
import { EMPTY_BYTES, fromUtf8, utf8 } from '../bytes.js';
import type { Clock } from '../clock.js';
import { decodeRecord, encodeRecord } from '../codec.js';
import { isTaqubaError } from '../errors.js';
import type { Queue } from '../queue/index.js';

const MARKERS = 'workflow/bulk-terminals/';
const TS_DIGITS = 20;
/** Longest wait between two sweeps, so a batch outlives its window by at most this. */
export const BATCH_SWEEP_INTERVAL_MAX_MS = 3_600_000;

export const endedKey = (batchId: string): Uint8Array => utf8(`workflow/bulk/${batchId}/ended`);
const markerKey = (endedAtMs: number, batchId: string): Uint8Array => utf8(`${MARKERS}${String(endedAtMs).padStart(TS_DIGITS, '0')}/${batchId}`);

function parseMarker(key: Uint8Array): { endedAtMs: number; batchId: string } | undefined {
  const text = fromUtf8(key).slice(MARKERS.length);
  const match = /^(\d{20})\/([A-Za-z0-9_-]{1,128})$/.exec(text);
  return match ? { endedAtMs: Number(match[1]), batchId: match[2]! } : undefined;
}

/** The `ended` record; undefined fields when it does not decode (it is then replaced or ignored). */
function decodeEnded(bytes: Uint8Array | undefined): { at?: number; createdAtMs?: number } {
  if (bytes === undefined) return {};
  try {
    const r = decodeRecord(bytes) as { at?: unknown; c?: unknown } | null;
    return { ...(typeof r?.at === 'number' ? { at: r.at } : {}), ...(typeof r?.c === 'number' ? { createdAtMs: r.c } : {}) };
  } catch {
    return {};
  }
}

/** A batch run finished: the batch's marker, unless this batch has one (the oldest governs). */
export async function recordBatchEnd(queue: Queue, batchId: string, createdAtMs: number, nowMs: number): Promise<void> {
  if (decodeEnded(await queue.kvGet(endedKey(batchId))).createdAtMs === createdAtMs) return;
  await queue.commitEffects({
    kvWrites: [
      [endedKey(batchId), encodeRecord({ at: nowMs, c: createdAtMs })],
      [markerKey(nowMs, batchId), EMPTY_BYTES],
    ],
  });
}

export interface SweepDeps {
  readonly queue: Queue;
  readonly clock: Clock;
  /** `Bulk.forget`: PRECONDITION_FAILED while the batch is driven here. */
  readonly forget: (batchId: string) => Promise<boolean>;
  readonly warn: (message: string, e?: unknown) => void;
}

/** One sweep pass (see the module comment). Returns the number of batches forgotten. */
export async function sweepExpiredBatches(deps: SweepDeps, retentionMs: number): Promise<number> {
  const { queue, clock, forget, warn } = deps;
  const cutoff = clock.now() - retentionMs;
  let forgotten = 0;
  for await (const key of markerKeys(queue)) {
    const marker = parseMarker(key);
    if (!marker) {
      warn(`deleting a malformed batch retention marker. key=${fromUtf8(key)}`);
      await queue.kvDelete(key);
      continue;
    }
    if (marker.endedAtMs >= cutoff) break;
    if (decodeEnded(await queue.kvGet(endedKey(marker.batchId))).at === marker.endedAtMs) {
      try {
        if (await forget(marker.batchId)) forgotten++;
      } catch (e) {
        if (!isTaqubaError(e, 'PRECONDITION_FAILED')) warn(`forgetting an expired batch failed; keeping its marker. batchId=${marker.batchId}`, e);
        continue;
      }
    }
    await queue.kvDelete(key);
  }
  return forgotten;
}

/** Every marker key, oldest first, page by page. */
async function* markerKeys(queue: Queue): AsyncGenerator<Uint8Array> {
  let cursor: Uint8Array | undefined;
  do {
    const page = await queue.kvScan(utf8(MARKERS), { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    for (const [key] of page.entries) yield key;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

/** Runs a pass at once (batches an earlier process left), then every interval, until `stop`. */
export async function runBatchSweeps(deps: SweepDeps, retentionMs: number, stop: AbortSignal): Promise<void> {
  const interval = Math.min(retentionMs, BATCH_SWEEP_INTERVAL_MAX_MS);
  while (!stop.aborted) {
    try {
      await sweepExpiredBatches(deps, retentionMs);
    } catch (e) {
      if (stop.aborted) return;
      deps.warn('batch retention sweep failed', e);
    }
    try {
      await deps.clock.sleep(interval, stop);
    } catch {
      return;
    }
  }
}
