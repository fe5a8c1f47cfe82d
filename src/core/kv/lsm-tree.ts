/**
 * The read side shared by the writer and read-only handles: memtable, frozen memtables waiting to
 * become tables, and sorted runs of tables, newest first. A key's newest version is in the first
 * source that has it; merge operands are folded down to the first put or delete.
 *
 * Snapshots: transactional reads pass the snapshot seq. Memtables keep the versions open
 * snapshots need; tables keep only the newest version of each key, so meeting a table version
 * newer than the snapshot means the snapshot's value is gone. That read fails with CONFLICT
 * (`details.reason = 'snapshot_too_old'`), and the transaction retries on a fresh snapshot:
 * never a wrong read.
 */
import { compareBytes, toBinaryString } from '../bytes.js';
import { ConflictError } from '../errors.js';
import type { ObjectStore } from '../objects/object-store.js';
import { BlockCache } from './tables/block-cache.js';
import { bloomKey, type BloomKey } from './tables/bloom-filter.js';
import type { VersionedEntry } from './entry.js';
import { tableObjectKey } from './format.js';
import type { SortedRun, SstMeta } from './manifest/manifest.js';
import type { Memtable } from './memtable.js';
import { resolveChain } from './merge-resolution.js';
import { pastUpper, type Bounds } from './scan-range.js';
import type { CachedBlock, TableIndex } from './tables/sst-format.js';
import { SstReader, blockCacheKey } from './tables/sst-reader.js';
import type { CursorStep, TableCursor } from './tables/table-cursor.js';
import type { BuiltTable } from './tables/sst-builder.js';
import type { MergeOperator } from './types.js';

/** Tables of one manifest version, pinned by reads in progress so GC waits for them. */
export class TableSet {
  activeReads = 0;
  /** Tables this set replaced; deletable once no read holds this set or an older one. */
  obsolete: SstMeta[] = [];

  constructor(readonly runs: readonly (readonly SstReader[])[]) {}
}

/** Visible versions of a memtable key at `snapshot`, newest first, or undefined. */
function visible(versions: readonly VersionedEntry[] | undefined, snapshot: number): readonly VersionedEntry[] | undefined {
  if (!versions) return undefined;
  if (versions[0].seq <= snapshot) return versions;
  const i = versions.findIndex((v) => v.seq <= snapshot);
  return i < 0 ? undefined : versions.slice(i);
}

function checkSnapshot(entry: VersionedEntry, snapshot: number): void {
  if (entry.seq > snapshot) {
    throw new ConflictError(`snapshot too old: a newer version was already moved to a table. seq=${entry.seq} snapshot=${snapshot}`, {
      reason: 'snapshot_too_old',
    });
  }
}

