/**
 * One listing, in pages, held to the weakest form of the ObjectStore.list contract
 * (src/core/objects/object-store.ts) and nothing stronger:
 *  (a) a key present for the whole listing is returned;
 *  (b) a key created or deleted during the listing may or may not be returned (this model flips
 *      a coin, and may even return a key that is gone again);
 *  (c) if a key K present at the start is not returned, every greater key of K's directory that
 *      exists from before K's deletion began until the end is returned;
 *  (d) chains are never lost: (c) applied transitively. A key J of the directory that (c) would
 *      require, but that was deleted before the end and not returned, requires in turn every
 *      greater key created before J's deletion began. So "create the successor, then delete the
 *      predecessor" (manifests, segments) always leaves the newest key visible.
 * "Until the end" is unknown when a page is cut, so a key is judged by whether it exists at that
 * page: skipping one that exists could break (a), (c) or (d) if it then stayed.
 * Keys come strictly ascending, never twice.
 */
import type { ObjectInfo } from '../../src/core/objects/object-store.js';
import type { Prng } from './prng.js';
import type { Interval, SimWorld } from './sim-world.js';

/** Chance of returning a key the contract lets us leave out: one that exists now, one gone. */
const RETURN_PRESENT = 0.6;
const RETURN_GONE = 0.15;

export class Listing {
  /** Every key up to here has been decided. */
  private cursor: string | undefined;
  private readonly returned = new Set<string>();
  done = false;

  constructor(
    private readonly world: SimWorld,
    private readonly prefix: string,
    private readonly startAfter: string | undefined,
    /** The tick the listing started at. */
    private readonly start: number,
  ) {
    this.cursor = startAfter;
  }

  /** The next page: up to `size` keys after the cursor, decided as the store is now. */
  page(prng: Prng, size: number): ObjectInfo[] {
    const keys = this.world.allKeys();
    const begin = lowerBound(keys, this.startAfter !== undefined && this.startAfter >= this.prefix ? this.startAfter : this.prefix, this.startAfter !== undefined && this.startAfter >= this.prefix);
    // Chains as they stand now, over the keys already passed (they may have changed since).
    const chains = new Map<string, number>();
    let i = begin;
    for (; i < keys.length; i++) {
      const key = keys[i]!;
      if (!key.startsWith(this.prefix) || this.cursor === undefined || key > this.cursor) break;
      this.extendChain(chains, key);
    }
    const out: ObjectInfo[] = [];
    for (; i < keys.length; i++) {
      const key = keys[i]!;
      if (!key.startsWith(this.prefix)) break;
      this.cursor = key;
      const info = this.decide(key, prng, chains);
      if (info) {
        out.push(info);
        this.returned.add(key);
      } else this.extendChain(chains, key);
      if (out.length >= size) return out;
    }
    this.done = true;
    return out;
  }

  /** A key not returned that was present at the start, or was required by the chain, and was deleted extends its directory's chain. */
  private extendChain(chains: Map<string, number>, key: string): void {
    if (this.returned.has(key)) return;
    const dir = dirOf(key);
    let chain = chains.get(dir);
    for (const iv of this.world.intervals(key)) {
      if (iv.deleted === undefined || iv.deleted <= this.start) continue;
      if (iv.created <= this.start || (chain !== undefined && iv.created < chain)) chain = Math.max(chain ?? 0, iv.deleteBegan!);
    }
    if (chain !== undefined) chains.set(dir, chain);
  }

  private decide(key: string, prng: Prng, chains: ReadonlyMap<string, number>): ObjectInfo | undefined {
    const intervals = this.world.intervals(key);
    const current = this.world.lookup(key) ? intervals.at(-1) : undefined;
    const inWindow = intervals.filter((iv) => iv.deleted === undefined || iv.deleted > this.start);
    if (inWindow.length === 0) return undefined;
    const chain = chains.get(dirOf(key));
    const whole = current !== undefined && current.created <= this.start;
    const chained = current !== undefined && chain !== undefined && current.created < chain;
    if (whole || chained) return this.world.info(key, current!.inode);
    const seen: Interval = current ?? inWindow.at(-1)!;
    return prng.chance(current ? RETURN_PRESENT : RETURN_GONE) ? this.world.info(key, seen.inode) : undefined;
  }
}

function dirOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/** First index whose key is > `bound` (exclusive) or >= `bound`. */
function lowerBound(keys: readonly string[], bound: string, exclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k < bound || (exclusive && k === bound)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
