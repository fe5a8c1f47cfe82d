/**
 * Self-describing MessagePack records `{ kind, format, body }` (the cluster's objects, inbox
 * commands and replies): anything else read back is CORRUPT_DATA naming the object.
 */
import { decodeRecord, encodeRecord } from './codec.js';
import { CorruptDataError } from './errors.js';

export function encodeKindRecord(kind: string, format: number, body: object): Uint8Array {
  return encodeRecord({ kind, format, body });
}

/** The body of a `kind` record of `format` stored at `key`; `what` names the family in messages (e.g. `cluster object`). */
export function decodeKindRecord(bytes: Uint8Array, key: string, kind: string, format: number, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = decodeRecord(bytes);
  } catch (e) {
    throw new CorruptDataError(`${what} does not decode. object=${key}`, { object: key, problem: 'undecodable' }, e);
  }
  const v = value as { kind?: unknown; format?: unknown; body?: unknown } | null;
  if (typeof v !== 'object' || v === null || v.kind !== kind || v.format !== format || typeof v.body !== 'object' || v.body === null) {
    throw new CorruptDataError(`not a ${kind} record of format ${format}. object=${key}`, { object: key, problem: 'wrong_kind' });
  }
  return v.body as Record<string, unknown>;
}

/** CORRUPT_DATA naming a missing or malformed field of a `kind` record. */
export function malformedField(kind: string, key: string, field: string): CorruptDataError {
  return new CorruptDataError(`${kind} record field ${field} is missing or malformed. object=${key}`, { object: key, field });
}
