import { randomInt } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsync, futimesSync, linkSync, openSync, promises as fsp, renameSync, write, writeSync, type BigIntStats, type Dirent } from 'node:fs';
import * as path from 'node:path';
import {
  InvalidArgumentError,
  InvalidConfigError,
  isTaqubaError,
  PreconditionFailedError,
  StorePermissionError,
  StoreUnavailableError,
} from '../core/errors.js';
import { KeyedMutex } from '../core/keyed-mutex.js';
import { DIR_SUFFIX, listStart, segmentCodec } from '../core/objects/directory-layout.js';
import { walkDirectory, type DirectoryWalkPlatform } from '../core/objects/directory-walk.js';
import { validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from '../core/objects/keys.js';
import { checkOptions, optionNames } from '../core/options.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from '../core/objects/object-store.js';
import { checkPrecondition, hasPrecondition } from '../core/objects/preconditions.js';
import type { AppendLogStore } from '../core/objects/append-log.js';
import { FsAppendLogs } from './fs-append-log.js';
import { lockDirectory, validateProcessLockOptions, type ProcessLockOptions } from './process-lock.js';
import { TEMP_DIRECTORY, createTempFile, isOrphanedTemp, removeTempFile, sweepTempDirectory, sweepTempTree, type TempFile } from './temp-files.js';

export interface FileSystemObjectStoreOptions {
  /** Directory holding the objects; created (with its parents) on the first put. */
  readonly root: string;
  /**
   * The writer lock an engine takes when it opens on this store (see `lockWriter`): on by
   * default, so a second process opening the same engine gets LOCKED at once instead of fencing
   * the first. Options tune staleness; `false` turns it off (fencing still keeps history safe,
   * and the older writer then fails with FENCED).
   */
  readonly writerLock?: ProcessLockOptions | false;
  /**
   * Whether the store offers append logs (default true), where an engine keeps its write-ahead
   * log: one `write` + `fdatasync` per group commit. `false` makes engines keep one WAL object
   * per group commit, as on object stores (docs/rfcs/0002-wal-append-log.md).
   */
  readonly appendLogs?: boolean;
}

/**
 * Every FileSystemObjectStoreOptions name. Adding an option: add its name here too (the compiler
 * insists), or the constructor rejects it as unknown (INVALID_CONFIG naming the nearest name).
 */
const FS_STORE_OPTION_NAMES = optionNames<FileSystemObjectStoreOptions>({ root: true, writerLock: true, appendLogs: true });

/** The `writerLock` option after its check: throws INVALID_CONFIG unless it is false or ProcessLockOptions. */
function checkWriterLock(value: unknown): ProcessLockOptions | false {
  if (value === false) return false;
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    const shown = typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'Array' : typeof value === 'function' ? 'function' : String(value);
    throw new InvalidConfigError(`writerLock must be false or an object of lock options (staleMs, onCompromised). option=writerLock value=${shown}`, { option: 'writerLock' });
  }
  validateProcessLockOptions(value, 'writerLock');
  return value ?? {};
}

/** Lock directories of engine writers: `<root>/.locks/<encoded engine path>.lock`. */
const LOCK_DIRECTORY = '.locks';

/*
 * On-disk layout: the directory stores' layout (core/objects/directory-layout.ts: the last key
 * segment names a file, every other one a directory with a '@' suffix), with this segment
 * encoding: [a-z0-9_.-] stay as they are, every other byte of a segment's UTF-8 form becomes %xx
 * (lower-case hex), and so does a leading '.'. Names are then portable ASCII, distinct on
 * case-insensitive filesystems, and never start with '.'.
 * `db/wal/00000001` is `<root>/db@/wal@/00000001`; `Manifest` is `<root>/%4danifest`.
 * Temporary files are `<root>/.tmp/.tmp-<pid>-*` (see temp-files.ts); neither the directory nor
 * the names can decode as an object, so listings skip them.
 */
// Most filesystems cap a name at 255 bytes; leave room for nothing else since names are whole segments.
const MAX_NAME_BYTES = 255;

