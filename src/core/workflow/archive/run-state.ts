/**
 * Every record of one active run, read for its archive: the run record and step pointer, the
 * current step job, the workflow function's history (all generations), the signals buffered for
 * it, the signal consumed for its current step, its memo and step-output objects, and the
 * caller-KV keys the export names. Where each lives is in keys.ts.
 *
 * Reads go through a `WorkflowReadSource` (the writer's `Queue` or a `QueueReader`) and the
 * object store, so a copy can be exported beside a live writer (`taquba export`).
 */
import { fromUtf8 } from '../../bytes.js';
import type { JobRecord } from '../../queue/index.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { HEADER_SIGNAL_DELIVERED, HEADER_SIGNAL_WAIT } from '../constants.js';
import { memoRunPrefix, signalBufferKey, signalDeliveredKey, signalWaitKey, stepOutputRunPrefix, stepPointerKey, parseMemoObjectName } from '../keys.js';
import { decodeRunRecord, decodeStepPointer } from '../records.js';
import { userHeaders } from '../steps/step-headers.js';
import { decodeEnvelope } from '../functions/envelope.js';
import { decodeEvent, runHistoryPrefix } from '../functions/history.js';
import { PARENT_RUN_HEADER } from '../functions/children.js';
import type { WorkflowReadSource } from '../history/inspection.js';
import type { ArchivedEntry, ArchivedStep, RunArchive } from './archive-format.js';

/** What the reads need: caller KV and jobs. */
export type ArchiveReadSource = Pick<WorkflowReadSource, 'kvGet' | 'kvScan' | 'getJob'>;

/** Where a runtime keeps its state. */
export interface RunLocation {
  readonly queueName: string;
  readonly memoPrefix: string;
}

/** A run's records as read, with the full keys a hand-off deletes. */
export interface RunState {
  /** The archive's content, without its id, time and hand-off fields. */
  readonly content: Omit<RunArchive, 'archiveId' | 'exportedAtMs' | 'handOff' | 'to'>;
  readonly recordBytes: Uint8Array;
  readonly pointerBytes: Uint8Array;
  /** Caller-KV keys of the run's own state besides record and pointer (history, signals, delivered record). */
  readonly runKeys: Uint8Array[];
  /** The signal-wait index of the waited key, when it names this step's job. */
  readonly waitIndex: { readonly key: Uint8Array; readonly value: Uint8Array } | undefined;
  /** Children the function still waits for (`invoke` without an outcome). */
  readonly pendingChildren: string[];
  /** Whether the run is a child of another run (`ctx.invoke`). */
  readonly isChild: boolean;
}

