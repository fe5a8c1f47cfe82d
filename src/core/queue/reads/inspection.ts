/**
 * Read-only views shared by `Queue` and `QueueReader`: stats from merged counters, queue list,
 * job lookup, paged listings by state, dead jobs, attempt history. Payloads are materialised;
 * a job whose payload object is missing or corrupt comes back flagged (`payloadError`, empty
 * `payload`) rather than failing the read, so the dead-letter list always shows the broken job.
 */
import { prefixEnd, startsWith } from '../../bytes.js';
import { InvalidArgumentError } from '../../errors.js';
import type { KvReadable } from '../../kv/types.js';
import { decodeAttempts, type JobAttempt } from '../records/attempt-history.js';
import { decodeJobRecord } from '../records/job-record-codec.js';
import type { JobRecord, JobStatus } from '../records/job-record.js';
import {
  claimedQueuePrefix,
  deadKey,
  deadQueuePrefix,
  historyKey,
  jobIndexKey,
  parseStatsKey,
  pendingQueuePrefix,
  spacePrefix,
  STATS_PREFIX,
  statsKey,
  statsQueuePrefix,
} from '../records/keys.js';
import { decodeI64Number } from '../records/merge-operator.js';
import { isPayloadMissing, payloadErrorOf, type PayloadOffload } from '../storage/payload-offload.js';
import { validateCount, validateLookupId, validateQueueName } from '../records/validation.js';

/** Live counts per state, except `done`, which is cumulative (retention never decrements it). */
export interface QueueStats {
  readonly queue: string;
  readonly pending: number;
  readonly claimed: number;
  readonly done: number;
  readonly dead: number;
  readonly scheduled: number;
}

/** One page of jobs; the listing is exhausted only when `nextCursor` is undefined. */
export interface JobPage {
  readonly jobs: JobRecord[];
  readonly nextCursor: Uint8Array | undefined;
}

export interface ListJobsOptions {
  /** `nextCursor` of the previous page. */
  readonly cursor?: Uint8Array;
  /** Page size (default 100). 0 ⇒ an empty page. */
  readonly limit?: number;
}

/** Where inspection reads from. `recheck` (writer only) confirms a removal when a payload is missing. */
export interface InspectionSource {
  readonly reader: KvReadable;
  readonly payloads: PayloadOffload;
  readonly recheck?: KvReadable;
}

const STATUSES: readonly JobStatus[] = ['pending', 'scheduled', 'claimed', 'done', 'dead'];

export async function queueStats(reader: KvReadable, queue: string): Promise<QueueStats> {
  validateQueueName(queue);
  const [pending, claimed, done, dead, scheduled] = await Promise.all(
    (['pending', 'claimed', 'done', 'dead', 'scheduled'] as const).map(async (m) => decodeI64Number(await reader.get(statsKey(queue, m)))),
  );
  return { queue, pending, claimed, done, dead, scheduled };
}

/** Every queue that ever had a counter written (never shrinks), sorted by name. */
export async function listQueues(reader: KvReadable): Promise<string[]> {
  const out: string[] = [];
  let start: Uint8Array | undefined;
  for (;;) {
    let found: string | undefined;
    for await (const entry of reader.scan({ prefix: STATS_PREFIX, start, limit: 1 })) found = parseStatsKey(entry.key).queue;
    if (found === undefined) return out.sort();
    out.push(found);
    // Skip the rest of this queue's counters.
    start = prefixEnd(statsQueuePrefix(found));
    if (start === undefined) return out.sort();
  }
}

/**
 * Materialises a record's payload. When the object is missing and a `recheck` reader is given, a
 * job whose index is gone raced a removal (undefined). Otherwise a missing or corrupt object
 * gives the record with an empty payload and `payloadError`; store errors are thrown.
 */
async function materialize(source: InspectionSource, record: JobRecord): Promise<JobRecord | undefined> {
  try {
    return await source.payloads.materialize(record);
  } catch (e) {
    if (isPayloadMissing(e) && source.recheck && (await source.recheck.get(jobIndexKey(record.id))) === undefined) return undefined;
    const payloadError = payloadErrorOf(e);
    if (payloadError === undefined) throw e;
    return { ...record, payload: new Uint8Array(0), payloadError };
  }
}

export async function getJob(source: InspectionSource, id: string): Promise<JobRecord | undefined> {
  validateLookupId(id);
  const key = await source.reader.get(jobIndexKey(id));
  if (key === undefined) return undefined;
  const raw = await source.reader.get(key);
  if (raw === undefined) return undefined;
  return materialize(source, decodeJobRecord(raw));
}

/**
 * Jobs of `queue` in `status`, paged, in the order of the state's key space: pending in claim
 * order, scheduled by run_at, claimed and dead by id, done by completion time (kept records only).
 */
export async function listJobs(source: InspectionSource, queue: string, status: JobStatus, options: ListJobsOptions = {}): Promise<JobPage> {
  validateQueueName(queue);
  if (!STATUSES.includes(status)) throw new InvalidArgumentError(`unknown job status. status=${String(status)}`, { status: String(status) });
  const limit = options.limit ?? 100;
  validateCount(limit, 'limit');
  const cursor = options.cursor;
  if (cursor !== undefined && !(cursor instanceof Uint8Array)) throw new InvalidArgumentError('list cursor must be a Uint8Array');
  const global = status === 'scheduled' || status === 'done';
  const prefix =
    status === 'pending' ? pendingQueuePrefix(queue) : status === 'claimed' ? claimedQueuePrefix(queue) : status === 'dead' ? deadQueuePrefix(queue) : spacePrefix(status);
  if (limit === 0 || (cursor !== undefined && !startsWith(cursor, prefix))) return { jobs: [], nextCursor: undefined };
  const rows: { key: Uint8Array; record: JobRecord }[] = [];
  let more = false;
  for await (const entry of source.reader.scan({ prefix, start: cursor, startExclusive: cursor !== undefined, limit: global ? undefined : limit + 1 })) {
    const record = decodeJobRecord(entry.value);
    if (global && record.queue !== queue) continue;
    if (rows.length === limit) {
      more = true;
      break;
    }
    rows.push({ key: entry.key, record });
  }
  const jobs: JobRecord[] = [];
  for (const row of rows) {
    const job = await materialize(source, row.record);
    if (job) jobs.push(job);
  }
  return { jobs, nextCursor: more ? rows[rows.length - 1].key : undefined };
}

/** Dead jobs of `queue` in id order, after `afterId` (exclusive). Same rows as listJobs(dead). */
export async function deadJobs(source: InspectionSource, queue: string, afterId: string | undefined, limit: number): Promise<JobRecord[]> {
  validateQueueName(queue);
  if (afterId !== undefined) validateLookupId(afterId);
  const page = await listJobs(source, queue, 'dead', { cursor: afterId === undefined ? undefined : deadKey(queue, afterId), limit });
  return page.jobs;
}

/** Attempt history in write order; empty once the job's last record is gone. */
export async function attemptHistory(reader: KvReadable, id: string): Promise<JobAttempt[]> {
  validateLookupId(id);
  return decodeAttempts(await reader.get(historyKey(id)));
}