/** [a-z0-9_.-]: the characters a name keeps as they are. */
function isPortable(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2e || c === 0x2d;
}

const SEGMENTS = segmentCodec(isPortable);

const PERMISSION_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Maps a Node filesystem error to a library error, keeping it as `cause`: quota, space and
 * permission refusals become STORE_PERMISSION, a name too long for the filesystem becomes
 * INVALID_ARGUMENT, everything else STORE_UNAVAILABLE. Library errors pass through unchanged.
 * @internal exported for tests.
 */
export function toStoreError(op: 'get' | 'put' | 'delete' | 'list', subject: string, e: unknown): Error {
  if (isTaqubaError(e)) return e;
  const errno = errnoOf(e) ?? 'unknown';
  const message = `${op} failed. ${subject} errno=${errno}`;
  const details = { op, errno };
  if (PERMISSION_ERRNOS.has(errno)) return new StorePermissionError(message, details, e);
  if (errno === 'ENAMETOOLONG') return new InvalidArgumentError(`object key too long for the filesystem. ${subject}`, details);
  return new StoreUnavailableError(message, details, e);
}

/**
 * The version is derived from the file's inode, mtime and size. Every put renames a fresh inode
 * in, but a freed inode number is soon reused and filesystem timestamps are coarse (a jiffy), so
 * each put stamps its own mtime from a per-process strictly increasing microsecond counter. Two
 * puts in this process can then never produce the same version (no ABA for compare-and-swap).
 * The random sub-millisecond start makes a clash with another process's put of the same key on
 * the same reused inode in the same microsecond vanishingly unlikely.
 */
let lastMtimeMicros = 0;
const processMicrosOffset = randomInt(1000);
function nextMtimeSeconds(): number {
  lastMtimeMicros = Math.max(Date.now() * 1000 + processMicrosOffset, lastMtimeMicros + 1);
  // libuv truncates to whole microseconds; aim at the middle of one so float rounding can't slip back.
  return (lastMtimeMicros + 0.5) / 1e6;
}

function versionOf(stats: BigIntStats): ObjectVersion {
  return `${stats.ino}-${stats.mtimeNs}-${stats.size}`;
}

/*
 * Per-file async mutex, module-level so that every store instance in this process that resolves
 * to the same file shares it. Holding it, a put checks its precondition and renames; a delete
 * unlinks. Without it a rename could land between another put's version check and its rename.
 */
const fileLocks = new KeyedMutex();

/*
 * Why a put mixes synchronous and asynchronous calls. Node runs every fs promise on its thread
 * pool: each call is a hop there and back (about 0.05-0.1 ms on this kind of machine, plus a
 * FileHandle object per open), and a put is about ten calls, so the hops cost more than the two
 * fsyncs that make it durable. Most metadata calls (a small write into the page cache, futimes,
 * fstat, close, link, rename, unlink, opening a directory) finish in microseconds, so they run
 * synchronously. Three kinds of call stay on the thread pool, leaving the event loop free: the
 * fsyncs, which wait for the disk; creating the temp file, which on ext4 waits for a running
 * journal commit (measured: 0.8 ms on average, up to 6 ms, while other puts fsync); and writes
 * larger than SYNC_WRITE_MAX_BYTES, which dirty-page writeback can throttle.
 */
const SYNC_WRITE_MAX_BYTES = 64 * 1024;

function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
}

function writeAsync(fd: number, data: Uint8Array, offset: number): Promise<number> {
  return new Promise((resolve, reject) => write(fd, data, offset, data.length - offset, null, (e, written) => (e ? reject(e) : resolve(written))));
}

async function writeAll(fd: number, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    offset += data.length - offset <= SYNC_WRITE_MAX_BYTES ? writeSync(fd, data, offset) : await writeAsync(fd, data, offset);
  }
}

async function fsyncDirectory(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}

async function statIfExists(file: string): Promise<BigIntStats | undefined> {
  try {
    return await fsp.stat(file, { bigint: true });
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return undefined;
    throw e;
  }
}

