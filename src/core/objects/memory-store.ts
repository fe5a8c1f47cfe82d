import { PreconditionFailedError } from '../errors.js';
import { validateListPrefix, validateObjectKey } from './keys.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from './object-store.js';

interface Entry {
  data: Uint8Array;
  version: ObjectVersion;
}

/**
 * The reference ObjectStore: a Map in memory. Its semantics are the contract the other adapters
 * match. Data is copied in and out so callers can never mutate stored bytes.
 */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, Entry>();
  private nextVersion = 1;

  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    validateObjectKey(key);
    const entry = this.objects.get(key);
    if (!entry) return undefined;
    const { data } = entry;
    if (options?.range) {
      const start = Math.min(options.range.offset, data.length);
      const end = Math.min(start + options.range.length, data.length);
      return { data: data.slice(start, end), version: entry.version };
    }
    return { data: data.slice(), version: entry.version };
  }

  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validateObjectKey(key);
    const existing = this.objects.get(key);
    if (options?.ifNoneMatch === '*' && existing) {
      throw new PreconditionFailedError(`object already exists. key=${key}`, { key });
    }
    if (options?.ifMatch !== undefined && existing?.version !== options.ifMatch) {
      throw new PreconditionFailedError(`object version does not match. key=${key} expected=${options.ifMatch} actual=${existing?.version ?? 'absent'}`, {
        key,
      });
    }
    const version = `m${this.nextVersion++}`;
    this.objects.set(key, { data: data.slice(), version });
    return { version };
  }

  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    this.objects.delete(key);
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix) && (options?.startAfter === undefined || k > options.startAfter));
    keys.sort();
    for (const key of keys) {
      const entry = this.objects.get(key);
      if (entry) yield { key, size: entry.data.length, version: entry.version };
    }
  }

  /** Test helper: the raw bytes under `key` (not a copy), to corrupt in place. */
  rawBytes(key: string): Uint8Array | undefined {
    return this.objects.get(key)?.data;
  }
}
