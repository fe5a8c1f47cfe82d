import { compareBytes } from '../../bytes.js';
import type { VersionedEntry } from '../entry.js';
import { lowerBound, type Block, type TableIndex } from './sst-format.js';
import type { SstReader } from './sst-reader.js';

/** What a cursor step returns: an entry, undefined at the end, or a promise of either when it must wait. */
export type CursorStep = VersionedEntry | undefined | Promise<VersionedEntry | undefined>;

/**
 * A forward cursor over one table that answers synchronously while its blocks are cached and
 * returns a promise only when it must wait for the store. An async generator costs several
 * microtask turns per entry even when nothing is awaited, and a scan stacks a few of them per
 * source; each turn lets every other queued microtask run first, so a claim scan in a busy
 * process finished only after whatever burst of work was queued around it.
 */
export class TableCursor {
  private index: TableIndex | undefined;
  /** The block being read (-1 before the first). */
  private b = -1;
  private block: Block | undefined;
  /** The next entry of `block`. */
  private i = 0;
  private done = false;
  /** Blocks this cursor fetched ahead, from block `aheadFrom` on. */
  private ahead: Promise<Block>[] = [];
  private aheadFrom = 0;

  constructor(
    private readonly reader: SstReader,
    private readonly start: Uint8Array | undefined,
    private readonly exclusive: boolean,
    private readonly fillCache: boolean,
  ) {
    if (start && compareBytes(start, reader.meta.maxKey) > 0) this.done = true;
  }

  next(): CursorStep {
    for (;;) {
      const block = this.block;
      if (block !== undefined && this.i < block.keys.length) {
        const i = this.i++;
        return { key: block.keys[i], seq: block.seqs[i], kind: block.kinds[i], value: block.values[i] };
      }
      if (this.done) return undefined;
      const index = this.index ?? this.reader.loadedIndex;
      if (index === undefined) {
        return this.reader.loadIndex().then((loaded) => {
          this.index = loaded;
          return this.next();
        });
      }
      this.index = index;
      const walking = this.b >= 0;
      this.b = walking ? this.b + 1 : this.start ? Math.max(0, lowerBound(index.blocks.firstKeys, this.start, true) - 1) : 0;
      if (this.b >= index.blocks.firstKeys.length) {
        this.done = true;
        this.block = undefined;
        return undefined;
      }
      const next = this.blockAt(this.b, walking, index);
      if (next instanceof Promise) {
        return next.then((loaded) => {
          this.enter(loaded, walking);
          return this.next();
        });
      }
      this.enter(next, walking);
    }
  }

  private blockAt(b: number, walking: boolean, index: TableIndex): Block | Promise<Block> {
    const known = this.reader.cachedOrLoading(b, this.fillCache);
    if (known !== undefined) return known;
    if (b - this.aheadFrom < this.ahead.length && b >= this.aheadFrom) return this.ahead[b - this.aheadFrom];
    this.ahead = this.reader.fetchForWalk(b, walking, index, this.fillCache);
    this.aheadFrom = b;
    return this.ahead[0];
  }

  private enter(block: Block, walking: boolean): void {
    this.block = block;
    this.i = !walking && this.start ? lowerBound(block.keys, this.start, this.exclusive) : 0;
  }
}