/** The list walk's platform calls (see core/objects/directory-walk.ts): a directory is its path. */
const WALK: DirectoryWalkPlatform<string, Dirent> = {
  async entries(dir) {
    let dirents;
    try {
      dirents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return [];
      throw e;
    }
    const entries: Dirent[] = [];
    for (const dirent of dirents) {
      const isDir = dirent.isDirectory();
      if (!isDir && !dirent.isFile()) continue;
      if (!isDir && isOrphanedTemp(dirent.name)) {
        // A put of a process that died before its rename, from before temp files moved to the
        // temp directory; nobody will ever finish it.
        await fsp.unlink(path.join(dir, dirent.name)).catch(() => undefined);
        continue;
      }
      entries.push(dirent);
    }
    return entries;
  },
  name: (dirent) => dirent.name,
  isDirectory: (dirent) => dirent.isDirectory(),
  subdirectory: (dir, dirent) => path.join(dir, dirent.name),
  async object(dir, dirent, key) {
    const stats = await statIfExists(path.join(dir, dirent.name)); // deleted since readdir: skip it
    return stats?.isFile() ? { key, size: Number(stats.size), version: versionOf(stats) } : undefined;
  },
};

/**
 * An ObjectStore on a local directory: one file per object, written atomically and fsynced.
 *
 * - put: writes a temp file in the root's temp directory (`<root>/.tmp`), stamps and fsyncs it,
 *   then renames it over the target (or, for `ifNoneMatch: '*'`, hard-links it, which fails
 *   atomically when the target exists, also across processes) and fsyncs the target's directory.
 *   It resolves only once the bytes and the directory entry are durable. New directories are
 *   fsynced into their parents too.
 * - `ifMatch` compare-and-swap is atomic among all stores in this process (a per-file mutex) but
 *   NOT across processes: two processes may both pass the version check. The engine never uses
 *   it (its fencing needs only create-only puts), and it takes a writer lock per engine path
 *   when it opens (see `lockWriter`), so a second process gets LOCKED at once.
 * - get reads through one file descriptor, so bytes and version always belong together. A file
 *   damaged on disk (for example truncated) is returned as it is; the engine's checksums catch it.
 * - delete unlinks and fsyncs the directory; empty directories are left in place (removing them
 *   would race with a concurrent put into the same directory).
 * - list walks directories lazily in key order, reading one directory at a time, and reads a
 *   directory again when an entry vanished under it (the listing contract of ObjectStore.list).
 *
 * Targets POSIX filesystems (Linux, macOS). The root belongs to the store: never put other files
 * or symlinks in it, and give every store of one root the same path (the in-process lock is keyed
 * by the resolved path, not by a realpath), and keep it on one filesystem (a mount inside it
 * would make the rename from the temp directory fail with EXDEV). A crashed put can leave a
 * `.tmp/.tmp-<pid>-*` file behind, wherever the put was going; it is never listed or read, and
 * each store removes those of dead processes once, in the background, at its first call (see
 * {@link FileSystemObjectStore.sweepTempFiles}). Versions assume microsecond (or finer) file
 * timestamps, which ext4, XFS, btrfs, tmpfs and APFS all have. macOS `fsync` does not flush the
 * drive's write cache. A put that rejects with STORE_UNAVAILABLE after its rename (the directory
 * fsync failed) may be visible.
 *
 * Errors: INVALID_ARGUMENT (bad key, prefix, range, put data not a Uint8Array, or a key segment
 * too long for the filesystem), PRECONDITION_FAILED (put preconditions; nothing is written),
 * STORE_PERMISSION (ENOSPC, EDQUOT, EACCES, EPERM, EROFS), STORE_UNAVAILABLE (any other I/O
 * error). The Node error is kept as `cause`.
 *
 * @example
 * const store = new FileSystemObjectStore({ root: './data' });
 * await store.put('db/manifest', bytes, { ifNoneMatch: '*' });
 */