async function scanAll(source: ArchiveReadSource, prefix: Uint8Array): Promise<(readonly [Uint8Array, Uint8Array])[]> {
  const out: (readonly [Uint8Array, Uint8Array])[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const page = await source.kvScan(prefix, { cursor, limit: 1000 });
    out.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return out;
}

/** Objects under `prefix` (as stored), paths relative to it, skipping what `keep` refuses. */
async function objectsUnder(store: ObjectStore, prefix: string, keep: (tail: string) => boolean): Promise<ArchivedEntry[]> {
  const out: ArchivedEntry[] = [];
  for await (const info of store.list(prefix)) {
    const tail = info.key.slice(prefix.length);
    if (!keep(tail)) continue;
    const obj = await store.get(info.key);
    // Swept between the listing and the read.
    if (obj !== undefined) out.push([tail, obj.data]);
  }
  return out;
}

/** A run whose function payload is an envelope is a workflow function's run. */
function kindOf(job: JobRecord, runId: string): 'steps' | 'function' {
  try {
    decodeEnvelope(job.payload, runId);
    return 'function';
  } catch {
    return 'steps';
  }
}

const EVENT_TAIL = /^[^/]+\/\d+$/;

/** The children a function history invoked whose outcome it has not recorded yet. */
function pendingChildrenOf(history: readonly ArchivedEntry[]): string[] {
  const pending: string[] = [];
  for (const [tail, value] of history) {
    if (!EVENT_TAIL.test(tail)) continue;
    try {
      const event = decodeEvent(value, tail);
      if (event.kind === 'invoke' && event.value === undefined) pending.push(event.childRunId);
    } catch {
      // An undecodable entry travels as it is; its replay reports it.
    }
  }
  return pending;
}

/** The step as an archive keeps it; a claimed (running) step's in-flight try is given back. */
function archivedStep(job: JobRecord, step: number): ArchivedStep {
  const claimed = job.status === 'claimed';
  return {
    number: step,
    jobId: job.id,
    payload: job.payload,
    headers: userHeaders(job.headers),
    signalWait: job.headers[HEADER_SIGNAL_WAIT] ?? null,
    signalDelivered: job.headers[HEADER_SIGNAL_DELIVERED] !== undefined,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    attempts: claimed ? Math.max(0, job.attempts - 1) : job.attempts,
    interruptions: job.interruptions,
    runAt: job.status === 'scheduled' ? (job.runAt ?? null) : null,
    woken: job.wokenAt === undefined ? null : { atMs: job.wokenAt, payload: job.wakePayload ?? null },
    lastError: job.lastError ?? null,
    deduplicated: job.dedupKey !== undefined,
  };
}

/**
 * Reads the records of run `runId`, active at `step` with `job` and run record `recordBytes`.
 * Undefined when its step pointer no longer names `job` (it moved on: read again).
 */
export async function readRunState(
  source: ArchiveReadSource,
  store: ObjectStore,
  where: RunLocation,
  runId: string,
  active: { readonly step: number; readonly job: JobRecord; readonly record: Uint8Array },
  kvKeys: readonly Uint8Array[],
): Promise<RunState | undefined> {
  const { job, step, record } = active;
  const pointerBytes = await source.kvGet(stepPointerKey(runId));
  if (pointerBytes === undefined || decodeStepPointer(pointerBytes).jobId !== job.id) return undefined;
  const run = decodeRunRecord(record);
  const historyPrefix = runHistoryPrefix(where.queueName, runId);
  const signalPrefix = signalBufferKey(`${runId}#`);
  const waitKey = job.headers[HEADER_SIGNAL_WAIT];
  const deliveredKey = signalDeliveredKey(runId, step);
  const [historyRows, signalRows, delivered, waited, waitIndexValue] = await Promise.all([
    scanAll(source, historyPrefix),
    scanAll(source, signalPrefix),
    source.kvGet(deliveredKey),
    waitKey === undefined || waitKey.startsWith(`${runId}#`) ? undefined : source.kvGet(signalBufferKey(waitKey)),
    waitKey === undefined ? undefined : source.kvGet(signalWaitKey(waitKey)),
  ]);
  const signalBase = signalBufferKey('').length;
  const signals: ArchivedEntry[] = signalRows.map(([k, v]) => [fromUtf8(k.subarray(signalBase)), v]);
  if (waited !== undefined && waitKey !== undefined) signals.push([waitKey, waited]);
  const history: ArchivedEntry[] = historyRows.map(([k, v]) => [fromUtf8(k.subarray(historyPrefix.length)), v]);
  const memoBase = memoRunPrefix(where.memoPrefix, runId);
  const [memos, stepOutputs, kv] = await Promise.all([
    // A kept hand-off archive shares the run's memo folder; it is no memo entry.
    objectsUnder(store, memoBase, (tail) => parseMemoObjectName(tail) !== undefined),
    objectsUnder(store, stepOutputRunPrefix(where.memoPrefix, runId), () => true),
    Promise.all(kvKeys.map(async (key) => [key, await source.kvGet(key)] as const)),
  ]);
  const waitIndex = waitKey !== undefined && waitIndexValue !== undefined && fromUtf8(waitIndexValue) === job.id ? { key: signalWaitKey(waitKey), value: waitIndexValue } : undefined;
  const userKv = kv.filter((pair): pair is readonly [Uint8Array, Uint8Array] => pair[1] !== undefined);
  return {
    content: {
      source: { queueName: where.queueName, runId },
      kind: kindOf(job, runId),
      run: { submittedAtMs: run.submittedAtMs, inputHash: run.inputHash },
      step: archivedStep(job, step),
      history,
      signals,
      delivered: delivered ?? null,
      memos,
      stepOutputs,
      kv: userKv,
    },
    recordBytes: record,
    pointerBytes,
    runKeys: [
      ...historyRows.map(([k]) => k),
      ...signalRows.map(([k]) => k),
      ...(waited === undefined || waitKey === undefined ? [] : [signalBufferKey(waitKey)]),
      ...(delivered === undefined ? [] : [deliveredKey]),
    ],
    waitIndex,
    pendingChildren: pendingChildrenOf(history),
    isChild: job.headers[PARENT_RUN_HEADER] !== undefined,
  };
}
