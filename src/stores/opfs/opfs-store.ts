import { toHex } from '../../core/bytes.js';
import {
  ClosedError,
  CorruptDataError,
  InvalidConfigError,
  StorePermissionError,
  StoreUnavailableError,
  UnsupportedPlatformError,
} from '../../core/errors.js';
import { DIR_SUFFIX, listStart, segmentCodec } from '../../core/objects/directory-layout.js';
import { walkDirectory, type DirectoryWalkPlatform } from '../../core/objects/directory-walk.js';
import { validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from '../../core/objects/keys.js';
import { checkOptions, optionNames } from '../../core/options.js';
import type { AppendLogStore } from '../../core/objects/append-log.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from '../../core/objects/object-store.js';
import { checkPrecondition, hasPrecondition } from '../../core/objects/preconditions.js';
import { domErrorName } from '../shared/dom-errors.js';
import { withKeyLock } from './key-locks.js';
import { OpfsAppendLogs } from './opfs-append-log.js';
import { toOpfsError } from './opfs-errors.js';
import { hasSyncAccessHandles, originPrivateRoot, type OpfsDirectoryHandle, type OpfsFileHandle } from './opfs-types.js';

export interface OpfsObjectStoreOptions {
  /**
   * The store's directory in the origin private file system, as '/'-separated names
   * (`'taquba/my-app'`); created on open. The directory belongs to the store.
   */
  readonly directory: string;
}

/** Every OpfsObjectStoreOptions name (add a new option's name here, or the constructor rejects it). */
const OPFS_STORE_OPTION_NAMES = optionNames<OpfsObjectStoreOptions>({ directory: true });

/*
 * Layout: the directory stores' layout (core/objects/directory-layout.ts: the last key segment
 * names a file, every other one a directory with a '@' suffix), with this segment encoding: a
 * segment is used as the name almost verbatim (OPFS names may be any string but '', '.', '..' or
 * one with '/' or '\'; keys already exclude those): only '%', '@' and a leading '.' are escaped,
 * as %25, %40 and %2e.
 * `db/wal/0001` is `<directory>/db@/wal@/0001`. Names starting with '.' are never objects (a
 * leading '.' of a segment is escaped): temporary files are `.tmp-<random>`, listings and reads
 * skip them, and opening the store removes those a crashed put left behind.
 *
 * Every file starts with a 16-byte header: 'TQO' 0x01 (format 1), then the object's version (12
 * random bytes, shown as 24 hex digits). The version is read from the same file snapshot as the
 * bytes, so a get can never pair one put's bytes with another put's version.
 */
const MAGIC = [0x54, 0x51, 0x4f, 0x01];
const VERSION_BYTES = 12;
/** Bytes in front of every object's data in its file. */
export const OPFS_HEADER_BYTES = MAGIC.length + VERSION_BYTES;
const TEMP_PREFIX = '.tmp-';
/** Reads of an object replaced meanwhile are retried this many times before giving up. */
const READ_ATTEMPTS = 8;

/** Every character but '%', '@' and a leading '.' (always escaped) stays as it is. */
const SEGMENTS = segmentCodec(() => true);

/** The directory names holding keys below these segments. */
function dirNamesOf(segments: readonly string[]): string[] {
  return segments.map((segment) => SEGMENTS.encode(segment) + DIR_SUFFIX);
}

function isSnapshotGone(e: unknown): boolean {
  const name = domErrorName(e);
  return name === 'NotReadableError' || name === 'NotFoundError';
}

/** base::File::Error FILE_ERROR_NO_SPACE, as Chromium's sync access handle reports running out of quota. */
const FILE_ERROR_NO_SPACE = -8;

/**
 * The error for a `write()` that did not report writing a positive number of bytes within the
 * request. Chromium 153 does not throw QuotaExceededError when the quota runs out mid-write (as
 * the spec says): it writes what fits and returns a negative base::File error as an unsigned
 * 32-bit count (-8, no space, comes back as 4294967288). Taking that count at face value would
 * move a torn file into place, so anything out of range fails the put; -8 maps to
 * STORE_PERMISSION with a QuotaExceededError as cause, like the spec'd exception would.
 */
function writeFailure(written: number, file: string, at: number): Error {
  const code = written | 0;
  const details = { name: code === FILE_ERROR_NO_SPACE ? 'QuotaExceededError' : 'write', returned: written, at };
  if (code === FILE_ERROR_NO_SPACE) {
    const cause = new DOMException(`sync access handle write reported no space. returned=${written}`, 'QuotaExceededError');
    return new StorePermissionError(`opfs put failed: quota exceeded. file=${file}`, details, cause);
  }
  return new StoreUnavailableError(`opfs write failed. file=${file} returned=${written} at=${at}`, details);
}

/** The version in a file's first bytes. Throws CORRUPT_DATA when they are not our header. */
function versionOf(header: Uint8Array, key: string): ObjectVersion {
  if (header.length < OPFS_HEADER_BYTES || MAGIC.some((b, i) => header[i] !== b)) {
    throw new CorruptDataError(`object file has no valid header. key=${JSON.stringify(key)}`, { object: key });
  }
  return toHex(header.subarray(MAGIC.length, OPFS_HEADER_BYTES));
}

/**
 * Runs `read` on a fresh snapshot of the file, again while the file is being replaced under it
 * (a snapshot of a replaced file reads as NotReadableError). Undefined once the file is gone.
 */
async function readSnapshot<T>(handle: OpfsFileHandle, read: (file: File) => Promise<T>): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    let file: File;
    try {
      file = await handle.getFile();
    } catch (e) {
      if (domErrorName(e) === 'NotFoundError') return undefined;
      throw e;
    }
    try {
      return await read(file);
    } catch (e) {
      if (attempt >= READ_ATTEMPTS || !isSnapshotGone(e)) throw e;
    }
  }
}