export class FileSystemObjectStore implements ObjectStore {
  /** The absolute root directory. */
  readonly root: string;
  private readonly rootWithSep: string;
  /** Where every put writes its temp file: `<root>/.tmp`. */
  private readonly tempDir: string;
  /** The sweep of crashed puts' temp files, started by the first call (see `sweepTempFiles`). */
  private sweep: Promise<number> | undefined;
  private readonly writerLock: ProcessLockOptions | false;
  /**
   * Objects that grow by appends, each `write` + `fdatasync` on a file kept open (see
   * fs-append-log.ts); the engine keeps its write-ahead log in them.
   */
  readonly appendLogs: AppendLogStore | undefined;

  /**
   * Throws INVALID_CONFIG when `root` is missing or empty, or an option is unknown or not of its
   * type. Touches nothing on disk.
   */
  constructor(options: FileSystemObjectStoreOptions) {
    checkOptions(options ?? null, FS_STORE_OPTION_NAMES, 'file system store');
    if (typeof options?.root !== 'string' || options.root === '') {
      throw new InvalidConfigError('file system store needs a root directory. option=root');
    }
    this.root = path.resolve(options.root);
    this.rootWithSep = this.root.endsWith(path.sep) ? this.root : this.root + path.sep;
    this.tempDir = path.join(this.root, TEMP_DIRECTORY);
    this.writerLock = checkWriterLock(options.writerLock);
    if (options.appendLogs !== undefined && typeof options.appendLogs !== 'boolean') {
      throw new InvalidConfigError(`appendLogs must be a boolean. option=appendLogs value=${String(options.appendLogs)}`, { option: 'appendLogs' });
    }
    this.appendLogs =
      options.appendLogs === false
        ? undefined
        : new FsAppendLogs({
            fileOf: (key) => this.fileOf(key),
            makeDirectories: (dir) => this.makeDirectories(dir),
            syncDirectory: fsyncDirectory,
            toStoreError,
          });
  }

  /**
   * The writer lock of the engine at `path` (see ObjectStore.lockWriter): one live process per
   * engine path and root. LOCKED names the root, the path and the holder (`host:pid`). A lock
   * left by a process that died on this host is taken over at once, one left by a paused or
   * remote process once it is stale. A no-op when the store was built with `writerLock: false`.
   */
  lockWriter(enginePath: string): Promise<WriterLock> {
    if (this.writerLock === false) return Promise.resolve({ release: () => Promise.resolve() });
    validateObjectKey(enginePath);
    const name = path.join(this.root, LOCK_DIRECTORY, encodeURIComponent(enginePath));
    return lockDirectory(name, `${name}.lock`, `root=${this.root} path=${enginePath}`, this.writerLock);
  }

  /**
   * Removes the temp files that puts of dead processes left in the root's temp directory (a put
   * killed before its rename or link) and resolves with how many it removed. Temp files of live
   * processes, this one included, are never touched. With `everywhere`, also sweeps the root and
   * every key directory, where puts wrote their temp files before they moved to the temp
   * directory (it reads every directory of the store).
   *
   * The store runs this by itself, once, in the background, at its first get, put, delete or
   * list; `everywhere` then only when the root has no temp directory yet (a new root, or one
   * written before it existed). Calling it runs a sweep of its own. Rejects with STORE_PERMISSION
   * or STORE_UNAVAILABLE.
   */
  async sweepTempFiles(options?: { readonly everywhere?: boolean }): Promise<number> {
    try {
      let removed = await sweepTempDirectory(this.tempDir);
      if (options?.everywhere) removed += await sweepTempTree(this.root, DIR_SUFFIX);
      return removed;
    } catch (e) {
      throw toStoreError('list', `dir=${this.root} (sweeping temp files)`, e);
    }
  }

  /**
   * Starts the one background sweep of this instance: off the caller's path, and its failure only
   * delays the cleanup. The one synchronous stat decides whether the whole tree needs it; once
   * the first put has made the temp directory, no later store on this root walks the tree again.
   */
  private startSweep(): void {
    this.sweep = this.sweepTempFiles({ everywhere: !existsSync(this.tempDir) }).catch(() => 0);
  }

