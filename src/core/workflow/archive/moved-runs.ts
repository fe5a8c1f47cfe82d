/**
 * Moved runs. A hand-off (export-run.ts) ends a run's life in its source store without ending the
 * run: the settlement that takes its step job out also writes `workflow/moved/{q}/{run}`, where
 * it went. It is not a finished-run record (no outcome, no terminal hook, no notification: the
 * run goes on elsewhere), so `FinishedRun` and `TerminalStatus` stay as they are; the reads that
 * answer for ended runs consult both records and answer with the newer one: `readStatus(id,
 * { includeFinished: true })` says `{ state: 'moved', movedTo }`, `result(id)` rejects with
 * NOT_FOUND (reason `run_moved`, `movedTo`).
 *
 * The record stays until the id moves again or is deleted by hand; a later run under the id that
 * ends here writes a newer finished-run record, which then wins.
 *
 * Delivery: the source cannot see the import happen elsewhere, so whoever carried the archive
 * (the page's `client.handOff`) confirms it here once the destination answered
 * (`confirmMovedRunDelivery`, a `deliveredAtMs` on the record). A moved record without it is a
 * hand-off still to deliver: after a reload the page lists them (`listMovedRuns`), asks the
 * archive again (a hand-off export of a moved run answers the kept one) and imports it, which the
 * destination answers once per archive.
 */
import { decodeKindRecord, encodeKindRecord, malformedField } from '../../kind-records.js';
import { fromUtf8 } from '../../bytes.js';
import { NotFoundError } from '../../errors.js';
import type { RunStatus } from '../registry.js';
import { movedRunKey, movedRunPrefix } from '../keys.js';
import { readFinishedRun, type FinishedRun } from '../history/finished-runs.js';
import type { WorkflowReadSource } from '../history/inspection.js';
import type { Queue } from '../../queue/index.js';

const KIND = 'run-moved';
const FORMAT = 1;

/** Where a handed-off run went. */
export interface MovedRun {
  readonly runId: string;
  /** The step it had reached. */
  readonly step: number;
  readonly movedAtMs: number;
  /** The destination the hand-off named (`to`), or null. */
  readonly movedTo: string | null;
  /** The archive it left with (kept with the run's memo entries until they are swept). */
  readonly archiveId: string;
  /** When the carrier of the archive confirmed the destination imported it (`confirmMovedRunDelivery`); null until then. */
  readonly deliveredAtMs: number | null;
}

export function encodeMovedRun(m: Omit<MovedRun, 'deliveredAtMs'> & { readonly deliveredAtMs?: number | null }): Uint8Array {
  // A field added to format 1: a reader that predates it ignores it, and its absence reads as null.
  const delivered = m.deliveredAtMs === undefined || m.deliveredAtMs === null ? {} : { deliveredAtMs: m.deliveredAtMs };
  return encodeKindRecord(KIND, FORMAT, { step: m.step, movedAtMs: m.movedAtMs, movedTo: m.movedTo, archiveId: m.archiveId, ...delivered });
}

function decodeMovedRun(runId: string, bytes: Uint8Array, key: string): MovedRun {
  const body = decodeKindRecord(bytes, key, KIND, FORMAT, 'moved-run record');
  const count = (f: string): number => {
    const v = body[f];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw malformedField(KIND, key, f);
    return v;
  };
  const movedTo = body.movedTo ?? null;
  if (movedTo !== null && typeof movedTo !== 'string') throw malformedField(KIND, key, 'movedTo');
  if (typeof body.archiveId !== 'string') throw malformedField(KIND, key, 'archiveId');
  const deliveredAtMs = body.deliveredAtMs === undefined || body.deliveredAtMs === null ? null : count('deliveredAtMs');
  return { runId, step: count('step'), movedAtMs: count('movedAtMs'), movedTo, archiveId: body.archiveId, deliveredAtMs };
}