async function readRange(file: File, start: number, end: number): Promise<Uint8Array> {
  return new Uint8Array(await file.slice(start, end).arrayBuffer());
}

/** The version in the header of the file `handle` names; undefined once the file is gone. */
function readVersion(handle: OpfsFileHandle, key: string): Promise<ObjectVersion | undefined> {
  return readSnapshot(handle, async (file) => versionOf(await readRange(file, 0, OPFS_HEADER_BYTES), key));
}

type OpfsEntry = [string, OpfsFileHandle | OpfsDirectoryHandle];

/** The list walk's platform calls (see core/objects/directory-walk.ts). */
const WALK: DirectoryWalkPlatform<OpfsDirectoryHandle, OpfsEntry> = {
  entries: (dir) => dir.entries(),
  name: ([name]) => name,
  isDirectory: ([, handle]) => handle.kind === 'directory',
  subdirectory: (_, [, handle]) => handle as OpfsDirectoryHandle,
  // Gone since the directory was read: skip it.
  object: (_, [, handle], key) =>
    readSnapshot(handle as OpfsFileHandle, async (file) => ({
      key,
      size: Math.max(0, file.size - OPFS_HEADER_BYTES),
      version: versionOf(await readRange(file, 0, OPFS_HEADER_BYTES), key),
    })),
};

/** The file handle for `name` in `dir`, or undefined if there is no such file. */
async function fileHandleIfExists(dir: OpfsDirectoryHandle, name: string): Promise<OpfsFileHandle | undefined> {
  try {
    return await dir.getFileHandle(name);
  } catch (e) {
    const n = domErrorName(e);
    if (n === 'NotFoundError' || n === 'TypeMismatchError') return undefined;
    throw e;
  }
}

/*
 * Temporary files of puts in flight in this realm, by name (64 random bits each), module-level
 * so that a sweep by another store instance on the same directory in this worker does not
 * remove a temp file between its write and its move.
 */
const tempsInFlight = new Set<string>();

/**
 * Removes the `.tmp-*` files below `dir` (walking only this store's `@` directories) and returns
 * how many. Skips files of puts in flight here, and files another context still holds open (a
 * dying writer's access handle: NoModificationAllowedError) or removed meanwhile.
 */
async function sweepTemps(dir: OpfsDirectoryHandle): Promise<number> {
  const temps: string[] = [];
  const subdirs: OpfsDirectoryHandle[] = [];
  for await (const [name, handle] of dir.entries()) {
    if (handle.kind === 'directory') {
      if (name.endsWith(DIR_SUFFIX)) subdirs.push(handle);
    } else if (name.startsWith(TEMP_PREFIX) && !tempsInFlight.has(name)) {
      temps.push(name);
    }
  }
  // Removed after the walk of this directory: removing entries while iterating is unspecified.
  let removed = 0;
  for (const name of temps) {
    try {
      await dir.removeEntry(name);
      removed++;
    } catch (e) {
      const n = domErrorName(e);
      if (n !== 'NotFoundError' && n !== 'NoModificationAllowedError') throw e;
    }
  }
  for (const sub of subdirs) removed += await sweepTemps(sub);
  return removed;
}

