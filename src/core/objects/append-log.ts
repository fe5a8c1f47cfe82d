/**
 * An optional capability of local stores: an object that grows by appends, each durable when it
 * resolves, without a new object (and a directory change) per write. The KV engine keeps its
 * write-ahead log in such objects when the store offers them (docs/rfcs/0002-wal-append-log.md).
 * A log is an ordinary object to `get`, `list` and `delete`; only its writer appends.
 */
import type { ObjectStore } from './object-store.js';

export interface AppendLog {
  readonly key: string;
  /** Bytes appended so far (all durable once the last `append` resolved). */
  readonly size: number;
  /**
   * Appends `data` at the end and resolves once it is durable. One append at a time: the caller
   * waits for each before the next. A rejected append leaves the log in an unknown state: the
   * writer must stop using it. Rejects with STORE_UNAVAILABLE or STORE_PERMISSION, or with
   * INVALID_ARGUMENT when `data` is not a `Uint8Array` (nothing written; see `validatePutData`).
   */
  append(data: Uint8Array): Promise<void>;
  /** Releases the handle; the object stays. Safe to call twice. */
  close(): Promise<void>;
}

export interface AppendLogStore {
  /**
   * Creates `key` as an empty object, create-only (PRECONDITION_FAILED when it exists), durably
   * named once this resolves, and opens it for appends.
   */
  createLog(key: string): Promise<AppendLog>;
  /** Whether an object exists at `key`, without reading it: cheap enough for every commit. */
  exists(key: string): Promise<boolean>;
  /**
   * Optional: makes the log or object at `key` durable as it can be read now, its name and every
   * byte, whoever wrote it (an absent key succeeds). An opener calls it before it records the end
   * of a crashed writer's log from what it read: bytes the writer wrote but never synced survive
   * a process crash in the OS cache, not a machine crash, and an end past what survives would
   * make the store unopenable. A log's recorded end is synced by whoever reads it before acting
   * on it: its put may not have answered yet (renamed, directory not synced). Rejects with
   * STORE_UNAVAILABLE.
   */
  sync?(key: string): Promise<void>;
  /**
   * Optional, for stores where `exists` is a round trip a writer should not pay per commit (OPFS):
   * seal flags, one per writer epoch, that the writer reads cheaply after each append instead
   * (docs/rfcs/0002-wal-append-log.md, "Seal flags"). A wrapper store must offer them exactly when
   * the store it wraps does: a writer that watches its flag is sealed only by openers that raise it.
   */
  readonly flags?: SealFlagStore;
}

/** See `AppendLogStore.flags`. */
export interface SealFlagStore {
  /**
   * Creates `key` as a lowered flag, create-only (PRECONDITION_FAILED when it exists), and keeps
   * it open for `raised`. Resolves with undefined when this context cannot keep it open so that
   * another can still raise it (the writer then checks the seal itself). Rejects with
   * STORE_UNAVAILABLE or STORE_PERMISSION.
   */
  create(key: string): Promise<SealFlag | undefined>;
  /**
   * Raises the flag at `key`, whoever holds it open (an absent key succeeds: nothing to raise).
   * Once this resolves, every later `raised()` of that flag answers true. Rejects with
   * STORE_UNAVAILABLE or STORE_PERMISSION.
   */
  raise(key: string): Promise<void>;
}

export interface SealFlag {
  /** Whether the flag was raised; answers from the open flag, without a lookup by name. */
  raised(): Promise<boolean>;
  /** Releases the handle; the object stays. Safe to call twice. */
  close(): Promise<void>;
}

/** The store's append logs, when it offers them. */
export function appendLogsOf(store: ObjectStore): AppendLogStore | undefined {
  return store.appendLogs;
}