/** The moved-run record of `runId` on `queueName`, or null. CORRUPT_DATA for an undecodable one. */
export async function readMovedRun(source: Pick<WorkflowReadSource, 'kvGet'>, queueName: string, runId: string): Promise<MovedRun | null> {
  const key = movedRunKey(queueName, runId);
  const bytes = await source.kvGet(key);
  return bytes === undefined ? null : decodeMovedRun(runId, bytes, fromUtf8(key));
}

/** One page of the moved-run records of the runtime on `queueName`, in run-id order. CORRUPT_DATA for an undecodable one. */
export async function listMovedRuns(
  source: Pick<WorkflowReadSource, 'kvScan'>,
  queueName: string,
  options: { readonly cursor?: Uint8Array; readonly limit?: number } = {},
): Promise<{ readonly runs: MovedRun[]; readonly nextCursor: Uint8Array | undefined }> {
  const prefix = movedRunPrefix(queueName);
  const page = await source.kvScan(prefix, { ...(options.cursor === undefined ? {} : { cursor: options.cursor }), limit: options.limit ?? 100 });
  const runs = page.entries.map(([key, value]) => {
    const name = fromUtf8(key);
    return decodeMovedRun(fromUtf8(key.subarray(prefix.length)), value, name);
  });
  return { runs, nextCursor: page.nextCursor };
}

/**
 * Records that the hand-off of `runId` with archive `archiveId` was delivered (imported at its
 * destination), with a compare-and-put on the moved record: true when the record of that archive
 * says so now (also when it did already), false when there is no moved record of that archive
 * (never moved, moved again since, or swept). CORRUPT_DATA for an undecodable record.
 */
export async function confirmMovedRunDelivery(
  queue: Pick<Queue, 'kvGet' | 'kvComparePut'>,
  queueName: string,
  runId: string,
  archiveId: string,
  atMs: number,
): Promise<boolean> {
  const key = movedRunKey(queueName, runId);
  for (;;) {
    const bytes = await queue.kvGet(key);
    if (bytes === undefined) return false;
    const moved = decodeMovedRun(runId, bytes, fromUtf8(key));
    if (moved.archiveId !== archiveId) return false;
    if (moved.deliveredAtMs !== null) return true;
    // Lost only to a write of the same record in between (another confirmation, a new move): read again.
    if (await queue.kvComparePut(key, bytes, encodeMovedRun({ ...moved, deliveredAtMs: atMs }))) return true;
  }
}

/** How a run that is not active here ended here: finished, moved away (the newer record wins), or null. */
export type RunEnding = { readonly type: 'finished'; readonly run: FinishedRun } | { readonly type: 'moved'; readonly moved: MovedRun };

export async function readRunEnding(source: Pick<WorkflowReadSource, 'kvGet'>, queueName: string, runId: string): Promise<RunEnding | null> {
  const [finished, moved] = await Promise.all([readFinishedRun(source, queueName, runId), readMovedRun(source, queueName, runId)]);
  if (moved !== null && (finished === null || moved.movedAtMs >= finished.endedAtMs)) return { type: 'moved', moved };
  return finished === null ? null : { type: 'finished', run: finished };
}

/** The `readStatus(id, { includeFinished: true })` answer for a run that is not active here. */
export async function readEndedStatus(source: Pick<WorkflowReadSource, 'kvGet'>, queueName: string, runId: string): Promise<RunStatus | null> {
  const ending = await readRunEnding(source, queueName, runId);
  if (ending === null) return null;
  if (ending.type === 'moved') return { runId, state: 'moved', currentStep: ending.moved.step, movedTo: ending.moved.movedTo };
  return { runId, state: ending.run.status, currentStep: ending.run.finalStep };
}

/** NOT_FOUND (reason `run_moved`): the run was handed off from this store. */
export function movedAway(moved: MovedRun): NotFoundError {
  const where = moved.movedTo === null ? '' : ` movedTo=${moved.movedTo}`;
  return new NotFoundError(`the run was handed off to another store and continues there. runId=${moved.runId}${where} archiveId=${moved.archiveId}`, {
    reason: 'run_moved',
    runId: moved.runId,
    movedTo: moved.movedTo,
    archiveId: moved.archiveId,
  });
}