function parseDirectory(directory: unknown): string[] {
  const names = typeof directory === 'string' && directory !== '' ? directory.split('/') : [];
  if (names.length === 0 || names.some((n) => n === '' || n === '.' || n === '..' || n.includes('\\') || n.includes('\0'))) {
    throw new InvalidConfigError(`opfs store needs a directory of '/'-separated names. option=directory directory=${JSON.stringify(String(directory))}`);
  }
  return names;
}

async function openPath(names: readonly string[], create: boolean): Promise<OpfsDirectoryHandle> {
  const getRoot = originPrivateRoot();
  if (!getRoot) {
    throw new UnsupportedPlatformError('the origin private file system is not available here; use another object store', { api: 'navigator.storage.getDirectory' });
  }
  let dir = await getRoot();
  for (const name of names) dir = await dir.getDirectoryHandle(name, { create });
  return dir;
}

/**
 * An ObjectStore on the origin private file system (OPFS): one file per object under a directory,
 * written through `FileSystemSyncAccessHandle`s. **Dedicated workers only.**
 *
 * Why only workers: sync access handles exist only there, and they are the only OPFS write path
 * with a real flush (`flush()` is an fdatasync). The main thread's `createWritable()` never
 * syncs (checked with strace on Chromium 153: no fsync/fdatasync at any point), so a store built
 * on it could not keep the contract that a put resolves once durable, and it is no faster
 * (~260 puts/s against ~290). On the main thread, in shared and service workers, every call
 * rejects with UNSUPPORTED_PLATFORM and a message that says to open the store inside a dedicated
 * Worker; use `IndexedDbObjectStore` there instead.
 *
 * - put: writes header and bytes to a new temporary file in the target's directory through a
 *   sync access handle, flushes and closes it, then, holding the key's origin-wide lock, checks
 *   the precondition and `move()`s the temporary file over the target name (Chromium replaces the
 *   existing file in one step). Readers see the old object or the new one, never a torn one; a
 *   crash before the move leaves only an invisible `.tmp-*` file. Access handles are only ever
 *   opened on temporary files and closed before the move, so readers (which use `getFile()`)
 *   never meet a locked file.
 * - Durability: the object's bytes are fdatasynced before the put resolves. Chromium keeps OPFS
 *   names (creations, moves, removals) in its own metadata, which it does not fsync: a resolved
 *   put survives a tab or browser crash, but after an OS crash or power loss the newest puts may
 *   be missing (the key then holds its previous version or nothing) — never torn.
 * - Preconditions (create-only, compare-and-swap) are atomic across every worker and tab of the
 *   origin: each put, delete and log creation holds a Web Lock named after the directory and key
 *   while it checks and moves (see key-locks.ts).
 * - Versions are 96 random bits stored in the file's 16-byte header, new on every put.
 * - get reads one file snapshot; if the object is replaced under the read, it retries on the new
 *   file. list walks the directories lazily in key order, one directory at a time, reading each
 *   object's header for its version, and reads a directory again when an entry vanished under it
 *   (the listing contract of ObjectStore.list).
 * - delete removes the file; empty directories are left in place.
 *
 * Nothing touches a browser API until the first call (or {@link OpfsObjectStore.open}), so
 * importing this module anywhere is safe. A put killed before its move (the worker terminated,
 * the tab closed) leaves its `.tmp-*` file behind: never listed or read, and removed by the next
 * {@link OpfsObjectStore.open} (see {@link OpfsObjectStore.sweepTempFiles}). In an incognito
 * profile the OPFS lives in memory.
 *
 * Errors: INVALID_ARGUMENT (bad key, prefix or range; put data not a Uint8Array),
 * PRECONDITION_FAILED (put preconditions; nothing is written), CORRUPT_DATA (a file in the directory without this store's header),
 * STORE_PERMISSION (QuotaExceededError, NotAllowedError, SecurityError), STORE_UNAVAILABLE (any
 * other file system failure), UNSUPPORTED_PLATFORM (no OPFS, or not a dedicated worker), CLOSED
 * (after `close()`). The DOMException is kept as `cause`.
 *
 * @example
 * // worker.ts, started with new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' })
 * const store = await OpfsObjectStore.open({ directory: 'taquba/my-app' });
 * const db = await KvDb.open(store);
 */
