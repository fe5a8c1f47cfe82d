import { compareBytes, toBinaryString } from '../bytes.js';
import { ClosedError, InvalidArgumentError, InvalidConfigError } from '../errors.js';
import type { VersionedEntry } from './entry.js';
import { resolveBounds, type Bounds } from './scan-range.js';
import type { CommitOptions, KvEntry, KvReadable, MergeOperator, KvWriteOptions, ScanRange } from './types.js';

/** A buffered write of a transaction. */
export interface PendingWrite extends VersionedEntry {
  /** Take part in write-write conflict detection. */
  readonly tracked: boolean;
}

/** What a transaction needs from its engine (kept narrow so the engine's internals stay private). */
export interface TransactionHost {
  readonly mergeOperator: MergeOperator | undefined;
  /** `id` is the key's binary string (the memtables' key form), already made by the caller. */
  readAt(key: Uint8Array, snapshot: number, id: string): Promise<Uint8Array | undefined>;
  scanAt(bounds: Bounds, snapshot: number, overlay: readonly VersionedEntry[]): AsyncIterable<KvEntry>;
  /** `blind`: the transaction read nothing, so no write-write conflict can make it wrong. */
  commitTransaction(snapshot: number, writes: ReadonlyMap<string, PendingWrite>, options: CommitOptions, blind: boolean): Promise<void>;
  releaseSnapshot(snapshot: number): void;
}

/** Longest key the engine takes (as SlateDB: lengths fit in 16 bits). */
export const MAX_KEY_BYTES = 65_535;
/** Largest value the engine takes; bigger payloads belong in their own objects (the queue offloads them). */
export const MAX_VALUE_BYTES = 16 * 1024 * 1024;

export function checkKey(key: unknown): asserts key is Uint8Array {
  if (!(key instanceof Uint8Array) || key.length === 0) {
    throw new InvalidArgumentError(`key must be a non-empty Uint8Array. key=${describe(key)}`, { key: describe(key) });
  }
  if (key.length > MAX_KEY_BYTES) {
    throw new InvalidArgumentError(`key is longer than ${MAX_KEY_BYTES} bytes. key=${describe(key)}`, { key: describe(key), limit: MAX_KEY_BYTES });
  }
}

export function checkValue(value: unknown): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new InvalidArgumentError(`value must be a Uint8Array. value=${describe(value)}`, { value: describe(value) });
  }
  if (value.length > MAX_VALUE_BYTES) {
    throw new InvalidArgumentError(`value is larger than ${MAX_VALUE_BYTES} bytes. value=${describe(value)}`, { value: describe(value), limit: MAX_VALUE_BYTES });
  }
}

function describe(v: unknown): string {
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  return v === null ? 'null' : typeof v;
}

/**
 * A snapshot-isolation transaction. Reads see the database as of `begin()` plus this
 * transaction's own writes; writes are buffered until `commit()`.
 *
 * Commit applies everything at once: it becomes visible to every reader synchronously inside
 * `commit()`, before the returned promise settles. See CommitOptions for what the promise means.
 * Commit rejects with CONFLICT when another transaction committed a tracked write to a key this
 * one writes after this one's snapshot; retry the whole transaction (KvDb.transaction does).
 */
export class Transaction implements KvReadable {
  private readonly writes = new Map<string, PendingWrite>();
  private finished = false;
  private hasRead = false;

  constructor(
    private readonly host: TransactionHost,
    /** Sequence number of the last commit this transaction sees. */
    readonly snapshot: number,
  ) {}

  private ensureOpen(): void {
    if (this.finished) throw new ClosedError('transaction already committed or rolled back', { reason: 'finished' });
  }

  /** Rejects with CONFLICT (snapshot too old) when the value was already compacted away. */
  async get(key: Uint8Array): Promise<Uint8Array | undefined> {
    this.ensureOpen();
    checkKey(key);
    this.hasRead = true;
    const id = toBinaryString(key);
    const w = this.writes.get(id);
    if (!w) return this.host.readAt(key, this.snapshot, id);
    if (w.kind === 'put') return w.value;
    if (w.kind === 'delete') return undefined;
    const base = await this.host.readAt(key, this.snapshot, id);
    return this.mergeOperator()(key, base, w.value);
  }

  scan(range?: ScanRange): AsyncIterable<KvEntry> {
    this.ensureOpen();
    this.hasRead = true;
    const overlay = [...this.writes.values()].sort((a, b) => compareBytes(a.key, b.key));
    return this.host.scanAt(resolveBounds(range), this.snapshot, overlay);
  }

  put(key: Uint8Array, value: Uint8Array, options?: KvWriteOptions): void {
    this.ensureOpen();
    checkKey(key);
    checkValue(value);
    this.writes.set(toBinaryString(key), { key, value, kind: 'put', seq: Number.POSITIVE_INFINITY, tracked: options?.untracked !== true });
  }

  delete(key: Uint8Array, options?: KvWriteOptions): void {
    this.ensureOpen();
    checkKey(key);
    this.writes.set(toBinaryString(key), { key, value: new Uint8Array(0), kind: 'delete', seq: Number.POSITIVE_INFINITY, tracked: options?.untracked !== true });
  }

  /** Adds a merge operand. Merges never conflict; they apply in commit order. */
  merge(key: Uint8Array, operand: Uint8Array): void {
    this.ensureOpen();
    checkKey(key);
    checkValue(operand);
    const merge = this.mergeOperator();
    const id = toBinaryString(key);
    const prev = this.writes.get(id);
    const seq = Number.POSITIVE_INFINITY;
    if (!prev) this.writes.set(id, { key, value: operand, kind: 'merge', seq, tracked: false });
    else if (prev.kind === 'merge') this.writes.set(id, { ...prev, value: merge(key, prev.value, operand) });
    else this.writes.set(id, { ...prev, kind: 'put', value: merge(key, prev.kind === 'put' ? prev.value : undefined, operand) });
  }

  private mergeOperator(): MergeOperator {
    const m = this.host.mergeOperator;
    if (!m) throw new InvalidConfigError('merge used but the engine was opened without a mergeOperator', { option: 'mergeOperator' });
    return m;
  }

  /** Number of buffered writes. */
  get size(): number {
    return this.writes.size;
  }

  /**
   * Applies the writes atomically. Durable by default: resolves once stored in the WAL.
   * Rejects with CONFLICT (retry), FENCED, or CLOSED (engine closed or failed).
   */
  async commit(options: CommitOptions = {}): Promise<void> {
    this.ensureOpen();
    this.finished = true;
    return this.host.commitTransaction(this.snapshot, this.writes, options, !this.hasRead);
  }

  /** Discards the writes. Safe to call more than once. */
  rollback(): void {
    if (this.finished) return;
    this.finished = true;
    this.host.releaseSnapshot(this.snapshot);
  }
}
