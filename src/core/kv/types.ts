/** Public types of the KV engine. See kv-db.ts for the engine and its durability contract. */

export interface KvEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/**
 * A range of keys in byte order. With `prefix`, the scan never leaves the prefix (its end is
 * bounded at the prefix end), and `start` (when given) must itself start with the prefix.
 */
export interface ScanRange {
  readonly prefix?: Uint8Array;
  /** Lower bound; inclusive unless `startExclusive`. Defaults to the prefix (or the first key). */
  readonly start?: Uint8Array;
  readonly startExclusive?: boolean;
  /** Exclusive upper bound (intersected with the prefix end). */
  readonly end?: Uint8Array;
  /** Stop after this many entries. */
  readonly limit?: number;
  /** Keep the table blocks this scan reads in the block cache (default true). */
  readonly fillCache?: boolean;
}

/**
 * Combines merge operands, dispatching on the key as it likes. Must be associative with
 * `undefined` as the identity: merge(merge(a, b), c) == merge(a, merge(b, c)), merge(undefined, x) == x.
 * That lets the engine collapse operand chains before it has seen the base value.
 */
export type MergeOperator = (key: Uint8Array, existing: Uint8Array | undefined, operand: Uint8Array) => Uint8Array;

/** Reads common to the engine, its transactions and read-only handles. */
export interface KvReadable {
  /** The value under `key`, or undefined. */
  get(key: Uint8Array): Promise<Uint8Array | undefined>;
  /** Entries in ascending key order. Safe to interleave with writes (never sees a torn commit). */
  scan(range?: ScanRange): AsyncIterable<KvEntry>;
}

export interface CommitOptions {
  /**
   * true (default): the promise resolves once the WAL object holding this commit is stored.
   * false: resolves at once; the commit is visible immediately and durable at the next flush
   * (any later durable commit flushes it first).
   */
  readonly durable?: boolean;
}

export interface KvWriteOptions {
  /**
   * Exclude this write from write-write conflict detection (the write still applies in commit
   * order). For keys where last-writer-wins is acceptable.
   */
  readonly untracked?: boolean;
}

export type WriteOp =
  | { readonly type: 'put'; readonly key: Uint8Array; readonly value: Uint8Array }
  | { readonly type: 'delete'; readonly key: Uint8Array }
  | { readonly type: 'merge'; readonly key: Uint8Array; readonly value: Uint8Array };
