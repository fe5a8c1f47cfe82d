/**
 * Byte layouts of the engine's objects (see docs/rfcs/0001-kv-object-formats.md). Every object
 * starts with a 4-byte magic and a format version and ends with a CRC-32C of everything before it,
 * so a torn, truncated or bit-flipped object is reported as CORRUPT_DATA naming the object.
 */
import { ByteReader, ByteWriter } from '../bytes.js';
import { crc32c } from '../checksum.js';
import { CorruptDataError } from '../errors.js';
import { KIND_BY_CODE, KIND_CODES, type EntryKind } from './entry.js';

export const WAL_MAGIC = 0x54515741; // "TQWA"
export const MANIFEST_MAGIC = 0x54514d46; // "TQMF"
export const FORMAT_VERSION = 1;

const ID_DIGITS = 20;

/** Object keys under the engine's path. Ids are zero-padded so key order equals numeric order. */
export function walObjectKey(path: string, id: number): string {
  return `${path}/wal/${String(id).padStart(ID_DIGITS, '0')}`;
}
export function sstObjectKey(path: string, id: number): string {
  return `${path}/sst/${String(id).padStart(ID_DIGITS, '0')}.sst`;
}
export function manifestObjectKey(path: string): string {
  return `${path}/manifest`;
}
/** Parses the numeric id at the end of a WAL or table key; undefined for foreign objects. */
export function parseObjectId(key: string): number | undefined {
  const match = /\/(\d{20})(\.sst)?$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

export function corruptReader(object: string): (what: string) => Error {
  return (what) => new CorruptDataError(`corrupt object. object=${object} problem=${what}`, { object, problem: what });
}

/** Appends the CRC-32C trailer of everything written so far and returns the bytes. */
export function sealWithChecksum(writer: ByteWriter): Uint8Array {
  writer.u32(crc32c(writer.written(), 0, writer.length));
  return writer.finish();
}

/** Verifies the trailer and returns the body without it. */
export function openChecksummed(bytes: Uint8Array, object: string): Uint8Array {
  if (bytes.length < 4) throw corruptReader(object)('shorter than its checksum');
  const bodyEnd = bytes.length - 4;
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(bodyEnd);
  if (crc32c(bytes, 0, bodyEnd) !== stored) throw corruptReader(object)('checksum mismatch');
  return bytes.subarray(0, bodyEnd);
}

export function writeKind(writer: ByteWriter, kind: EntryKind): void {
  writer.u8(KIND_CODES[kind]);
}
export function readKind(reader: ByteReader, object: string): EntryKind {
  const kind = KIND_BY_CODE[reader.u8()];
  if (!kind) throw corruptReader(object)('unknown entry kind');
  return kind;
}