  /** Rejects with INVALID_ARGUMENT, STORE_PERMISSION or STORE_UNAVAILABLE. */
  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    validateObjectKey(key);
    validateGetRange(key, options?.range);
    if (this.sweep === undefined) this.startSweep();
    const file = this.fileOf(key);
    try {
      let handle;
      try {
        handle = await fsp.open(file, 'r');
      } catch (e) {
        if (errnoOf(e) === 'ENOENT') return undefined;
        throw e;
      }
      try {
        const stats = await handle.stat({ bigint: true });
        if (!stats.isFile()) return undefined;
        const size = Number(stats.size);
        const start = Math.min(options?.range?.offset ?? 0, size);
        const length = Math.min(options?.range?.length ?? size, size - start);
        const data = new Uint8Array(length);
        let filled = 0;
        while (filled < length) {
          const { bytesRead } = await handle.read(data, filled, length - filled, start + filled);
          if (bytesRead === 0) break; // shrank under us (damaged on disk): return what is there
          filled += bytesRead;
        }
        return { data: filled === length ? data : data.slice(0, filled), version: versionOf(stats) };
      } finally {
        await handle.close();
      }
    } catch (e) {
      throw toStoreError('get', `key=${key}`, e);
    }
  }

  /**
   * Resolves once the bytes are durable, with the new version. Rejects with PRECONDITION_FAILED
   * (nothing written), INVALID_ARGUMENT, STORE_PERMISSION or STORE_UNAVAILABLE.
   */
  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validateObjectKey(key);
    validatePutData(key, data);
    if (this.sweep === undefined) this.startSweep();
    const file = this.fileOf(key);
    const dir = path.dirname(file);
    const createOnly = options?.ifNoneMatch === '*';
    try {
      // A compare-and-swap fails fast before writing anything (the check is repeated under the
      // lock). A create-only put does not check first: `link` refuses an existing target
      // atomically, and a create-only put (a WAL object) almost never meets one.
      if (!createOnly) await this.checkVersion(key, file, options);
      const { temp, version } = await this.writeTemp(data);
      let renamed = false;
      try {
        await fileLocks.run(file, async () => {
          if (!createOnly) await this.checkVersion(key, file, options);
          try {
            this.moveIntoPlace(key, temp, file, createOnly);
          } catch (e) {
            // The key's directory does not exist yet (a first put there): make it, then retry once.
            if (errnoOf(e) !== 'ENOENT') throw e;
            await this.makeDirectories(dir);
            this.moveIntoPlace(key, temp, file, createOnly);
          }
          renamed = !createOnly;
        });
      } catch (e) {
        removeTempFile(temp);
        throw e;
      }
      // After a link the temp name is still there. Its removal need not be durable (and the temp
      // directory is not fsynced): a name that comes back after a crash is a dead process's temp
      // file, swept when a store next opens on this root.
      if (!renamed) removeTempFile(temp);
      await fsyncDirectory(dir);
      return { version };
    } catch (e) {
      throw toStoreError('put', `key=${key}`, e);
    }
  }

  /** Deleting an absent key succeeds. Rejects with INVALID_ARGUMENT, STORE_PERMISSION or STORE_UNAVAILABLE. */
  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    if (this.sweep === undefined) this.startSweep();
    const file = this.fileOf(key);
    try {
      const removed = await fileLocks.run(file, () => fsp.unlink(file).then(
        () => true,
        (e: unknown) => {
          if (errnoOf(e) === 'ENOENT') return false;
          throw e;
        },
      ));
      if (removed) await fsyncDirectory(path.dirname(file));
    } catch (e) {
      throw toStoreError('delete', `key=${key}`, e);
    }
  }

  /** Lazily yields objects in ascending key order. Rejects with INVALID_ARGUMENT, STORE_PERMISSION or STORE_UNAVAILABLE. */
  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    if (this.sweep === undefined) this.startSweep();
    // Start in the deepest directory the prefix pins down; its last part filters names there.
    const { dirKey, namePrefix } = listStart(prefix);
    const dir = dirKey === '' ? this.root : this.dirOf(dirKey.slice(0, -1));
    try {
      yield* walkDirectory(WALK, SEGMENTS, dir, dirKey, namePrefix, options?.startAfter);
    } catch (e) {
      throw toStoreError('list', `prefix=${prefix}`, e);
    }
  }

  /**
   * Links (create-only) or renames the temp file to `file`. Throws PRECONDITION_FAILED when a
   * create-only target exists, the Node error otherwise (ENOENT: no directory for `file`).
   */
  private moveIntoPlace(key: string, temp: string, file: string, createOnly: boolean): void {
    if (!createOnly) return renameSync(temp, file);
    try {
      linkSync(temp, file);
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') throw new PreconditionFailedError(`object already exists. key=${key}`, { key }, e);
      throw e;
    }
  }

  /** Throws PRECONDITION_FAILED when an `ifMatch` put's expected version is not the file's. */
  private async checkVersion(key: string, file: string, options: PutOptions | undefined): Promise<void> {
    if (!hasPrecondition(options)) return;
    const stats = await statIfExists(file);
    checkPrecondition(key, options, stats && versionOf(stats));
  }

  /**
   * Writes, stamps and fsyncs a temp file in the temp directory (creating it, and the root, if
   * needed); returns its name and version.
   */
  private async writeTemp(data: Uint8Array): Promise<{ temp: string; version: ObjectVersion }> {
    let file: TempFile;
    try {
      file = await createTempFile(this.tempDir);
    } catch (e) {
      if (errnoOf(e) !== 'ENOENT') throw e;
      // Through makeDirectories, so that a root created here is fsynced into its parent before
      // any put under it is acknowledged (puts into existing directories rely on that).
      await this.makeDirectories(this.tempDir);
      file = await createTempFile(this.tempDir);
    }
    const { path: temp, fd } = file;
    try {
      await writeAll(fd, data);
      const stamp = nextMtimeSeconds();
      futimesSync(fd, stamp, stamp);
      // Full fsync rather than datasync: the mtime is part of the version and must survive a crash.
      await fsyncFd(fd);
      const version = versionOf(fstatSync(fd, { bigint: true }));
      return { temp, version };
    } catch (e) {
      removeTempFile(temp);
      throw e;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * mkdir -p, then fsyncs the parent of every directory that may be new, so the put that follows
   * cannot be acknowledged while its directory entry is still volatile. That is every directory
   * from `dir` up to the root, not only those this call created: a concurrent put may have created
   * one an instant earlier and not have fsynced it yet.
   */
  private async makeDirectories(dir: string): Promise<void> {
    const first = await fsp.mkdir(dir, { recursive: true });
    const rootCreated = first !== undefined && !first.startsWith(this.rootWithSep);
    for (let created = dir; created !== path.dirname(created); created = path.dirname(created)) {
      if (created === this.root && !rootCreated) break;
      await fsyncDirectory(path.dirname(created));
      if (created === first && rootCreated) break;
    }
  }

  private fileOf(key: string): string {
    const cut = key.lastIndexOf('/');
    const dir = cut < 0 ? this.root : this.dirOf(key.slice(0, cut));
    return this.inside(path.join(dir, this.nameOf(key.slice(cut + 1), key)), key);
  }

  private dirOf(dirKey: string): string {
    const names = dirKey.split('/').map((segment) => this.nameOf(segment, dirKey) + DIR_SUFFIX);
    return this.inside(path.join(this.root, ...names), dirKey);
  }

  private nameOf(segment: string, key: string): string {
    const name = SEGMENTS.encode(segment);
    if (name.length + DIR_SUFFIX.length > MAX_NAME_BYTES) {
      throw new InvalidArgumentError(`object key segment too long for the filesystem. key=${JSON.stringify(key)}`, { key });
    }
    return name;
  }

  /** Encoded segments hold no separator and never start with '.', so this is a second line of defence. */
  private inside(resolved: string, key: string): string {
    if (!resolved.startsWith(this.rootWithSep)) {
      throw new InvalidArgumentError(`object key resolves outside the store root. key=${JSON.stringify(key)}`, { key });
    }
    return resolved;
  }
}
