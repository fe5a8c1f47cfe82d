import { invariant } from '../../errors.js';
import { ByteWriter } from '../../bytes.js';
import { sealWithChecksum } from '../format.js';
import type { VersionedEntry } from '../entry.js';
import type { SstMeta } from '../manifest/manifest.js';
import { BloomFilterBuilder } from './bloom-filter.js';
import { encodeEntry, encodeIndex, sealBlock, sealedBlock, type BlockIndex, type SealedBlock, type TableIndex } from './sst-format.js';

/** A finished table: see SstBuilder.finish. */
export interface BuiltTable {
  /** The table's bytes in order (data blocks, index, filter); they add up to `meta.size`. */
  readonly parts: readonly Uint8Array[];
  readonly meta: SstMeta;
  readonly index: TableIndex;
  readonly warm: readonly SealedBlock[];
}

/**
 * Builds one table from entries added in strictly ascending key order. With a warm budget it also
 * keeps its first data blocks (up to about that many cache bytes), so the caller can put
 * them in the block cache once the table is stored: a fresh table is the likeliest to be read
 * next, and without this its first reads would all go to the store.
 */
export class SstBuilder {
  private readonly blocks: Uint8Array[] = [];
  private readonly index: BlockIndex = { firstKeys: [], offsets: [], lengths: [] };
  private readonly filter = new BloomFilterBuilder();
  private current = new ByteWriter(4096);
  private currentFirstKey: Uint8Array | undefined;
  private offset = 0;
  private minKey: Uint8Array | undefined;
  private maxKey: Uint8Array | undefined;
  private maxSeq = 0;
  private readonly warm: SealedBlock[] = [];
  count = 0;

  constructor(
    private readonly blockBytes: number,
    /** Cache bytes of blocks to keep for warming (0 = none). */
    private warmBytesLeft = 0,
  ) {}

  /** Bytes written so far (an estimate of the final size). */
  get estimatedSize(): number {
    return this.offset + this.current.length;
  }

  add(entry: VersionedEntry): void {
    if (this.currentFirstKey === undefined) this.currentFirstKey = entry.key;
    encodeEntry(this.current, entry);
    this.filter.add(entry.key);
    this.minKey ??= entry.key;
    this.maxKey = entry.key;
    if (entry.seq > this.maxSeq) this.maxSeq = entry.seq;
    this.count++;
    if (this.current.length >= this.blockBytes) this.finishBlock();
  }

  private finishBlock(): void {
    if (this.currentFirstKey === undefined) return;
    const block = sealBlock(this.current);
    this.index.firstKeys.push(this.currentFirstKey);
    this.index.offsets.push(this.offset);
    this.index.lengths.push(block.length);
    this.blocks.push(block);
    if (this.warmBytesLeft > 0) {
      // Kept as written (decoded on first read); only a prefix, so warm[i] is always block i.
      const sealed = sealedBlock(block);
      this.warm.push(sealed);
      this.warmBytesLeft -= sealed.bytes;
    }
    this.offset += block.length;
    this.current = new ByteWriter(this.blockBytes + 256);
    this.currentFirstKey = undefined;
  }

  /**
   * The table's bytes (in parts: joining them is a big copy, left to the caller to slice), its
   * manifest entry, its index as a reader would load it, and its first
   * data blocks as sealed (`warm[i]` is block i; empty without a warm budget). Throws if nothing
   * was added.
   */
  finish(id: string): BuiltTable {
    this.finishBlock();
    invariant(this.minKey !== undefined && this.maxKey !== undefined, 'sst-builder:non-empty');
    const index = encodeIndex(this.index);
    const bloom = this.filter.finish();
    const filter = sealWithChecksum(new ByteWriter(0).bytes(bloom));
    const parts = [...this.blocks, index, filter];
    const meta: SstMeta = {
      id,
      size: this.offset + index.length + filter.length,
      indexOffset: this.offset,
      indexLength: index.length,
      filterOffset: this.offset + index.length,
      filterLength: filter.length,
      minKey: this.minKey.slice(),
      maxKey: this.maxKey.slice(),
      count: this.count,
      maxSeq: this.maxSeq,
    };
    // First keys are copied: the entries' keys may be views into larger buffers (a replayed WAL
    // object), which a long-lived index must not pin.
    const loaded: TableIndex = {
      blocks: { firstKeys: this.index.firstKeys.map((k) => k.slice()), offsets: this.index.offsets, lengths: this.index.lengths },
      filter: bloom,
    };
    return { parts, meta, index: loaded, warm: this.warm };
  }
}
