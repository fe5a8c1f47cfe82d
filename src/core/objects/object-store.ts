/**
 * The one seam every storage adapter implements, modelled on object storage so S3 is the native
 * case and memory, the filesystem, IndexedDB and OPFS emulate it.
 *
 * Keys are non-empty strings of '/'-separated segments (`db/wal/00000000000000000001`). Every
 * adapter must pass the conformance suite in `test/core/objects/object-store.conformance.ts`.
 */
import type { AppendLogStore } from './append-log.js';

/** An opaque tag that changes on every successful put of a key. */
export type ObjectVersion = string;

export interface StoredObject {
  readonly data: Uint8Array;
  readonly version: ObjectVersion;
}

export interface ObjectInfo {
  readonly key: string;
  readonly size: number;
  readonly version: ObjectVersion;
}

export interface GetOptions {
  /** Read only `length` bytes starting at `offset` (clamped to the object's end). */
  readonly range?: { readonly offset: number; readonly length: number };
}

export interface PutOptions {
  /** `'*'`: create only; fails with PRECONDITION_FAILED when the key exists. */
  readonly ifNoneMatch?: '*';
  /** Compare-and-swap: fails with PRECONDITION_FAILED unless the current version equals this. */
  readonly ifMatch?: ObjectVersion;
}

export interface ListOptions {
  /** Only keys strictly greater than this one. */
  readonly startAfter?: string;
}

export interface ObjectStore {
  /**
   * The object's bytes and version, or `undefined` when absent.
   * Rejects with STORE_UNAVAILABLE / STORE_PERMISSION on I/O failure, INVALID_ARGUMENT on a bad key.
   */
  get(key: string, options?: GetOptions): Promise<StoredObject | undefined>;

  /**
   * Stores `data` under `key`. Resolves only once the bytes are durable in this store, with the
   * new version. Rejects with PRECONDITION_FAILED when a precondition does not hold (nothing is
   * written), INVALID_ARGUMENT on a bad key or when `data` is not a `Uint8Array` (nothing is
   * written; see `validatePutData`).
   */
  put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }>;

  /** Removes `key`; deleting an absent key succeeds. */
  delete(key: string): Promise<void>;

  /**
   * Optional: removes every key of `keys` in as few requests as the store allows (S3's
   * DeleteObjects takes 1000 a request). Absent keys succeed. Rejects when any key could not be
   * deleted (some may have been); a store without a batch API leaves this out, and callers go
   * through `deleteObjects`, which falls back to `delete` per key.
   */
  deleteMany?(keys: readonly string[]): Promise<void>;

  /**
   * Every object whose key starts with `prefix`, in strictly ascending key order (UTF-16 code unit
   * order), so never a key twice. A listing is not a snapshot; while keys are created and deleted
   * during it:
   * (a) a key present for the whole listing is returned;
   * (b) a key created or deleted during the listing may or may not be returned;
   * (c) a deleted key does not hide the newer keys of its directory (the keys equal to it up to
   *     its last '/'): if a key K that existed when the listing started is not returned, every
   *     greater key of K's directory that exists from before K's deletion began until the listing
   *     ends is returned;
   * (d) so a chain is never lost: when a directory's keys are deleted only once a greater key of
   *     it exists ("create the successor, then delete the predecessor"), the listing returns the
   *     directory's greatest key as of some moment during the listing, which is at least its
   *     greatest key when the listing started. Engine protocols rely on this to find the newest
   *     manifest, log segment or epoch record (docs/rfcs/0001-kv-engine.md, 0002).
   * (c) and (d) say nothing across directories: the filesystem and OPFS stores read one directory
   * at a time. S3, IndexedDB and the memory store meet them for any keys (each page, or cursor
   * step, reads the keys after the previous one as they are at that moment).
   */
  list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo>;

  /**
   * Optional: makes a second writer of the engine at `path` fail fast with LOCKED instead of
   * fencing the first. Stores whose writers are local processes (the filesystem) offer it; the
   * engine takes it when it opens as a writer (readers never do) and releases it on close.
   * Fencing stays the safety net when it is absent or opted out of.
   */
  lockWriter?(path: string): Promise<WriterLock>;

  /**
   * Optional: objects that grow by durable appends (see append-log.ts). Local stores offer it so
   * the engine's write-ahead log costs one flush per group commit; wrappers leave it out.
   * `| undefined`: a store that decides at construction (the filesystem store's `appendLogs:
   * false`) declares the property and sets it to undefined, which `exactOptionalPropertyTypes`
   * would otherwise reject in a consumer's type check.
   */
  readonly appendLogs?: AppendLogStore | undefined;
}

/** A held writer lock (see ObjectStore.lockWriter). */
export interface WriterLock {
  /** Safe to call twice. */
  release(): Promise<void>;
}
