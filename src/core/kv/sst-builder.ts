import { invariant } from '../errors.js';
import { ByteWriter, concatBytes } from '../bytes.js';
import { sealWithChecksum } from './format.js';
import type { VersionedEntry } from './entry.js';
import type { SstMeta } from './manifest.js';
import { buildBloomFilter } from './bloom-filter.js';
import { encodeEntry, encodeIndex, sealBlock, type BlockIndex } from './sst-format.js';

/** Builds one table from entries added in strictly ascending key order. */
export class SstBuilder {
  private readonly blocks: Uint8Array[] = [];
  private readonly index: BlockIndex = { firstKeys: [], offsets: [], lengths: [] };
  private readonly filterKeys: Uint8Array[] = [];
  private current = new ByteWriter(4096);
  private currentFirstKey: Uint8Array | undefined;
  private offset = 0;
  private minKey: Uint8Array | undefined;
  private maxKey: Uint8Array | undefined;
  private maxSeq = 0;
  count = 0;

  constructor(private readonly blockBytes: number) {}

  /** Bytes written so far (an estimate of the final size). */
  get estimatedSize(): number {
    return this.offset + this.current.length;
  }

  add(entry: VersionedEntry): void {
    if (this.currentFirstKey === undefined) this.currentFirstKey = entry.key;
    encodeEntry(this.current, entry);
    this.filterKeys.push(entry.key);
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
    this.offset += block.length;
    this.current = new ByteWriter(this.blockBytes + 256);
    this.currentFirstKey = undefined;
  }

  /** The table's bytes and its manifest entry. Throws if nothing was added. */
  finish(id: number): { bytes: Uint8Array; meta: SstMeta } {
    this.finishBlock();
    invariant(this.minKey !== undefined && this.maxKey !== undefined, 'sst-builder:non-empty');
    const index = encodeIndex(this.index);
    const filter = sealWithChecksum(new ByteWriter(0).bytes(buildBloomFilter(this.filterKeys)));
    const bytes = concatBytes(...this.blocks, index, filter);
    const meta: SstMeta = {
      id,
      size: bytes.length,
      indexOffset: this.offset,
      indexLength: index.length,
      filterOffset: this.offset + index.length,
      filterLength: filter.length,
      minKey: this.minKey.slice(),
      maxKey: this.maxKey.slice(),
      count: this.count,
      maxSeq: this.maxSeq,
    };
    return { bytes, meta };
  }
}