export class OpfsObjectStore implements ObjectStore {
  /** The store's directory, as given. */
  readonly directory: string;
  private readonly path: readonly string[];
  private root: Promise<OpfsDirectoryHandle> | undefined;
  /** Directory handles by encoded path below the root ('a@/b@/'), once known to exist. */
  private readonly dirs = new Map<string, OpfsDirectoryHandle>();
  private closed = false;

  /**
   * Objects that grow by appends (core/objects/append-log.ts), where the engine keeps its
   * write-ahead log: created like a create-only put, then appended through one sync access
   * handle kept open on the file, `write` + `flush()` each (see opfs-append-log.ts).
   */
  readonly appendLogs: AppendLogStore = new OpfsAppendLogs({
    headerBytes: OPFS_HEADER_BYTES,
    createFile: (key) => this.createFile(key),
    findFile: (key) => this.findFile(key),
    forgetDirectories: () => this.forgetDirectories(),
    writeFailure,
  });

  /** Throws INVALID_CONFIG when `directory` is missing or malformed. Touches no browser API. */
  constructor(options: OpfsObjectStoreOptions) {
    checkOptions(options ?? null, OPFS_STORE_OPTION_NAMES, 'opfs store');
    this.path = parseDirectory(options?.directory);
    this.directory = this.path.join('/');
  }

  /**
   * Creates a store and its directory, and removes the temporary files crashed puts left in it
   * ({@link OpfsObjectStore.sweepTempFiles}). This is the directory's writer's entry point (the
   * browser host calls it holding the store's Web Lock). Rejects with INVALID_CONFIG,
   * UNSUPPORTED_PLATFORM (no OPFS, or not inside a dedicated worker), STORE_PERMISSION or
   * STORE_UNAVAILABLE.
   */
  static async open(options: OpfsObjectStoreOptions): Promise<OpfsObjectStore> {
    const store = new OpfsObjectStore(options);
    await store.sweepTempFiles();
    return store;
  }

  /**
   * Removes every `.tmp-*` file in the store's directory tree and resolves with how many were
   * removed. Such a file is the unfinished write of a put whose worker died before the move; it
   * is invisible to reads and listings and would otherwise stay forever. Temp files of puts in
   * flight in this worker are left alone, as are files another context holds open. Run it as
   * the directory's single writer: a put in flight in another worker (a writer that should no
   * longer be writing) can lose its temp file and fail with STORE_UNAVAILABLE. Walks every
   * directory of the store (entries only, no file is read). Rejects with STORE_PERMISSION,
   * STORE_UNAVAILABLE, UNSUPPORTED_PLATFORM or CLOSED.
   */
  async sweepTempFiles(): Promise<number> {
    const root = await this.rootDir();
    try {
      return await sweepTemps(root);
    } catch (e) {
      throw toOpfsError('open', `directory=${this.directory} (sweeping temporary files)`, e);
    }
  }

  /**
   * Removes `directory` (as given to a store) with everything in it; a missing one is fine. Works
   * wherever the OPFS exists, main thread included. Close the stores on it first. Rejects with
   * INVALID_CONFIG, UNSUPPORTED_PLATFORM, STORE_PERMISSION or STORE_UNAVAILABLE (for example
   * NoModificationAllowedError while a put holds an access handle in it).
   */
  static async deleteDirectory(directory: string): Promise<void> {
    const names = parseDirectory(directory);
    try {
      const parent = await openPath(names.slice(0, -1), false);
      await parent.removeEntry(names[names.length - 1], { recursive: true });
    } catch (e) {
      if (domErrorName(e) === 'NotFoundError') return;
      throw toOpfsError('delete', `directory=${directory}`, e);
    }
  }

