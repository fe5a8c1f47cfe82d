/**
 * The job record: what is stored under a job's space key and what inspection returns. Stored as a
 * MessagePack map with named fields; optional fields are omitted when empty, and an offloaded
 * record is stored without its payload bytes (`payloadRef` names the object instead).
 */
import { decodeRecord, encodeRecord } from '../codec.js';
import { CorruptDataError } from '../errors.js';
import { claimedKey, deadKey, doneKey, pendingKey, scheduledKey } from './keys.js';

export type JobStatus = 'pending' | 'scheduled' | 'claimed' | 'done' | 'dead';

/** A job as stored and as returned by claims and inspection. Times are epoch ms from the queue clock. */
export interface JobRecord {
  /** Monotonic ULID, or the caller's override. */
  readonly id: string;
  readonly queue: string;
  /** Always materialised on returned records, even when the bytes live in their own object. */
  readonly payload: Uint8Array;
  /** Name of the object holding an offloaded payload. Queue-managed. */
  readonly payloadRef?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly status: JobStatus;
  /** Incremented by every claim; reset to 0 by a dead requeue. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Time of the first enqueue, kept across retries and requeues. */
  readonly enqueuedAt: number;
  /** Time of the most recent claim; cleared when the job goes back to pending or scheduled. */
  readonly claimedAt?: number;
  /** Only while scheduled: when the job becomes claimable. */
  readonly runAt?: number;
  /** Set by `wakeScheduled`. */
  readonly wokenAt?: number;
  /** Attached by `wakeScheduled` (never offloaded). */
  readonly wakePayload?: Uint8Array;
  /** Fixed for the job's life; lower is claimed first. */
  readonly priority: number;
  readonly lastError?: string;
  /** Present only while the job waits (pending or scheduled). */
  readonly dedupKey?: string;
  /** Only on kept done records. */
  readonly completedAt?: number;
  /** When the job entered the dead space; drives dead retention. */
  readonly failedAt?: number;
  /** Set by `cancel` on a claimed job; survives retries; cleared only by a dead requeue. */
  readonly cancelRequested: boolean;
}

/** A mutable copy, for building the next record of a transition. */
export type MutableJobRecord = { -readonly [K in keyof JobRecord]: JobRecord[K] };

const STORED_VERSION = 1;

/** Serialises a record; the inline payload is left out when it is offloaded. */
export function encodeJobRecord(record: JobRecord): Uint8Array {
  return encodeRecord({
    v: STORED_VERSION,
    id: record.id,
    queue: record.queue,
    payload: record.payloadRef === undefined ? record.payload : undefined,
    payloadRef: record.payloadRef,
    headers: Object.keys(record.headers).length > 0 ? record.headers : undefined,
    status: record.status,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    enqueuedAt: record.enqueuedAt,
    claimedAt: record.claimedAt,
    runAt: record.runAt,
    wokenAt: record.wokenAt,
    wakePayload: record.wakePayload,
    priority: record.priority,
    lastError: record.lastError,
    dedupKey: record.dedupKey,
    completedAt: record.completedAt,
    failedAt: record.failedAt,
    cancelRequested: record.cancelRequested ? true : undefined,
  });
}

const STATUSES = new Set<string>(['pending', 'scheduled', 'claimed', 'done', 'dead']);

function fail(reason: string, field?: string): never {
  throw new CorruptDataError(`undecodable job record. reason=${reason}${field ? ` field=${field}` : ''}`, { reason, field });
}

/**
 * Parses a stored record. An offloaded record comes back with an empty `payload`; callers
 * materialise it through the payload store. Throws CORRUPT_DATA on any shape error.
 */
export function decodeJobRecord(bytes: Uint8Array): JobRecord {
  let raw: unknown;
  try {
    raw = decodeRecord(bytes);
  } catch (e) {
    throw new CorruptDataError('undecodable job record. reason=msgpack', { reason: 'msgpack' }, e);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('not a map');
  const r = raw as Record<string, unknown>;
  if (r.v !== STORED_VERSION) fail('unknown version', 'v');
  const str = (f: string, optional: boolean): string | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return optional ? undefined : fail('missing', f);
    if (typeof v !== 'string') fail('not a string', f);
    return v;
  };
  const num = (f: string, optional: boolean): number | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return optional ? undefined : fail('missing', f);
    if (typeof v !== 'number') fail('not a number', f);
    return v;
  };
  const bin = (f: string): Uint8Array | undefined => {
    const v = r[f];
    if (v === undefined || v === null) return undefined;
    if (!(v instanceof Uint8Array)) fail('not bytes', f);
    return v;
  };
  const status = str('status', false)!;
  if (!STATUSES.has(status)) fail('unknown status', 'status');
  const headers = r.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) fail('not a map', 'headers');
  for (const v of Object.values(headers)) if (typeof v !== 'string') fail('not a string', 'headers');
  const payloadRef = str('payloadRef', true);
  const record: MutableJobRecord = {
    id: str('id', false)!,
    queue: str('queue', false)!,
    payload: bin('payload') ?? new Uint8Array(0),
    headers: headers as Record<string, string>,
    status: status as JobStatus,
    attempts: num('attempts', false)!,
    maxAttempts: num('maxAttempts', false)!,
    enqueuedAt: num('enqueuedAt', false)!,
    priority: num('priority', false)!,
    cancelRequested: r.cancelRequested === true,
  };
  if (payloadRef !== undefined) record.payloadRef = payloadRef;
  const optionalNumbers = ['claimedAt', 'runAt', 'wokenAt', 'completedAt', 'failedAt'] as const;
  for (const f of optionalNumbers) {
    const v = num(f, true);
    if (v !== undefined) record[f] = v;
  }
  const wake = bin('wakePayload');
  if (wake !== undefined) record.wakePayload = wake;
  const lastError = str('lastError', true);
  if (lastError !== undefined) record.lastError = lastError;
  const dedup = str('dedupKey', true);
  if (dedup !== undefined) record.dedupKey = dedup;
  return record;
}

/** The key of the space that holds `record` in its current status. */
export function recordKey(record: JobRecord): Uint8Array {
  switch (record.status) {
    case 'pending':
      return pendingKey(record.queue, record.priority, record.id);
    case 'claimed':
      return claimedKey(record.queue, record.id);
    case 'scheduled':
      return scheduledKey(record.runAt ?? 0, record.queue, record.id);
    case 'done':
      return doneKey(record.completedAt ?? 0, record.queue, record.id);
    case 'dead':
      return deadKey(record.queue, record.id);
  }
}

/** A copy of `record` with some fields changed and some removed. */
export function withChanges(record: JobRecord, changes: Partial<MutableJobRecord>, remove: readonly (keyof JobRecord)[] = []): JobRecord {
  const next: MutableJobRecord = { ...record, ...changes };
  for (const f of remove) delete (next as Partial<MutableJobRecord>)[f];
  return next;
}
