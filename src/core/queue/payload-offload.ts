/**
 * Payloads above the threshold live in their own objects so per-transition record rewrites stay
 * small. Invariant: the object is written before the record that names it commits, and deleted
 * only after the record's removal commits; a crash in between leaves an orphan object, never a
 * record without its payload. Object names are fresh ids per enqueue attempt, so a rejected
 * duplicate can never overwrite a live job's object.
 */
import { CorruptDataError } from '../errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { JobRecord } from './job-record.js';
import type { JobIdGenerator } from './job-id.js';
import type { QueueLogger } from './queue-options.js';

export class PayloadOffload {
  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
    /** Payloads strictly larger are offloaded; null disables offload. */
    private readonly threshold: number | null,
    private readonly names: JobIdGenerator,
    private readonly logger: QueueLogger,
  ) {}

  shouldOffload(payload: Uint8Array): boolean {
    return this.threshold !== null && payload.length > this.threshold;
  }

  /** Writes the payload as a new object and returns its name. */
  async write(payload: Uint8Array): Promise<string> {
    const ref = this.names.next();
    await this.store.put(this.objectKey(ref), payload, { ifNoneMatch: '*' });
    return ref;
  }

  /** Reads an offloaded payload; undefined when the object is gone. */
  async read(ref: string): Promise<Uint8Array | undefined> {
    return (await this.store.get(this.objectKey(ref)))?.data;
  }

  /** Best-effort delete: failures are logged, never surfaced (an orphan object is harmless). */
  async deleteQuietly(ref: string | undefined): Promise<void> {
    if (ref === undefined) return;
    try {
      await this.store.delete(this.objectKey(ref));
    } catch (e) {
      this.logger.warn(`payload object delete failed; orphan left. ref=${ref}`, e);
    }
  }

  async deleteAllQuietly(refs: Iterable<string | undefined>): Promise<void> {
    await Promise.all([...refs].map((r) => this.deleteQuietly(r)));
  }

  /** The record with its payload bytes in place. Throws CORRUPT_DATA when the object is missing. */
  async materialize(record: JobRecord): Promise<JobRecord> {
    if (record.payloadRef === undefined) return record;
    const data = await this.read(record.payloadRef);
    if (data === undefined) throw payloadMissing(record);
    return { ...record, payload: data };
  }

  objectKey(ref: string): string {
    return `${this.path}/${ref}`;
  }
}

export function payloadMissing(record: JobRecord): CorruptDataError {
  return new CorruptDataError(`payload object missing. id=${record.id} ref=${record.payloadRef}`, {
    reason: 'payload_missing',
    id: record.id,
    object: record.payloadRef,
  });
}

export function isPayloadMissing(e: unknown): boolean {
  return e instanceof CorruptDataError && e.details.reason === 'payload_missing';
}
