/**
 * The write-ahead log as append logs (docs/rfcs/0002-wal-append-log.md): keys and byte layout.
 *
 * A segment is a sequence of records, each `u32 length | u32 crc32c(body) | body`:
 *   first the header record, body `magic u32 | version u8 | epoch varint | segment varint`,
 *   then one record per stored batch, body = the batch's commits (encodeCommit), in seq order.
 * The end of an epoch's log (`log-end/<epoch>`): magic u32 | version u8 | epoch varint |
 * segment varint | length varint | crc32c u32. Segment 0 with length 0: the epoch has no log.
 */
import { ByteReader, ByteWriter } from '../../bytes.js';
import { crc32c } from '../../checksum.js';
import { CorruptDataError } from '../../errors.js';
import { FORMAT_VERSION, corruptReader, isKindCode, openFramed, sealWithChecksum } from '../format.js';
import { readCommit, type WalCommit } from './wal-format.js';

const LOG_MAGIC = 0x5451574c; // "TQWL"
const LOG_END_MAGIC = 0x54514c45; // "TQLE"
/** length u32 + crc32c u32 in front of every record body. */
export const RECORD_HEADER_BYTES = 8;
/** A record longer than this is garbage (a torn length), not a batch: batches are sealed far below. */
const MAX_RECORD_BYTES = 1 << 30;

const pad = (n: number): string => String(n).padStart(20, '0');

/** Where a log position lies: segment `segment` of the writer of `epoch`. Compared as a pair. */
export type LogPosition = readonly [epoch: number, segment: number];

export function logSegmentKey(path: string, epoch: number, segment: number): string {
  return `${path}/log/${pad(epoch)}-${pad(segment)}`;
}
export function logSealKey(path: string, epoch: number): string {
  return `${path}/log-seal/${pad(epoch)}`;
}
/** The seal flag of `epoch` (on stores with `AppendLogStore.flags`): raised with the seal, watched by its writer. */
export function logFlagKey(path: string, epoch: number): string {
  return `${path}/log-flag/${pad(epoch)}`;
}
export function logEndKey(path: string, epoch: number): string {
  return `${path}/log-end/${pad(epoch)}`;
}

/** The position named by a segment key; undefined for foreign objects. */
export function parseLogSegmentKey(key: string): LogPosition | undefined {
  const match = /\/(\d{20})-(\d{20})$/.exec(key);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

export function comparePositions(a: LogPosition, b: LogPosition): number {
  return a[0] - b[0] || a[1] - b[1];
}

export function encodeRecord(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_HEADER_BYTES + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  view.setUint32(4, crc32c(body));
  out.set(body, RECORD_HEADER_BYTES);
  return out;
}

export function encodeSegmentHeader(epoch: number, segment: number): Uint8Array {
  const w = new ByteWriter(32);
  w.u32(LOG_MAGIC).u8(FORMAT_VERSION).varint(epoch).varint(segment);
  return encodeRecord(w.finish());
}

/** One batch as a record: its commits' encodings back to back. */
export function encodeBatchRecord(encodedCommits: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const c of encodedCommits) size += c.length;
  const out = new Uint8Array(RECORD_HEADER_BYTES + size);
  let at = RECORD_HEADER_BYTES;
  for (const c of encodedCommits) {
    out.set(c, at);
    at += c.length;
  }
  const view = new DataView(out.buffer);
  view.setUint32(0, size);
  view.setUint32(4, crc32c(out, RECORD_HEADER_BYTES, out.length));
  return out;
}

export interface ScannedSegment {
  /** The batches of whole, valid records, in order. */
  readonly batches: WalCommit[][];
  /** Bytes up to the end of the last valid record (0 when even the header is torn). */
  readonly validEnd: number;
}

/**
 * Reads a segment's records. Without `end` (the log of a writer nobody sealed yet, or the live
 * writer's for a reader) it stops at the first record that runs past the bytes or fails its
 * checksum, and never reads past it; but a bad record that cannot be a torn tail (see
 * `checkTornTail`) is CORRUPT_DATA. With `end` (a sealed epoch's recorded end) every record up to
 * `end` must be whole and valid, else CORRUPT_DATA naming the segment; bytes after it are ignored.
 */
