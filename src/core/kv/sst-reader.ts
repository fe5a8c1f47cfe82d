import { compareBytes } from '../bytes.js';
import { NotFoundError } from '../errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { BlockCache } from './block-cache.js';
import { bloomMayContain } from './bloom-filter.js';
import type { VersionedEntry } from './entry.js';
import { corruptReader, openChecksummed } from './format.js';
import type { SstMeta } from './manifest.js';
import { decodeBlock, decodeIndex, lowerBound, type Block, type TableIndex } from './sst-format.js';

/** The block cache's key for block `i` of table `id`. */
export function blockCacheKey(id: number, i: number): string {
  return `${id}:${i}`;
}

/**
 * Reads one table lazily: its index and filter on first use (one ranged get; none when the
 * writer hands over the index of a table it just wrote), data blocks on demand through the
 * shared block cache. A table deleted under the reader (compaction, then GC) surfaces as
 * NOT_FOUND so the caller can reload the manifest.
 */
export class SstReader {
  private index: TableIndex | undefined;
  private indexLoading: Promise<TableIndex> | undefined;

  constructor(
    readonly meta: SstMeta,
    private readonly objectKey: string,
    private readonly store: ObjectStore,
    private readonly cache: BlockCache<Block>,
    index?: TableIndex,
  ) {
    this.index = index;
  }

  private async fetch(offset: number, length: number): Promise<Uint8Array> {
    const obj = await this.store.get(this.objectKey, { range: { offset, length } });
    if (!obj) throw new NotFoundError(`table object missing. object=${this.objectKey}`, { object: this.objectKey });
    if (obj.data.length !== length) throw corruptReader(this.objectKey)(`short read at ${offset}: ${obj.data.length} of ${length} bytes`);
    return obj.data;
  }

  private loadIndex(): Promise<TableIndex> {
    if (this.index) return Promise.resolve(this.index);
    this.indexLoading ??= (async () => {
      const { indexOffset, indexLength, filterLength } = this.meta;
      const bytes = await this.fetch(indexOffset, indexLength + filterLength);
      const blocks = decodeIndex(bytes.subarray(0, indexLength), this.objectKey);
      const filter = openChecksummed(bytes.subarray(indexLength), this.objectKey).slice();
      this.index = { blocks, filter };
      return this.index;
    })();
    this.indexLoading.catch(() => (this.indexLoading = undefined));
    return this.indexLoading;
  }

  private async block(i: number, index: TableIndex, fillCache: boolean): Promise<Block> {
    const cacheKey = blockCacheKey(this.meta.id, i);
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const block = decodeBlock(await this.fetch(index.blocks.offsets[i], index.blocks.lengths[i]), this.objectKey);
    if (fillCache) this.cache.set(cacheKey, block, block.bytes);
    return block;
  }

  /** The table's version of `key`, or undefined. */
  async get(key: Uint8Array): Promise<VersionedEntry | undefined> {
    if (compareBytes(key, this.meta.minKey) < 0 || compareBytes(key, this.meta.maxKey) > 0) return undefined;
    const index = await this.loadIndex();
    if (!bloomMayContain(index.filter, key)) return undefined;
    const b = lowerBound(index.blocks.firstKeys, key, true) - 1;
    if (b < 0) return undefined;
    const block = await this.block(b, index, true);
    const i = lowerBound(block.keys, key);
    if (i >= block.keys.length || compareBytes(block.keys[i], key) !== 0) return undefined;
    return { key: block.keys[i], seq: block.seqs[i], kind: block.kinds[i], value: block.values[i] };
  }

  /** Entries from `start` (inclusive unless `exclusive`) to the end of the table, in key order. */
  async *iterate(start: Uint8Array | undefined, exclusive: boolean, fillCache: boolean): AsyncGenerator<VersionedEntry> {
    if (start && compareBytes(start, this.meta.maxKey) > 0) return;
    const index = await this.loadIndex();
    let b = start ? Math.max(0, lowerBound(index.blocks.firstKeys, start, true) - 1) : 0;
    let first = true;
    for (; b < index.blocks.firstKeys.length; b++) {
      const block = await this.block(b, index, fillCache);
      let i = first && start ? lowerBound(block.keys, start, exclusive) : 0;
      first = false;
      for (; i < block.keys.length; i++) {
        yield { key: block.keys[i], seq: block.seqs[i], kind: block.kinds[i], value: block.values[i] };
      }
    }
  }

  /** Heap held by this table's index and filter once loaded. */
  get indexBytes(): number {
    if (!this.index) return 0;
    return this.index.filter.length + this.index.blocks.firstKeys.length * 80;
  }
}
