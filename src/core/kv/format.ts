/**
 * Object keys and shared byte layout of the engine's objects (see docs/rfcs/0001-kv-engine.md,
 * "Objects"). Every object
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
/**
 * Manifests are format 2 since writers may watch seal flags (docs/rfcs/0002-wal-append-log.md,
 * "Seal flags"): a library that reads only format 1 would seal such a writer without raising its
 * flag, so it must refuse the store (CORRUPT_DATA, unknown format version) rather than open it.
 * Format 1 manifests are read as before.
 */
export const MANIFEST_FORMAT_VERSION = 2;

const ID_DIGITS = 20;

function padId(n: number): string {
  return String(n).padStart(ID_DIGITS, '0');
}

/**
 * Object keys under the engine's path. Ids are zero-padded so key order equals numeric order.
 * WAL ids are one dense sequence shared by every writer; table names carry the writer's epoch,
 * so two writers can never create the same table; manifests are a create-only sequence.
 */
export function walObjectKey(path: string, id: number): string {
  return `${path}/wal/${padId(id)}`;
}
export function manifestObjectKey(path: string, id: number): string {
  return `${path}/manifest/${padId(id)}`;
}
export function tableName(epoch: number, n: number): string {
  return `${padId(epoch)}-${padId(n)}`;
}
export function tableObjectKey(path: string, name: string): string {
  return `${path}/sst/${name}.sst`;
}

/** The id at the end of a WAL or manifest key; undefined for foreign objects. */
export function parseSequenceId(key: string): number | undefined {
  const match = /\/(\d{20})$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** The name and writer epoch of a table key; undefined for foreign objects. */
export function parseTableKey(key: string): { readonly name: string; readonly epoch: number } | undefined {
  const match = /\/((\d{20})-\d{20})\.sst$/.exec(key);
  return match ? { name: match[1], epoch: Number(match[2]) } : undefined;
}

export function corruptReader(object: string): (what: string) => Error {
  return (what) => new CorruptDataError(`corrupt object. object=${object} problem=${what}`, { object, problem: what });
}

/** Appends the CRC-32C trailer of everything written so far and returns the bytes. */
export function sealWithChecksum(writer: ByteWriter): Uint8Array {
  writer.u32(crc32c(writer.written(), 0, writer.length));
  return writer.finish();
}

/** Verifies the checksum trailer, the magic and the format version; returns a reader after them. */
export function openFramed(bytes: Uint8Array, object: string, magic: number, newest = FORMAT_VERSION): ByteReader {
  const r = new ByteReader(openChecksummed(bytes, object), corruptReader(object));
  if (r.u32() !== magic) throw corruptReader(object)('bad magic');
  const version = r.u8();
  if (version < FORMAT_VERSION || version > newest) throw corruptReader(object)(`unknown format version ${version}`);
  return r;
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
/** Whether `code` is the byte of an entry kind. */
export function isKindCode(code: number): boolean {
  return KIND_BY_CODE[code] !== undefined;
}
export function readKind(reader: ByteReader, object: string): EntryKind {
  const kind = KIND_BY_CODE[reader.u8()];
  if (!kind) throw corruptReader(object)('unknown entry kind');
  return kind;
}