export function scanSegment(bytes: Uint8Array, key: string, position: LogPosition, end?: number): ScannedSegment {
  const corrupt = corruptReader(key);
  if (end !== undefined && end > bytes.length) throw corrupt(`shorter than its recorded end (${bytes.length} < ${end})`);
  const limit = end ?? bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const batches: WalCommit[][] = [];
  let at = 0;
  for (let first = true; at < limit; first = false) {
    const body = recordAt(bytes, view, at, limit);
    if (!body) {
      if (end !== undefined) throw corrupt(`bad record at offset ${at}`);
      checkTornTail(bytes, view, at, corrupt);
      break;
    }
    const r = new ByteReader(body, corrupt);
    if (first) {
      if (r.u32() !== LOG_MAGIC) throw corrupt('bad magic');
      const version = r.u8();
      if (version !== FORMAT_VERSION) throw corrupt(`unknown format version ${version}`);
      const epoch = r.varint();
      const segment = r.varint();
      if (epoch !== position[0] || segment !== position[1]) throw corrupt(`header names another segment (${epoch}-${segment})`);
    } else {
      const commits: WalCommit[] = [];
      while (r.remaining > 0) commits.push(readCommit(r, key));
      batches.push(commits);
    }
    at += RECORD_HEADER_BYTES + body.length;
  }
  return { batches, validEnd: at };
}

/** Checksum work the search for whole records after a bad one may do (bytes); see checkTornTail. */
const TAIL_SEARCH_BUDGET = 64 << 20;

/**
 * A bad record at `at` is a torn tail only if it is the last thing in the segment: a writer has
 * one append in flight and appends nothing after a failed one, so a crash can cut only the last
 * record. A record whose own length ends before the segment does, or a whole, valid batch
 * record found anywhere after it, proves damage: CORRUPT_DATA naming the offsets, never a
 * shorter log. (A damaged length that points past the end is found by the search, which checks
 * candidate offsets whose bytes parse as the start of a commit; it stops after
 * TAIL_SEARCH_BUDGET bytes of checksums.)
 */
function checkTornTail(bytes: Uint8Array, view: DataView, at: number, corrupt: (what: string) => Error): void {
  if (bytes.length - at < RECORD_HEADER_BYTES) return;
  const length = view.getUint32(at);
  // A machine crash can leave a torn record's unsynced pages as zeros, its length among them:
  // only a length that survived says where the record ends.
  const ends = at + RECORD_HEADER_BYTES + length;
  if (length !== 0 && ends < bytes.length) throw corrupt(`bad record at offset ${at} with ${bytes.length - ends} bytes after its end: damage, not a torn tail`);
  let budget = TAIL_SEARCH_BUDGET;
  for (let o = at + 1; o + RECORD_HEADER_BYTES < bytes.length && budget > 0; o++) {
    const length = view.getUint32(o);
    const start = o + RECORD_HEADER_BYTES;
    if (length === 0 || start + length > bytes.length || !startsLikeCommit(bytes.subarray(start, start + length))) continue;
    budget -= length;
    if (crc32c(bytes, start, start + length) === view.getUint32(o + 4)) {
      throw corrupt(`bad record at offset ${at} followed by a whole record at offset ${o}: damage, not a torn tail`);
    }
  }
}

/** Whether `body` starts as `encodeCommit` writes a commit: a seq, at least one op, a known kind (a cheap filter before a checksum). */
function startsLikeCommit(body: Uint8Array): boolean {
  try {
    const r = new ByteReader(body, () => new Error('short'));
    return r.varint() > 0 && r.varint() > 0 && isKindCode(r.u8());
  } catch {
    return false;
  }
}

/**
 * The body of the record at `at` when it is whole within `limit` and its checksum holds. An
 * empty body never is one (headers and batches never are empty): eight zero bytes, as a machine
 * crash leaves an unsynced tail, would otherwise pass, CRC-32C of nothing being 0.
 */
function recordAt(bytes: Uint8Array, view: DataView, at: number, limit: number): Uint8Array | undefined {
  if (at + RECORD_HEADER_BYTES > limit) return undefined;
  const length = view.getUint32(at);
  if (length === 0 || length > MAX_RECORD_BYTES || at + RECORD_HEADER_BYTES + length > limit) return undefined;
  const start = at + RECORD_HEADER_BYTES;
  if (crc32c(bytes, start, start + length) !== view.getUint32(at + 4)) return undefined;
  return bytes.subarray(start, start + length);
}

/** Where an epoch's log ends: everything before it is replayed, nothing after it ever is. */
export interface LogEnd {
  readonly epoch: number;
  /** The last segment holding replayable records (0: none). */
  readonly segment: number;
  /** Bytes of that segment that count. */
  readonly length: number;
}

export function encodeLogEnd(end: LogEnd): Uint8Array {
  const w = new ByteWriter(48);
  w.u32(LOG_END_MAGIC).u8(FORMAT_VERSION).varint(end.epoch).varint(end.segment).varint(end.length);
  return sealWithChecksum(w);
}

export function decodeLogEnd(bytes: Uint8Array, key: string): LogEnd {
  const r = openFramed(bytes, key, LOG_END_MAGIC);
  const end = { epoch: r.varint(), segment: r.varint(), length: r.varint() };
  if (r.remaining !== 0) throw new CorruptDataError(`corrupt object. object=${key} problem=trailing bytes`, { object: key, problem: 'trailing bytes' });
  return end;
}
