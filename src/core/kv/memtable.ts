/**
 * The in-memory, versioned write buffer. Each key keeps its recent versions newest first, so a
 * transaction reading at an older snapshot still sees the value it started with. Versions no
 * active snapshot can see are pruned (merge chains below the floor are collapsed first), so a
 * hot key costs one version plus one per snapshot that is still open.
 *
 * Keys are held as binary strings (one UTF-16 unit per byte): string comparison is native and
 * orders exactly like bytes, which makes every tree step far cheaper than a byte loop.
 *
 * Beside the ordered tree, a hash map from key to slot serves point work: a write to a key that
 * is already here (a claim deleting its pending key, a counter merge) appends to the slot in one
 * hash lookup instead of a failed tree insert plus a tree lookup, and a point read of the
 * memtables costs a hash lookup each. The tree is touched only to add a new key and to seek.
 */
import { toBinaryString } from '../bytes.js';
import { BTree, type BTreeMap } from '../sorted-map.js';
import type { VersionedEntry } from './entry.js';
import { resolveChain } from './merge-resolution.js';
import type { MergeOperator } from './types.js';

/**
 * Bytes of bookkeeping charged per version on top of key and value, so small writes still count.
 * A rough figure that also covers a key's hash map entry: charging that separately made
 * memtables of small entries flush 15% sooner, and the extra tables and runs cost a full scan of
 * a 200k-key data set about twice the CPU.
 */
const VERSION_OVERHEAD = 48;

interface Slot {
  readonly key: Uint8Array;
  versions: VersionedEntry[];
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export class Memtable {
  private readonly map: BTreeMap<string, Slot> = new BTree<string, Slot>(undefined, compareStrings);
  private readonly slots = new Map<string, Slot>();
  /** Approximate heap bytes held. */
  bytes = 0;
  /** Highest seq applied. */
  maxSeq = 0;

  constructor(private readonly merge: MergeOperator | undefined) {}

  get size(): number {
    return this.slots.size;
  }

  /**
   * Adds a version. `floorSeq` is the oldest snapshot still open: versions older than the newest
   * one at or below it are invisible to everyone and are dropped. `id` is the key's binary string
   * when the caller already has it.
   */
  add(entry: VersionedEntry, floorSeq: number, id = toBinaryString(entry.key)): void {
    if (entry.seq > this.maxSeq) this.maxSeq = entry.seq;
    const slot = this.slots.get(id);
    if (slot === undefined) {
      const fresh: Slot = { key: entry.key, versions: [entry] };
      this.map.set(id, fresh);
      this.slots.set(id, fresh);
      this.bytes += entry.key.length * 2 + entry.value.length + VERSION_OVERHEAD;
      return;
    }
    this.bytes += entry.value.length + VERSION_OVERHEAD;
    const versions = slot.versions;
    versions.unshift(entry);
    this.prune(slot.key, versions, floorSeq);
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

  /** The versions of the key whose binary string is `id`, newest first (do not mutate). */
  versions(id: string): readonly VersionedEntry[] | undefined {
    return this.slots.get(id)?.versions;
  }

  /** The first key >= `id` (or > when `exclusive`), with its versions. */
  seek(id: string | undefined, exclusive: boolean): [string, Slot] | undefined {
    if (id === undefined) return this.map.nextHigherPair(undefined);
    return exclusive ? this.map.nextHigherPair(id) : this.map.getPairOrNextHigher(id);
  }

  /** Every key's newest version (merge chains collapsed within this memtable), in key order. */
  *newestVersions(): IterableIterator<VersionedEntry> {
    for (const slot of this.map.values()) {
      const { key, versions } = slot;
      yield versions[0].kind === 'merge' ? resolveChain(key, versions, this.merge, false) : versions[0];
    }
  }
}
