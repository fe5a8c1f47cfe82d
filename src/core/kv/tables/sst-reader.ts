import { compareBytes } from '../../bytes.js';
import { NotFoundError, invariant } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { BlockCache } from './block-cache.js';
import { bloomMayContain, bloomMayContainKey, type BloomKey } from './bloom-filter.js';
import type { VersionedEntry } from '../entry.js';
import { corruptReader, openChecksummed } from '../format.js';
import type { SstMeta } from '../manifest/manifest.js';
import { decodeBlock, decodeBlockBody, decodeIndex, isSealed, lowerBound, type Block, type CachedBlock, type SealedBlock, type TableIndex } from './sst-format.js';
import { TableCursor } from './table-cursor.js';

/**
 * Read-ahead: a miss that continues a forward walk (within one iteration, or where the previous
 * iteration's last fetch ended) fetches the following blocks too, in the same ranged get. The
 * window starts at two blocks and doubles per sequential miss up to this many bytes, so a claim
 * scan crawling a cold table one block per call soon costs one store read per many calls, while
 * a random read still fetches one block.
 */
const READ_AHEAD_MAX_BYTES = 256 * 1024;

/** The block cache's key for block `i` of table `id`. */
export function blockCacheKey(id: string, i: number): string {
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
  /** The block after the last range an iteration fetched (-1: none yet). */
  private nextSequential = -1;
  /** The current read-ahead window in bytes (0: one block). */
  private aheadBytes = 0;

  constructor(
    readonly meta: SstMeta,
    private readonly objectKey: string,
    private readonly store: ObjectStore,
    private readonly cache: BlockCache<CachedBlock>,
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

  /** @internal */
  loadIndex(): Promise<TableIndex> {
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

  /** Block `i`: cached, joining a load in flight, or fetched alone. */
  private block(i: number, index: TableIndex, fillCache: boolean): Block | Promise<Block> {
    return this.cachedOrLoading(i, fillCache) ?? this.fetchBlocks(i, 0, index, fillCache)[0];
  }

  /**
   * A block the writer cached as sealed, decoded now; cached decoded in its place unless the
   * reader asked not to fill the cache (compaction: the table is about to be replaced).
   */
  private unseal(key: string, sealed: SealedBlock, fillCache: boolean): Block {
    const block = decodeBlockBody(sealed.body, this.objectKey);
    if (fillCache) this.cache.set(key, block);
    return block;
  }

  /**
   * Fetches block `first` and the blocks after it that fit in `maxBytes` and are neither cached
   * nor loading, in one ranged get. Each is registered with the cache as a load in flight, so
   * concurrent misses share it. Returns one promise per block, from `first` on.
   */
  private fetchBlocks(first: number, maxBytes: number, index: TableIndex, fillCache: boolean): Promise<Block>[] {
    const { offsets, lengths } = index.blocks;
    let end = first + 1;
    let bytes = lengths[first];
    while (end < offsets.length && bytes + lengths[end] <= maxBytes) {
      const key = blockCacheKey(this.meta.id, end);
      if (this.cache.has(key) || this.cache.loading(key, false) !== undefined) break;
      bytes += lengths[end];
      end++;
    }
    const base = offsets[first];
    const range = this.fetch(base, offsets[end - 1] + lengths[end - 1] - base);
    const blocks: Promise<Block>[] = [];
    for (let i = first; i < end; i++) {
      // Decoded one block per callback: a 256 KiB range is not one long synchronous stretch.
      const block = range.then((data) => decodeBlock(data.subarray(offsets[i] - base, offsets[i] - base + lengths[i]), this.objectKey));
      this.cache.track(blockCacheKey(this.meta.id, i), block, fillCache);
      blocks.push(block);
    }
    return blocks;
  }

  /** Bytes to fetch at a miss of block `b`: 0 (one block) unless it continues a forward walk. */
  private readAheadFor(b: number, walking: boolean, index: TableIndex): number {
    if (walking || b === this.nextSequential) {
      this.aheadBytes = Math.min(READ_AHEAD_MAX_BYTES, Math.max(2 * index.blocks.lengths[b], 2 * this.aheadBytes));
    } else this.aheadBytes = 0;
    return this.aheadBytes;
  }

  /**
   * True when this table certainly holds no version of `key` (outside its key range, or rejected
   * by its bloom filter; `bloom` is the key's hashes), answered at once; false when it may hold
   * one, or its index is not loaded yet. Point reads probe every run with one hashing of the key.
   */
  surelyLacks(key: Uint8Array, bloom: BloomKey): boolean {
    if (compareBytes(key, this.meta.minKey) < 0 || compareBytes(key, this.meta.maxKey) > 0) return true;
    return this.index !== undefined && !bloomMayContainKey(this.index.filter, bloom);
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

  /**
   * A cursor over entries from `start` (inclusive unless `exclusive`) to the end of the table, in
   * key order, that answers synchronously while its blocks are cached (see TableCursor).
   */
  cursor(start: Uint8Array | undefined, exclusive: boolean, fillCache: boolean): TableCursor {
    return new TableCursor(this, start, exclusive, fillCache);
  }

  /** The same entries as an async iterator (for compaction, which reads whole tables). */
  async *iterate(start: Uint8Array | undefined, exclusive: boolean, fillCache: boolean): AsyncGenerator<VersionedEntry> {
    const cursor = this.cursor(start, exclusive, fillCache);
    for (;;) {
      const next = cursor.next();
      const entry = next instanceof Promise ? await next : next;
      if (entry === undefined) return;
      yield entry;
    }
  }

  /** @internal The index if loaded (no wait). */
  get loadedIndex(): TableIndex | undefined {
    return this.index;
  }

  /** @internal Block `b` if cached, its load if one is in flight, else undefined. */
  cachedOrLoading(b: number, fillCache: boolean): Block | Promise<Block> | undefined {
    const key = blockCacheKey(this.meta.id, b);
    const hit = this.cache.get(key);
    if (hit !== undefined) return isSealed(hit) ? this.unseal(key, hit, fillCache) : hit;
    // Loads are always of decoded blocks (fetchBlocks); the check only narrows the type.
    return this.cache.loading(key, fillCache)?.then((loaded) => (isSealed(loaded) ? this.unseal(key, loaded, fillCache) : loaded));
  }

  /**
   * @internal Fetches block `b` for a forward walk, with read-ahead when it continues one
   * (`walking`: the caller already read the block before it). One promise per block from `b` on.
   */
  fetchForWalk(b: number, walking: boolean, index: TableIndex, fillCache: boolean): Promise<Block>[] {
    const blocks = this.fetchBlocks(b, this.readAheadFor(b, walking, index), index, fillCache);
    this.nextSequential = b + blocks.length;
    return blocks;
  }

  /** Heap held by this table's index and filter once loaded. */
  get indexBytes(): number {
    if (!this.index) return 0;
    return this.index.filter.length + this.index.blocks.firstKeys.length * 80;
  }
}
