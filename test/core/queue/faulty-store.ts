/** A store wrapper that fails chosen puts/deletes (like a 503), for payload-offload fault tests. */
import { StoreUnavailableError } from '../../../src/core/errors.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../../../src/core/objects/object-store.js';

export class FaultyStore implements ObjectStore {
  /** Fail puts whose key matches, after this many more successful matching puts. */
  failPuts: { match: (key: string) => boolean; after: number } | undefined;
  failDeletes: ((key: string) => boolean) | undefined;

  constructor(readonly inner: ObjectStore) {}

  get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    return this.inner.get(key, options);
  }

  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
    const f = this.failPuts;
    if (f && f.match(key)) {
      if (f.after <= 0) throw new StoreUnavailableError(`injected put failure. key=${key}`);
      f.after--;
    }
    return this.inner.put(key, data, options);
  }

  async delete(key: string): Promise<void> {
    if (this.failDeletes?.(key)) throw new StoreUnavailableError(`injected delete failure. key=${key}`);
    return this.inner.delete(key);
  }

  list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }

  /** Keys under `prefix` (for asserting which payload objects exist). */
  async keys(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for await (const o of this.inner.list(prefix)) out.push(o.key);
    return out;
  }
}
