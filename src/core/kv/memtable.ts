/**
 * The in-memory, versioned write buffer. Each key keeps its recent versions newest first, so a
 * transaction reading at an older snapshot still sees the value it started with. Versions no
 * active snapshot can see are pruned (merge chains below the floor are collapsed first), so a
 * hot key costs one version plus one per snapshot that is still open.
 */
import { compareBytes } from '../bytes.js';
import type { VersionedEntry } from './entry.js';
import { resolveChain } from './merge-resolution.js';
import { BTree, type BTreeMap } from './sorted-map.js';
import type { MergeOperator } from './types.js';

/** Bytes of bookkeeping charged per version on top of key and value, so small writes still count. */
const VERSION_OVERHEAD = 48;

export class Memtable {
  private readonly map: BTreeMap<Uint8Array, VersionedEntry[]> = new BTree<Uint8Array, VersionedEntry[]>(undefined, compareBytes);
  /** Approximate heap bytes held. */
  bytes = 0;
  /** Highest seq applied. */
  maxSeq = 0;

  constructor(private readonly merge: MergeOperator | undefined) {}

  get size(): number {
    return this.map.size;
  }

  /**
   * Adds a version. `floorSeq` is the oldest snapshot still open: versions older than the newest
   * one at or below it are invisible to everyone and are dropped.
   */
  add(entry: VersionedEntry, floorSeq: number): void {
    const versions = this.map.get(entry.key);
    this.bytes += entry.key.length * (versions ? 0 : 1) + entry.value.length + VERSION_OVERHEAD;
    if (entry.seq > this.maxSeq) this.maxSeq = entry.seq;
    if (!versions) {
      this.map.set(entry.key, [entry]);
      return;
    }
    versions.unshift(entry);
    this.prune(entry.key, versions, floorSeq);
  }

  private prune(key: Uint8Array, versions: VersionedEntry[], floorSeq: number): void {
    const floor = versions.findIndex((v) => v.seq <= floorSeq);
    if (floor < 0 || floor === versions.length - 1) return;
    const below = versions.slice(floor);
    const collapsed = below[0].kind === 'merge' ? resolveChain(key, below, this.merge, false) : below[0];
    for (let i = floor + 1; i < versions.length; i++) this.bytes -= versions[i].value.length + VERSION_OVERHEAD;
    this.bytes += collapsed.value.length - below[0].value.length;
    versions.length = floor;
    versions.push(collapsed);
  }

  /** The versions of `key`, newest first (do not mutate). */
  versions(key: Uint8Array): readonly VersionedEntry[] | undefined {
    return this.map.get(key);
  }

  /** The first key >= `key` (or > when `exclusive`), with its versions. */
  seek(key: Uint8Array | undefined, exclusive: boolean): [Uint8Array, readonly VersionedEntry[]] | undefined {
    if (key === undefined) return this.map.nextHigherPair(undefined);
    return exclusive ? this.map.nextHigherPair(key) : this.map.getPairOrNextHigher(key);
  }

  /** Every key's newest version (merge chains collapsed within this memtable), in key order. */
  *newestVersions(): IterableIterator<VersionedEntry> {
    for (const [key, versions] of this.map.entries()) {
      yield versions[0].kind === 'merge' ? resolveChain(key, versions, this.merge, false) : versions[0];
    }
  }
}
