/**
 * The OPFS store's append logs (see core/objects/append-log.ts), where the engine keeps its
 * write-ahead log: the file is created like a create-only put (header written, flushed, moved
 * into place), then one sync access handle stays open on it and an append is `write` +
 * `flush()`. Reads (`getFile()`) work while it is open; removing the file does not (a newer
 * writer's cleanup retries later).
 */
import { StoreUnavailableError } from '../../core/errors.js';
import type { AppendLog, AppendLogStore } from '../../core/objects/append-log.js';
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
  /** Whether the file of `key` exists. Rejects with what the file system threw (unmapped). */
  fileExists(key: string): Promise<boolean>;
  /** Drops the cached directory handles (a directory was removed under one). */
  forgetDirectories(): void;
  /** The error for a sync access handle `write()` that did not report writing a positive number of bytes. */
  writeFailure(written: number, file: string, at: number): Error;
}

export class OpfsAppendLogs implements AppendLogStore {
  constructor(private readonly platform: OpfsLogPlatform) {}

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
      return await this.platform.fileExists(key);
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
    try {
      access?.close();
    } catch {
      // already unusable; nothing to release
    }
    return Promise.resolve();
  }
}
