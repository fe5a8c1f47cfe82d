/**
 * A WAL object holds whole commits, in sequence order:
 *
 *   magic u32 | version u8 | writer epoch varint | wal id varint | commit count varint
 *   per commit: seq varint | op count varint | per op: kind u8 | key (len-prefixed) | value (len-prefixed, not for deletes)
 *   crc32c u32
 *
 * An object with zero commits is a fence written by a new writer at open.
 */
import { ByteWriter, EMPTY_BYTES, type ByteReader } from '../../bytes.js';
import type { VersionedEntry } from '../entry.js';
import { FORMAT_VERSION, WAL_MAGIC, corruptReader, openFramed, readKind, sealWithChecksum, writeKind } from '../format.js';

export interface WalCommit {
  readonly seq: number;
  readonly entries: readonly VersionedEntry[];
}

export interface WalObject {
  readonly epoch: number;
  readonly id: number;
  readonly commits: readonly WalCommit[];
}

/** Encodes one commit's body; the WAL buffer concatenates these without re-encoding. */
export function encodeCommit(commit: WalCommit): Uint8Array {
  let size = 16;
  for (const e of commit.entries) size += e.key.length + e.value.length + 12;
  const w = new ByteWriter(size);
  w.varint(commit.seq).varint(commit.entries.length);
  for (const e of commit.entries) {
    writeKind(w, e.kind);
    w.lenBytes(e.key);
    if (e.kind !== 'delete') w.lenBytes(e.value);
  }
  // The buffer was sized for the worst case (varints at their longest), so the view wastes a few
  // bytes per entry and saves a copy per commit; it lives only until the WAL object is stored.
  return w.written();
}

export function encodeWalObject(epoch: number, id: number, encodedCommits: readonly Uint8Array[]): Uint8Array {
  let size = 32;
  for (const c of encodedCommits) size += c.length;
  const w = new ByteWriter(size);
  w.u32(WAL_MAGIC).u8(FORMAT_VERSION).varint(epoch).varint(id).varint(encodedCommits.length);
  for (const c of encodedCommits) w.bytes(c);
  return sealWithChecksum(w);
}

export function decodeWalObject(bytes: Uint8Array, object: string): WalObject {
  const r = openFramed(bytes, object, WAL_MAGIC);
  const epoch = r.varint();
  const id = r.varint();
  const count = r.varint();
  const commits: WalCommit[] = [];
  for (let i = 0; i < count; i++) commits.push(readCommit(r, object));
  if (r.remaining !== 0) throw corruptReader(object)('trailing bytes');
  return { epoch, id, commits };
}

/** One commit as `encodeCommit` wrote it. */
export function readCommit(r: ByteReader, object: string): WalCommit {
  const seq = r.varint();
  const n = r.varint();
  const entries: VersionedEntry[] = [];
  for (let j = 0; j < n; j++) {
    const kind = readKind(r, object);
    const key = r.lenBytes();
    const value = kind === 'delete' ? EMPTY_BYTES : r.lenBytes();
    entries.push({ key, seq, kind, value });
  }
  return { seq, entries };
}
