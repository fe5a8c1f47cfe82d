/**
 * Sorted table layout (one object per table):
 *
 *   data blocks  | index block | filter block
 *   data block   = entries, then crc32c u32. entry = key (len-prefixed) | seq varint | kind u8 | value (len-prefixed, not for deletes)
 *   index block  = block count varint, per block: first key (len-prefixed) | offset varint | length varint; then crc32c u32
 *   filter block = Bloom filter bytes, then crc32c u32
 *
 * Offsets and lengths of the index and filter live in the manifest's SstMeta, so opening a table
 * is one ranged read.
 */
import { ByteReader, ByteWriter, EMPTY_BYTES, compareBytes } from '../../bytes.js';
import type { EntryKind, VersionedEntry } from '../entry.js';
import { corruptReader, openChecksummed, readKind, sealWithChecksum, writeKind } from '../format.js';

/** A decoded data block: parallel arrays, searched by binary search. */
export interface Block {
  readonly keys: Uint8Array[];
  readonly seqs: number[];
  readonly kinds: EntryKind[];
  readonly values: Uint8Array[];
  /** Approximate heap bytes, for the cache's budget. */
  readonly bytes: number;
}

/**
 * A data block as its writer sealed it (the body, without the checksum), put in the cache when a
 * fresh table is stored and decoded on its first read (see SstReader), so a warmed block that is
 * never read costs no decoding. `bytes` counts the body plus a little bookkeeping.
 */
export interface SealedBlock {
  readonly body: Uint8Array;
  readonly bytes: number;
}

/** What the block cache holds. */
export type CachedBlock = Block | SealedBlock;

export function isSealed(block: CachedBlock): block is SealedBlock {
  return 'body' in block;
}

/** Bookkeeping charged per sealed block on top of its body. */
const SEALED_OVERHEAD = 64;

export function sealedBlock(block: Uint8Array): SealedBlock {
  const body = block.subarray(0, block.length - 4);
  return { body, bytes: body.length + SEALED_OVERHEAD };
}

export interface BlockIndex {
  readonly firstKeys: Uint8Array[];
  readonly offsets: number[];
  readonly lengths: number[];
}

/** What a reader needs before it can find anything in a table: block index and Bloom filter. */
export interface TableIndex {
  readonly blocks: BlockIndex;
  readonly filter: Uint8Array;
}

export function encodeEntry(w: ByteWriter, e: VersionedEntry): void {
  w.lenBytes(e.key).varint(e.seq);
  writeKind(w, e.kind);
  if (e.kind !== 'delete') w.lenBytes(e.value);
}

export function decodeBlock(bytes: Uint8Array, object: string): Block {
  return decodeBlockBody(openChecksummed(bytes, object), object);
}

/**
 * Decodes a block's body (its bytes without the checksum trailer). Entries are views into
 * `body`, so a cached block holds exactly its own bytes. The builder uses this directly on a
 * block it just sealed: there is nothing to verify.
 */
export function decodeBlockBody(body: Uint8Array, object: string): Block {
  const r = new ByteReader(body, corruptReader(object));
  const keys: Uint8Array[] = [];
  const seqs: number[] = [];
  const kinds: EntryKind[] = [];
  const values: Uint8Array[] = [];
  while (r.remaining > 0) {
    keys.push(r.lenBytes());
    seqs.push(r.varint());
    const kind = readKind(r, object);
    kinds.push(kind);
    values.push(kind === 'delete' ? EMPTY_BYTES : r.lenBytes());
  }
  return { keys, seqs, kinds, values, bytes: body.length + keys.length * 96 };
}

export function encodeIndex(index: BlockIndex): Uint8Array {
  const w = new ByteWriter(index.firstKeys.length * 24 + 8);
  w.varint(index.firstKeys.length);
  for (let i = 0; i < index.firstKeys.length; i++) w.lenBytes(index.firstKeys[i]).varint(index.offsets[i]).varint(index.lengths[i]);
  return sealWithChecksum(w);
}

export function decodeIndex(bytes: Uint8Array, object: string): BlockIndex {
  const r = new ByteReader(openChecksummed(bytes, object), corruptReader(object));
  const n = r.varint();
  const index: BlockIndex = { firstKeys: [], offsets: [], lengths: [] };
  for (let i = 0; i < n; i++) {
    index.firstKeys.push(r.lenBytes().slice());
    index.offsets.push(r.varint());
    index.lengths.push(r.varint());
  }
  return index;
}

/** Index of the first element of `keys` that is >= key (or > key when `exclusive`). */
export function lowerBound(keys: readonly Uint8Array[], key: Uint8Array, exclusive = false): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareBytes(keys[mid], key);
    if (c < 0 || (exclusive && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function sealBlock(w: ByteWriter): Uint8Array {
  return sealWithChecksum(w);
}