  /** Rejects with INVALID_ARGUMENT, CORRUPT_DATA, STORE_PERMISSION, STORE_UNAVAILABLE, UNSUPPORTED_PLATFORM or CLOSED. */
  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    validateObjectKey(key);
    validateGetRange(key, options?.range);
    const { dirNames, name } = this.locate(key);
    const range = options?.range;
    try {
      const dir = await this.dirFor(dirNames, false);
      const handle = dir && (await fileHandleIfExists(dir, name));
      if (!handle) return undefined;
      return await readSnapshot(handle, async (file) => {
        if (!range) {
          const all = await readRange(file, 0, file.size);
          return { data: all.slice(OPFS_HEADER_BYTES), version: versionOf(all, key) };
        }
        const version = versionOf(await readRange(file, 0, OPFS_HEADER_BYTES), key);
        const size = Math.max(0, file.size - OPFS_HEADER_BYTES);
        const start = Math.min(range.offset, size);
        const end = Math.min(start + range.length, size);
        return { data: await readRange(file, OPFS_HEADER_BYTES + start, OPFS_HEADER_BYTES + end), version };
      });
    } catch (e) {
      throw toOpfsError('get', `key=${key}`, e);
    }
  }

  /**
   * Resolves once the bytes are flushed to disk and the file is in place, with the new version.
   * Rejects with PRECONDITION_FAILED (nothing written), INVALID_ARGUMENT, CORRUPT_DATA (the
   * current file, when a precondition needs its version), STORE_PERMISSION (quota),
   * STORE_UNAVAILABLE, UNSUPPORTED_PLATFORM or CLOSED.
   */
  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validateObjectKey(key);
    validatePutData(key, data);
    const { dirNames, name } = this.locate(key);
    // Header and bytes in one buffer: one write, and the caller's array is copied right here.
    const bytes = new Uint8Array(OPFS_HEADER_BYTES + data.length);
    bytes.set(MAGIC);
    bytes.set(crypto.getRandomValues(new Uint8Array(VERSION_BYTES)), MAGIC.length);
    bytes.set(data, OPFS_HEADER_BYTES);
    const version = versionOf(bytes, key);
    try {
      const dir = (await this.dirFor(dirNames, true))!;
      await this.placeFile(dir, name, key, bytes, options);
      return { version };
    } catch (e) {
      // A directory removed under a cached handle: look the path up again on the next call.
      if (domErrorName(e) === 'NotFoundError') this.forgetDirectories();
      throw toOpfsError('put', `key=${key}`, e);
    }
  }

  /** Deleting an absent key succeeds. Rejects with INVALID_ARGUMENT, STORE_PERMISSION, STORE_UNAVAILABLE, UNSUPPORTED_PLATFORM or CLOSED. */
  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    const { dirNames, name } = this.locate(key);
    try {
      const dir = await this.dirFor(dirNames, false);
      if (!dir) return;
      await this.withKeyLock(key, async () => {
        try {
          await dir.removeEntry(name);
        } catch (e) {
          if (domErrorName(e) !== 'NotFoundError') throw e;
        }
      });
    } catch (e) {
      throw toOpfsError('delete', `key=${key}`, e);
    }
  }

  /**
   * Lazily yields objects in ascending key order. Rejects with INVALID_ARGUMENT, CORRUPT_DATA,
   * STORE_PERMISSION, STORE_UNAVAILABLE, UNSUPPORTED_PLATFORM or CLOSED.
   */
  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    // Start in the deepest directory the prefix pins down; its last part filters names there.
    const { dirKey, dirSegments, namePrefix } = listStart(prefix);
    try {
      const dir = await this.dirFor(dirNamesOf(dirSegments), false);
      if (dir) yield* walkDirectory(WALK, SEGMENTS, dir, dirKey, namePrefix, options?.startAfter);
    } catch (e) {
      throw toOpfsError('list', `prefix=${prefix}`, e);
    }
  }

  /** Later calls reject with CLOSED; puts already running finish. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.forgetDirectories();
  }

  /** The file of a new log (see OpfsLogPlatform.createFile): a fresh header only, placed create-only. */
  private async createFile(key: string): Promise<OpfsFileHandle> {
    const { dirNames, name } = this.locate(key);
    const header = new Uint8Array(OPFS_HEADER_BYTES);
    header.set(MAGIC);
    header.set(crypto.getRandomValues(new Uint8Array(VERSION_BYTES)), MAGIC.length);
    const dir = (await this.dirFor(dirNames, true))!;
    return this.placeFile(dir, name, key, header, { ifNoneMatch: '*' });
  }

  /** The file of a (validated) key, if it exists; file system errors unmapped. */
  private async findFile(key: string): Promise<OpfsFileHandle | undefined> {
    const { dirNames, name } = this.locate(key);
    const dir = await this.dirFor(dirNames, false);
    return dir && (await fileHandleIfExists(dir, name));
  }

  /**
   * Writes `bytes` to a new temporary file in `dir`, then, holding the key's lock, checks the
   * precondition and moves the file over `name`. Resolves with the file, now in place; on any
   * failure the temporary file is removed.
   */
  private async placeFile(dir: OpfsDirectoryHandle, name: string, key: string, bytes: Uint8Array, options: PutOptions | undefined): Promise<OpfsFileHandle> {
    // The precondition is checked only under the lock, after the write: checking it before as
    // well would cost every conditional put one to three more round trips to the browser
    // process, to save a wasted temp write in the rare case where it fails.
    const tempName = TEMP_PREFIX + toHex(crypto.getRandomValues(new Uint8Array(8)));
    tempsInFlight.add(tempName);
    try {
      const temp = await this.writeTemp(dir, tempName, bytes);
      let moved = false;
      try {
        await this.withKeyLock(key, async () => {
          await this.checkPrecondition(dir, name, key, options);
          await temp.move(name);
          moved = true;
        });
      } finally {
        if (!moved) await dir.removeEntry(tempName).catch(() => undefined);
      }
      return temp;
    } finally {
      tempsInFlight.delete(tempName);
    }
  }

  private async checkPrecondition(dir: OpfsDirectoryHandle, name: string, key: string, options: PutOptions | undefined): Promise<void> {
    if (!hasPrecondition(options)) return;
    const handle = await fileHandleIfExists(dir, name);
    checkPrecondition(key, options, handle && (await readVersion(handle, key)));
  }

  /** Writes `bytes` to the new temporary file `tempName` in `dir` through a sync access handle, flushed and closed. */
  private async writeTemp(dir: OpfsDirectoryHandle, tempName: string, bytes: Uint8Array): Promise<OpfsFileHandle> {
    const file = await dir.getFileHandle(tempName, { create: true });
    try {
      const access = await file.createSyncAccessHandle!();
      try {
        for (let at = 0; at < bytes.length; ) {
          const written = access.write(bytes.subarray(at), { at });
          if (!(written > 0 && written <= bytes.length - at)) throw writeFailure(written, tempName, at);
          at += written;
        }
        access.flush();
        // Second line of defence against a torn temp file being moved into place.
        const size = access.getSize();
        if (size !== bytes.length) {
          throw new StoreUnavailableError(`opfs write incomplete. file=${tempName} size=${size} expected=${bytes.length}`, { size, expected: bytes.length });
        }
      } finally {
        // Access handles lock the file exclusively: never leave one open.
        access.close();
      }
      return file;
    } catch (e) {
      await dir.removeEntry(tempName).catch(() => undefined);
      throw e;
    }
  }

  /** The store's directory, opened (and created) once. Checks the platform first. */
  private rootDir(): Promise<OpfsDirectoryHandle> {
    if (this.closed) return Promise.reject(new ClosedError(`opfs store is closed. directory=${this.directory}`, { reason: 'closed' }));
    if (this.root) return this.root;
    const root = (async () => {
      if (originPrivateRoot() && !hasSyncAccessHandles()) {
        throw new UnsupportedPlatformError(
          'opfs store needs FileSystemSyncAccessHandle, which exists only in dedicated workers: open it inside a Worker, or use IndexedDbObjectStore on this thread',
          { api: 'FileSystemFileHandle.createSyncAccessHandle' },
        );
      }
      try {
        return await openPath(this.path, true);
      } catch (e) {
        throw toOpfsError('open', `directory=${this.directory}`, e);
      }
    })();
    this.root = root;
    root.catch(() => {
      if (this.root === root) this.root = undefined;
    });
    return root;
  }

  /** The directory holding a key's file, created on the way when `create`; undefined if missing. */
  private async dirFor(dirNames: readonly string[], create: boolean): Promise<OpfsDirectoryHandle | undefined> {
    let dir = await this.rootDir();
    let path = '';
    for (const name of dirNames) {
      path += `${name}/`;
      const known = this.dirs.get(path);
      if (known) {
        dir = known;
        continue;
      }
      try {
        dir = await dir.getDirectoryHandle(name, { create });
      } catch (e) {
        if (!create && domErrorName(e) === 'NotFoundError') return undefined;
        throw e;
      }
      this.dirs.set(path, dir);
    }
    return dir;
  }

  private forgetDirectories(): void {
    this.dirs.clear();
    this.root = undefined;
  }

  /** Encoded directory names and file name of a (validated) key. */
  private locate(key: string): { dirNames: string[]; name: string } {
    const segments = key.split('/');
    const name = SEGMENTS.encode(segments.pop()!);
    return { dirNames: dirNamesOf(segments), name };
  }

  /** Holds the lock every context of the origin takes to change `key` in this directory (see key-locks.ts). */
  private withKeyLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return withKeyLock(this.path.join('/'), key, fn);
  }
}
