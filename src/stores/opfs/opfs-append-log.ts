/**
 * The OPFS store's append logs (see core/objects/append-log.ts), where the engine keeps its
 * write-ahead log: the file is created like a create-only put (header written, flushed, moved
 * into place), then one sync access handle stays open on it and an append is `write` +
 * `flush()`. Reads (`getFile()`) work while it is open; removing the file does not (a newer
 * writer's cleanup retries later).
 *
 * Seal flags (core/objects/append-log.ts, `SealFlagStore`) are objects, empty while lowered, whose
 * holder keeps a 'readwrite-unsafe' sync access handle open, a mode other workers' handles can
 * share: an opener raises a flag by writing a 1 byte through its own handle and flushing, the
 * holder reads that byte through its handle, a local call instead of a directory lookup. Where
 * the browser knows no modes the handle would lock the file, so no flag is held and the writer
 * looks the seal up itself.
 */
import { StoreUnavailableError } from '../../core/errors.js';
import type { AppendLog, AppendLogStore, SealFlag, SealFlagStore } from '../../core/objects/append-log.js';
import { validateObjectKey, validatePutData } from '../../core/objects/keys.js';
import { domErrorName } from '../shared/dom-errors.js';
import { toOpfsError } from './opfs-errors.js';
import type { OpfsFileHandle, SyncAccessHandle } from './opfs-types.js';

/** What the store lends its logs: its file header, create-only file creation, its directory cache, write-failure mapping. */
export interface OpfsLogPlatform {
  /** Bytes of the header in front of every object's data in its file. */
  readonly headerBytes: number;
  /**
   * Creates the file of `key` holding only a fresh header, create-only (PRECONDITION_FAILED when
   * it exists): written to a temporary file, flushed and moved into place under the key's lock.
   * Rejects with what the file system threw (unmapped).
   */
  createFile(key: string): Promise<OpfsFileHandle>;
  /** The file of `key`, if it exists. Rejects with what the file system threw (unmapped). */
  findFile(key: string): Promise<OpfsFileHandle | undefined>;
  /** Drops the cached directory handles (a directory was removed under one). */
  forgetDirectories(): void;
  /** The error for a sync access handle `write()` that did not report writing a positive number of bytes. */
  writeFailure(written: number, file: string, at: number): Error;
}

export class OpfsAppendLogs implements AppendLogStore {
  readonly flags: SealFlagStore;

  constructor(private readonly platform: OpfsLogPlatform) {
    this.flags = new OpfsSealFlags(platform);
  }

  async createLog(key: string): Promise<AppendLog> {
    validateObjectKey(key);
    try {
      const file = await this.platform.createFile(key);
      return new OpfsAppendLog(key, await file.createSyncAccessHandle!(), this.platform);
    } catch (e) {
      if (domErrorName(e) === 'NotFoundError') this.platform.forgetDirectories();
      throw toOpfsError('put', `key=${key} (creating a log)`, e);
    }
  }

  async exists(key: string): Promise<boolean> {
    validateObjectKey(key);
    try {
      return (await this.platform.findFile(key)) !== undefined;
    } catch (e) {
      throw toOpfsError('get', `key=${key}`, e);
    }
  }
}

/** An append log on one open sync access handle (see OpfsObjectStore.appendLogs). */
class OpfsAppendLog implements AppendLog {
  size = 0;
  private access: SyncAccessHandle | undefined;

  constructor(
    readonly key: string,
    access: SyncAccessHandle,
    private readonly platform: OpfsLogPlatform,
  ) {
    this.access = access;
  }

  append(data: Uint8Array): Promise<void> {
    try {
      validatePutData(this.key, data, 'append');
    } catch (e) {
      return Promise.reject(e);
    }
    const access = this.access;
    if (!access) return Promise.reject(new StoreUnavailableError(`log is closed. key=${this.key}`, { key: this.key }));
    try {
      const base = this.platform.headerBytes + this.size;
      for (let done = 0; done < data.length; ) {
        const written = access.write(data.subarray(done), { at: base + done });
        if (!(written > 0 && written <= data.length - done)) throw this.platform.writeFailure(written, this.key, base + done);
        done += written;
      }
      access.flush();
      this.size += data.length;
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(toOpfsError('put', `key=${this.key} (appending)`, e));
    }
  }

  close(): Promise<void> {
    const access = this.access;
    this.access = undefined;
    return release(access);
  }
}

/** A flag's object: empty while lowered, this one byte once raised. */
const RAISED = Uint8Array.of(1);

/** The OPFS store's seal flags: see the module comment. */
class OpfsSealFlags implements SealFlagStore {
  constructor(private readonly platform: OpfsLogPlatform) {}

  async create(key: string): Promise<SealFlag | undefined> {
    validateObjectKey(key);
    let access: SyncAccessHandle | undefined;
    try {
      const file = await this.platform.createFile(key);
      access = await file.createSyncAccessHandle!({ mode: 'readwrite-unsafe' });
      if (access.mode !== 'readwrite-unsafe') {
        await release(access);
        return undefined;
      }
      return new OpfsSealFlag(key, access, this.platform.headerBytes);
    } catch (e) {
      await release(access);
      if (domErrorName(e) === 'NotFoundError') this.platform.forgetDirectories();
      throw toOpfsError('put', `key=${key} (creating a seal flag)`, e);
    }
  }

  async raise(key: string): Promise<void> {
    validateObjectKey(key);
    try {
      const file = await this.platform.findFile(key);
      if (!file) return;
      const access = await file.createSyncAccessHandle!({ mode: 'readwrite-unsafe' });
      try {
        const written = access.write(RAISED, { at: this.platform.headerBytes });
        if (written !== 1) throw this.platform.writeFailure(written, key, this.platform.headerBytes);
        access.flush();
      } finally {
        await release(access);
      }
    } catch (e) {
      throw toOpfsError('put', `key=${key} (raising a seal flag)`, e);
    }
  }
}

class OpfsSealFlag implements SealFlag {
  private readonly byte = new Uint8Array(1);
  private access: SyncAccessHandle | undefined;

  constructor(
    private readonly key: string,
    access: SyncAccessHandle,
    private readonly at: number,
  ) {
    this.access = access;
  }

  raised(): Promise<boolean> {
    const access = this.access;
    if (!access) return Promise.reject(new StoreUnavailableError(`seal flag is closed. key=${this.key}`, { key: this.key }));
    try {
      this.byte[0] = 0;
      // An empty flag reads nothing: lowered.
      access.read(this.byte, { at: this.at });
      return Promise.resolve(this.byte[0] === 1);
    } catch (e) {
      return Promise.reject(toOpfsError('get', `key=${this.key} (reading a seal flag)`, e));
    }
  }

  close(): Promise<void> {
    const access = this.access;
    this.access = undefined;
    return release(access);
  }
}

/** Closes a sync access handle, if any (safe twice: the caller forgets it first). */
function release(access: SyncAccessHandle | undefined): Promise<void> {
  try {
    access?.close();
  } catch {
    // already unusable; nothing to release
  }
  return Promise.resolve();
}