/** The table of a run that may hold `key` (runs are non-overlapping and sorted). */
function tableFor(run: readonly SstReader[], key: Uint8Array): SstReader | undefined {
  let lo = 0;
  let hi = run.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareBytes(run[mid].meta.maxKey, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  const t = run[lo];
  return t && compareBytes(t.meta.minKey, key) <= 0 ? t : undefined;
}

/** One ordered input of a scan; see TableCursor for why steps are synchronous when they can be. */
interface Source {
  next(): CursorStep;
}

/** A synchronous iterator as a Source. */
function sourceOf(iterator: Iterator<VersionedEntry>): Source {
  return {
    next: () => {
      const r = iterator.next();
      return r.done ? undefined : r.value;
    },
  };
}

/** A sorted run's tables one after another, within the scan's bounds. */
class RunSource implements Source {
  private t = 0;
  private cursor: TableCursor | undefined;

  constructor(
    private readonly run: readonly SstReader[],
    private readonly bounds: Bounds,
  ) {
    const lower = bounds.lower;
    if (lower) while (this.t < run.length && compareBytes(run[this.t].meta.maxKey, lower) < 0) this.t++;
  }

  next(): CursorStep {
    for (;;) {
      if (this.cursor === undefined) {
        const table = this.run[this.t];
        if (table === undefined) return undefined;
        if (this.bounds.upper && compareBytes(table.meta.minKey, this.bounds.upper) >= 0) return undefined;
        this.cursor = table.cursor(this.bounds.lower, this.bounds.lowerExclusive, this.bounds.fillCache);
      }
      const step = this.cursor.next();
      if (step instanceof Promise) return step.then((e) => (e === undefined ? this.nextTable() : this.check(e)));
      if (step !== undefined) return this.check(step);
      this.cursor = undefined;
      this.t++;
    }
  }

  private nextTable(): CursorStep {
    this.cursor = undefined;
    this.t++;
    return this.next();
  }

  private check(e: VersionedEntry): VersionedEntry | undefined {
    if (!pastUpper(e.key, this.bounds)) return e;
    this.t = this.run.length;
    this.cursor = undefined;
    return undefined;
  }
}

export class LsmTree {
  readonly cache: BlockCache<CachedBlock>;
  /** Indexes of tables stored but not yet published, by id (see tableStored). */
  private readonly freshIndexes = new Map<string, TableIndex>();
  immutables: Memtable[] = [];
  tables: TableSet = new TableSet([]);

  constructor(
    private readonly store: ObjectStore,
    readonly path: string,
    readonly merge: MergeOperator | undefined,
    public memtable: Memtable,
    cacheBytes: number,
  ) {
    this.cache = new BlockCache<CachedBlock>(cacheBytes);
  }

  /**
   * A table this writer just stored: its first blocks go into the cache and its index waits for
   * the reader that `buildTableSet` makes once the table is published. Fresh tables are read
   * next (a queue's claim scan walks straight into a just-flushed table), and without this each
   * of those reads would be a store round trip. How many blocks come is the caller's budget
   * (see `warmBytes`).
   */
  tableStored(table: BuiltTable): void {
    const id = table.meta.id;
    this.freshIndexes.set(id, table.index);
    for (let i = 0; i < table.warm.length; i++) this.cache.set(blockCacheKey(id, i), table.warm[i]);
  }

  /** Cache bytes a table write may fill with its own blocks: `fraction` of the cache (0 when it is off). */
  warmBytes(fraction: number): number {
    return Math.floor(this.cache.capacityBytes * fraction);
  }

  /** Reader objects for a manifest's runs, reusing open ones (and their loaded indexes). */
  buildTableSet(runs: readonly SortedRun[]): TableSet {
    const existing = new Map<string, SstReader>();
    for (const run of this.tables.runs) for (const t of run) existing.set(t.meta.id, t);
    const reader = (meta: SstMeta): SstReader => {
      const open = existing.get(meta.id);
      if (open) return open;
      const index = this.freshIndexes.get(meta.id);
      this.freshIndexes.delete(meta.id);
      return new SstReader(meta, tableObjectKey(this.path, meta.id), this.store, this.cache, index);
    };
    return new TableSet(runs.map((run) => run.map(reader)));
  }

  /**
   * A synchronous test, over the tables current now, that is true only when no table holds any
   * version of a key. Loads every table's index first. Compactions that publish meanwhile only
   * rewrite keys these tables already hold, so a key absent here stays absent.
   */
  async absentFromTables(): Promise<(key: Uint8Array) => boolean> {
    const runs = this.tables.runs;
    await Promise.all(runs.flatMap((run) => run.map((table) => table.loadIndex())));
    return (key) => {
      const bloom = bloomKey(key);
      return runs.every((run) => tableFor(run, key)?.surelyLacks(key, bloom) ?? true);
    };
  }

  /** The value of `key` at `snapshot` (Infinity = latest). `id`: the key's binary string, when the caller has it. */
  async get(key: Uint8Array, snapshot: number, id = toBinaryString(key)): Promise<Uint8Array | undefined> {
    const chain: VersionedEntry[] = [];
    let based = false;
    // The active memtable, then the frozen ones (newest first), without building a list of them:
    // point reads are a large share of a queue's reads.
    for (let m = -1; m < this.immutables.length; m++) {
      const v = visible((m < 0 ? this.memtable : this.immutables[m]).versions(id), snapshot);
      if (!v) continue;
      // Most reads end here: the newest visible version is a whole value (or a tombstone).
      if (chain.length === 0 && v[0].kind !== 'merge') return v[0].kind === 'put' ? v[0].value : undefined;
      for (const e of v) chain.push(e);
      based = v.some((e) => e.kind !== 'merge');
      if (based) return this.finish(key, chain);
    }
    const tables = this.tables;
    tables.activeReads++;
    try {
      let bloom: BloomKey | undefined;
      for (const run of tables.runs) {
        // Most tables lack the key (their filters say so): no promise, no second hashing, for them.
        const table = tableFor(run, key);
        if (table === undefined || table.surelyLacks(key, (bloom ??= bloomKey(key)))) continue;
        const entry = await table.get(key);
        if (!entry) continue;
        checkSnapshot(entry, snapshot);
        chain.push(entry);
        based = entry.kind !== 'merge';
        if (based) break;
      }
    } finally {
      tables.activeReads--;
    }
    return chain.length === 0 ? undefined : this.finish(key, chain);
  }

  private finish(key: Uint8Array, chain: readonly VersionedEntry[]): Uint8Array | undefined {
    const r = resolveChain(key, chain, this.merge, true);
    return r.kind === 'put' ? r.value : undefined;
  }

  /**
   * Entries in key order at `snapshot`. `overlay` (a transaction's own writes, sorted) takes
   * precedence over everything stored.
   */
  async *scan(bounds: Bounds, snapshot: number, overlay?: readonly VersionedEntry[]): AsyncGenerator<{ key: Uint8Array; value: Uint8Array }> {
    if (bounds.limit === 0) return;
    const tables = this.tables;
    tables.activeReads++;
    const sources: Source[] = [];
    if (overlay) sources.push(sourceOf(overlay[Symbol.iterator]()));
    for (const mem of [this.memtable, ...this.immutables]) sources.push(sourceOf(this.memtableCursor(mem, bounds, snapshot)));
    for (const run of tables.runs) sources.push(new RunSource(run, bounds));
    const heads: (VersionedEntry | undefined)[] = [];
    try {
      for (const s of sources) {
        const head = nextOf(s, bounds);
        heads.push(head instanceof Promise ? await head : head);
      }
      let yielded = 0;
      for (;;) {
        let min: Uint8Array | undefined;
        for (const h of heads) if (h && (min === undefined || compareBytes(h.key, min) < 0)) min = h.key;
        if (min === undefined || pastUpper(min, bounds)) return;
        const chain: VersionedEntry[] = [];
        let resolved = false;
        for (let i = 0; i < sources.length; i++) {
          const h = heads[i];
          if (!h || compareBytes(h.key, min) !== 0) continue;
          if (!resolved) {
            if (i >= sources.length - tables.runs.length) checkSnapshot(h, snapshot);
            chain.push(h);
            resolved = h.kind !== 'merge';
          }
          const head = nextOf(sources[i], bounds);
          heads[i] = head instanceof Promise ? await head : head;
        }
        const r = resolveChain(min, chain, this.merge, true);
        if (r.kind === 'put') {
          yield { key: min, value: r.value };
          if (++yielded >= bounds.limit) return;
        }
      }
    } finally {
      tables.activeReads--;
    }
  }

  private *memtableCursor(mem: Memtable, bounds: Bounds, snapshot: number): Generator<VersionedEntry> {
    let id = bounds.lower === undefined ? undefined : toBinaryString(bounds.lower);
    const upper = bounds.upper === undefined ? undefined : toBinaryString(bounds.upper);
    let exclusive = bounds.lowerExclusive;
    for (;;) {
      // Seek afresh each step: the memtable may change while the consumer awaits.
      const next = mem.seek(id, exclusive);
      if (!next || (upper !== undefined && next[0] >= upper)) return;
      id = next[0];
      exclusive = true;
      const { key, versions } = next[1];
      const v = visible(versions, snapshot);
      if (v) yield v[0].kind === 'merge' ? resolveChain(key, v, this.merge, false) : v[0];
    }
  }
}

/** The source's next entry at or past the lower bound (the overlay is not pre-filtered). */
function nextOf(source: Source, bounds: Bounds): CursorStep {
  for (;;) {
    const step = source.next();
    if (step instanceof Promise) return step.then((e) => (e === undefined || !belowLower(e, bounds) ? e : nextOf(source, bounds)));
    if (step === undefined || !belowLower(step, bounds)) return step;
  }
}

function belowLower(e: VersionedEntry, bounds: Bounds): boolean {
  if (!bounds.lower) return false;
  const c = compareBytes(e.key, bounds.lower);
  return c < 0 || (c === 0 && bounds.lowerExclusive);
}
