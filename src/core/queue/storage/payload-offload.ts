/**
 * Payloads above the threshold live in their own objects so per-transition record rewrites stay
 * small. Invariant: the object is written before the record that names it commits, and deleted
 * only after the record's removal commits; a crash in between leaves an orphan object, never a
 * record without its payload. Object names are fresh ids per enqueue attempt, so a rejected
 * duplicate can never overwrite a live job's object.
 *
 * Objects are sealed (see ../sealed-object.ts): magic `TQPL`, a length and a CRC-32C, so a
 * bit-flipped, truncated or emptied object is CORRUPT_DATA naming the object, never a payload.
 */
import { CorruptDataError, isTaqubaError } from '../../errors.js';
import type { LogSink } from '../../logger.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { openSealedObject, sealObject, type SealedObjectKind } from '../../sealed-object.js';
import type { JobRecord, PayloadError } from '../records/job-record.js';
import type { JobIdGenerator } from '../records/job-id.js';

/** Sealed-object kind of offloaded payloads: "TQPL", format 1 (the body is the payload bytes). */
export const PAYLOAD_OBJECT_KIND: SealedObjectKind = { magic: 0x5451504c, version: 1 };

export class PayloadOffload {
  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
    /** Payloads strictly larger are offloaded; null disables offload. */
    private readonly threshold: number | null,
    private readonly names: JobIdGenerator,
    private readonly logger: LogSink,
  ) {}

  shouldOffload(payload: Uint8Array): boolean {
    return this.threshold !== null && payload.length > this.threshold;
  }

  /** Writes the payload as a new sealed object and returns its name. */
  async write(payload: Uint8Array): Promise<string> {
    const ref = this.names.next();
    await this.store.put(this.objectKey(ref), sealObject(PAYLOAD_OBJECT_KIND, payload), { ifNoneMatch: '*' });
    return ref;
  }

  /**
   * Reads an offloaded payload (a view into the stored bytes); undefined when the object is gone.
   * Throws CORRUPT_DATA (details `{ object, problem }`) when the object fails its checks.
   */
  async read(ref: string): Promise<Uint8Array | undefined> {
    const key = this.objectKey(ref);
    const obj = await this.store.get(key);
    return obj === undefined ? undefined : openSealedObject(PAYLOAD_OBJECT_KIND, obj.data, key);
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

  /**
   * The record with its payload bytes in place. Throws CORRUPT_DATA naming the object when it is
   * missing (details.reason `payload_missing`) or fails its checks.
   */
  async materialize(record: JobRecord): Promise<JobRecord> {
    if (record.payloadRef === undefined) return record;
    const data = await this.read(record.payloadRef);
    if (data === undefined) throw payloadMissing(record, this.objectKey(record.payloadRef));
    return { ...record, payload: data };
  }

  objectKey(ref: string): string {
    return `${this.path}/${ref}`;
  }
}

function payloadMissing(record: JobRecord, object: string): CorruptDataError {
  return new CorruptDataError(`payload object missing. id=${record.id} object=${object}`, {
    reason: 'payload_missing',
    id: record.id,
    object,
    problem: 'missing',
  });
}

/**
 * The dead-letter reason of a job whose payload object failed to materialise with CORRUPT_DATA
 * (missing or failing its checks): says which, and names the object.
 */
export function unreadablePayloadReason(e: unknown): string {
  const details = isTaqubaError(e, 'CORRUPT_DATA') ? e.details : {};
  const object = String(details.object ?? 'unknown');
  if (details.reason === 'payload_missing') return `payload object missing. object=${object}`;
  return `payload object corrupt. object=${object} problem=${String(details.problem ?? 'unknown')}`;
}

/**
 * The `payloadError` an inspected record carries when materialising it failed with `e`: set for
 * CORRUPT_DATA (a missing object is `NOT_FOUND`, one failing its checks `CORRUPT_DATA`), undefined
 * for any other error (store I/O, closed), which the read still rejects with.
 */
export function payloadErrorOf(e: unknown): PayloadError | undefined {
  if (!isTaqubaError(e, 'CORRUPT_DATA')) return undefined;
  return {
    code: isPayloadMissing(e) ? 'NOT_FOUND' : 'CORRUPT_DATA',
    object: String(e.details.object ?? 'unknown'),
    message: unreadablePayloadReason(e),
  };
}

export function isPayloadMissing(e: unknown): boolean {
  return e instanceof CorruptDataError && e.details.reason === 'payload_missing';
}
