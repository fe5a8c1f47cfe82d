/**
 * Per-job attempt history: one entry per settlement of a claim, appended with a merge (byte
 * concatenation, no read). Each entry is a length-prefixed MessagePack map, so the merged value
 * decodes by reading entries back to back.
 */
import { ByteReader, ByteWriter } from '../../bytes.js';
import { decodeRecord, encodeRecord } from '../../codec.js';
import { CorruptDataError } from '../../errors.js';

export type AttemptOutcome = 'completed' | 'retried' | 'dead_lettered' | 'lease_expired' | 'interrupted' | 'requeued';

/** One settlement of a job's claim (or a dead requeue marker). */
export interface JobAttempt {
  /** The job's attempts value at settlement (its claim count); 0 for `requeued`. */
  readonly attempt: number;
  readonly claimedAt?: number;
  readonly recordedAt: number;
  readonly outcome: AttemptOutcome;
  /** Set for `retried` and `dead_lettered`. */
  readonly error?: string;
}

const OUTCOMES = new Set<string>(['completed', 'retried', 'dead_lettered', 'lease_expired', 'interrupted', 'requeued']);

export function encodeAttempt(entry: JobAttempt): Uint8Array {
  const body = encodeRecord({ a: entry.attempt, c: entry.claimedAt, r: entry.recordedAt, o: entry.outcome, e: entry.error });
  return new ByteWriter(body.length + 4).lenBytes(body).finish();
}

function corrupt(reason: string): CorruptDataError {
  return new CorruptDataError(`undecodable attempt history. reason=${reason}`, { reason });
}

/** Every entry of a merged history value, in write order. Empty or absent ⇒ []. */
export function decodeAttempts(value: Uint8Array | undefined): JobAttempt[] {
  if (value === undefined) return [];
  const reader = new ByteReader(value, corrupt);
  const out: JobAttempt[] = [];
  while (reader.remaining > 0) {
    const body = reader.lenBytes();
    let raw: unknown;
    try {
      raw = decodeRecord(body);
    } catch (e) {
      throw corrupt('msgpack');
    }
    const r = raw as Record<string, unknown>;
    if (typeof r !== 'object' || r === null || typeof r.a !== 'number' || typeof r.r !== 'number' || typeof r.o !== 'string' || !OUTCOMES.has(r.o)) {
      throw corrupt('shape');
    }
    const entry: { -readonly [K in keyof JobAttempt]: JobAttempt[K] } = { attempt: r.a, recordedAt: r.r, outcome: r.o as AttemptOutcome };
    if (typeof r.c === 'number') entry.claimedAt = r.c;
    if (typeof r.e === 'string') entry.error = r.e;
    out.push(entry);
  }
  return out;
}
