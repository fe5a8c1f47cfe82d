/**
 * The job record: what is stored under a job's space key and what inspection returns, with the
 * small pure helpers transitions use on it. Its stored form is in `job-record-codec.ts`.
 */
import { claimedKey, deadKey, doneKey, pendingKey, scheduledKey } from './keys.js';

export type JobStatus = 'pending' | 'scheduled' | 'claimed' | 'done' | 'dead';

/**
 * Why an inspected job's offloaded payload could not be read. Set only on records returned by
 * inspection (`getJob`, `listJobs`, `deadJobs`, on `Queue` and `QueueReader`); such a record has
 * an empty `payload` and every other field as stored, so one damaged object never fails a
 * listing. Claims never return such a job: they move it to Dead instead.
 */
export interface PayloadError {
  /**
   * `CORRUPT_DATA`: the object fails its checks (length, CRC-32C, magic, version).
   * `NOT_FOUND`: the object is gone. From a `QueueReader` this may be transient (the job was
   * removed and its object deleted after the reader's view): refresh and read again.
   */
  readonly code: 'CORRUPT_DATA' | 'NOT_FOUND';
  /** Object-store key of the payload object. */
  readonly object: string;
  /**
   * What is wrong, as in the dead-letter reason a claim writes: `payload object missing.
   * object=<key>` or `payload object corrupt. object=<key> problem=<what>`.
   */
  readonly message: string;
}

/** A job as stored and as returned by claims and inspection. Times are epoch ms from the queue clock. */
export interface JobRecord {
  /** Monotonic ULID, or the caller's override. */
  readonly id: string;
  readonly queue: string;
  /**
   * Always materialised on returned records, even when the bytes live in their own object;
   * empty (with `payloadError` set) on an inspected record whose payload object is unreadable.
   */
  readonly payload: Uint8Array;
  /** Name of the object holding an offloaded payload. Queue-managed. */
  readonly payloadRef?: string;
  /**
   * Only on inspected records whose offloaded payload object is missing or corrupt: why
   * `payload` is empty. Never stored. `requeueDeadJob` refuses such a job (CORRUPT_DATA) until the
   * object is restored; `deleteDeadJob` removes it.
   */
  readonly payloadError?: PayloadError;
  readonly headers: Readonly<Record<string, string>>;
  readonly status: JobStatus;
  /**
   * The number of the try in progress or last made, counting only tries that were not
   * interrupted: incremented by every claim, given back when the claim is interrupted (see
   * `interruptions`), reset to 0 by a dead requeue. A failure on a claim with `attempts >=
   * maxAttempts` dead-letters the job.
   */
  readonly attempts: number;
  readonly maxAttempts: number;
  /**
   * Deliveries lost without a settlement and not counted as failures: the process holding the
   * claim exited, crashed or closed the queue (found at the next open), or the queue abandoned a
   * claim it could not deliver. Reaching the queue's `maxInterruptions` dead-letters the job.
   * Reset to 0 by a dead requeue; read as 0 from records written before it existed.
   */
  readonly interruptions: number;
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
  /** When the job was last requeued from Dead (`requeueDeadJob`); its history holds the earlier tries. */
  readonly requeuedAt?: number;
}

/** A mutable copy, for building the next record of a transition. */
export type MutableJobRecord = { -readonly [K in keyof JobRecord]: JobRecord[K] };

/**
 * False when the job provably has no attempt history, so settling it need not delete any: history
 * is appended only by a retry or an expired lease (both leave `attempts` above 1 on the next
 * claim, or `lastError`), an interruption (`interruptions`), a dead-letter (`lastError`), a
 * dead requeue (`requeuedAt`) and a kept done record (never claimed again).
 */
export function mayHaveHistory(record: JobRecord): boolean {
  return record.attempts > 1 || record.interruptions > 0 || record.lastError !== undefined || record.requeuedAt !== undefined;
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
