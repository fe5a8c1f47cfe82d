/**
 * Sealed objects: the frame around every object the queue and the workflow runtime write to the
 * object store and read back (offloaded payloads, memo entries, step-output replay records), so
 * a bit-flipped, truncated, emptied or misplaced object is reported instead of decoded.
 *
 * Layout (big-endian):
 *
 *   magic u32 | format version u8 | body length u32 | body | CRC-32C u32
 *
 * The CRC-32C covers everything before it. The magic is per kind of object, so an object of one
 * kind can never be opened as another (a payload read as a memo entry fails). Magics in use:
 * `TQPL` (offloaded payload), `TQMM` (memo entry), `TQSO` (step-output replay record); the KV
 * engine's own objects use `TQWA` and `TQMF` (see kv/format.ts).
 *
 * Bodies can be megabytes, so sealing writes header, body and trailer into one buffer allocated
 * once at its final size, and opening returns a view into the stored bytes, not a copy.
 */
import { crc32c } from './checksum.js';
import { CorruptDataError, InvalidArgumentError, type ErrorDetails } from './errors.js';

/** What a sealed object is: its magic and the format version its writer emits. */
export interface SealedObjectKind {
  /** Four bytes naming the kind, as a u32 (for example 0x5451504c, "TQPL"). */
  readonly magic: number;
  /** Format version of the body, 0..255; an object of another version is rejected. */
  readonly version: number;
}

/** magic u32 + version u8 + body length u32. */
export const SEALED_HEADER_BYTES = 9;
/** CRC-32C u32. */
export const SEALED_TRAILER_BYTES = 4;
/** Size of a sealed object with an empty body. */
export const SEALED_OVERHEAD_BYTES = SEALED_HEADER_BYTES + SEALED_TRAILER_BYTES;
/** Largest body the u32 length field can describe. */
export const MAX_SEALED_BODY_BYTES = 0xffffffff;

/**
 * The CORRUPT_DATA error of an object that fails a check: `corrupt object. object=<key>
 * problem=<what>`, then any `facts` as key=value; details `{ object, problem, ...facts }`.
 */
export function corruptObjectError(object: string, problem: string, facts: ErrorDetails = {}): CorruptDataError {
  let message = `corrupt object. object=${object} problem=${problem}`;
  for (const [k, v] of Object.entries(facts)) message += ` ${k}=${String(v)}`;
  return new CorruptDataError(message, { ...facts, object, problem });
}

/**
 * Frames `body` as an object of `kind`. Returns a new buffer (the body is copied once, into its
 * final place). Throws INVALID_ARGUMENT when the body is over 4 GiB - 1 bytes or the kind is not
 * a u32 magic with a u8 version.
 */
export function sealObject(kind: SealedObjectKind, body: Uint8Array): Uint8Array {
  if (!Number.isInteger(kind.magic) || kind.magic < 0 || kind.magic > 0xffffffff || !Number.isInteger(kind.version) || kind.version < 0 || kind.version > 0xff) {
    throw new InvalidArgumentError(`sealed object kind must be a u32 magic and a u8 version. magic=${kind.magic} version=${kind.version}`);
  }
  if (body.length > MAX_SEALED_BODY_BYTES) {
    throw new InvalidArgumentError(`sealed object body too large. size=${body.length} max=${MAX_SEALED_BODY_BYTES}`, { size: body.length, max: MAX_SEALED_BODY_BYTES });
  }
  const out = new Uint8Array(SEALED_OVERHEAD_BYTES + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, kind.magic);
  view.setUint8(4, kind.version);
  view.setUint32(5, body.length);
  out.set(body, SEALED_HEADER_BYTES);
  const end = SEALED_HEADER_BYTES + body.length;
  view.setUint32(end, crc32c(out, 0, end));
  return out;
}

/**
 * Verifies a sealed object of `kind` and returns its body, a view into `bytes` (no copy; it
 * shares the stored buffer). `object` is the key named in the error. Throws CORRUPT_DATA
 * (details `{ object, problem }`) when the object is shorter than a frame, its length field
 * disagrees with its size, its checksum does not match, or its magic or version is not `kind`'s.
 */
export function openSealedObject(kind: SealedObjectKind, bytes: Uint8Array, object: string): Uint8Array {
  const size = bytes.length;
  if (size === 0) throw corruptObjectError(object, 'empty');
  if (size < SEALED_OVERHEAD_BYTES) throw corruptObjectError(object, 'shorter than a frame', { size });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(5);
  // Checked before the checksum so a truncated or extended object says so rather than "checksum".
  if (length !== size - SEALED_OVERHEAD_BYTES) throw corruptObjectError(object, 'length mismatch', { body_length: length, size });
  const end = SEALED_HEADER_BYTES + length;
  if (crc32c(bytes, 0, end) !== view.getUint32(end)) throw corruptObjectError(object, 'checksum mismatch');
  // After the checksum: an intact object of another kind (or written by another format version).
  const magic = view.getUint32(0);
  if (magic !== kind.magic) throw corruptObjectError(object, 'wrong magic', { magic: hex32(magic), expected: hex32(kind.magic) });
  const version = view.getUint8(4);
  if (version !== kind.version) throw corruptObjectError(object, 'unsupported version', { version, expected: kind.version });
  return bytes.subarray(SEALED_HEADER_BYTES, end);
}

function hex32(v: number): string {
  return `0x${v.toString(16).padStart(8, '0')}`;
}
