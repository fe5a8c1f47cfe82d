import { BTree } from '../sorted-map.js';
import { validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from './keys.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject } from './object-store.js';
import { checkPrecondition } from './preconditions.js';


interface Entry {
  data: Uint8Array;
  version: ObjectVersion;
}

/**
 * The reference ObjectStore: objects in an ordered in-memory tree. Its semantics are the
 * contract the other adapters match. Data is copied in and out so callers can never mutate
 * stored bytes. Nothing is durable beyond the instance; every put "is durable" once it resolves.
 *
 * Listing walks the tree from a cursor (O(log n) per object), so it never sorts or copies the
 * key set, and it tolerates puts and deletes while a listing is in progress: each object is
 * yielded at most once, in ascending order, as it is at the moment the cursor reaches it.
 *
 * Errors: INVALID_ARGUMENT (bad key, prefix or range; put data not a Uint8Array), PRECONDITION_FAILED (put preconditions).
 */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new BTree<string, Entry>();
  private nextVersion = 1;

  /** Rejects with INVALID_ARGUMENT on a bad key or range. */
  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    validateObjectKey(key);
    validateGetRange(key, options?.range);
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

  /** Rejects with PRECONDITION_FAILED when a precondition fails (nothing is written), INVALID_ARGUMENT on a bad key or data. */
  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    validateObjectKey(key);
    validatePutData(key, data);
    checkPrecondition(key, options, this.objects.get(key)?.version);
    const version = `m${this.nextVersion++}`;
    this.objects.set(key, { data: data.slice(), version });
    return { version };
  }

  /** Deleting an absent key succeeds. Rejects with INVALID_ARGUMENT on a bad key. */
  async delete(key: string): Promise<void> {
    validateObjectKey(key);
    this.objects.delete(key);
  }

  /** Rejects (on first iteration) with INVALID_ARGUMENT on a bad prefix. */
  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    const startAfter = options?.startAfter;
    // The first candidate is the first key >= prefix, or the first key > startAfter if later.
    let pair = startAfter !== undefined && startAfter >= prefix ? this.objects.nextHigherPair(startAfter) : this.objects.getPairOrNextHigher(prefix);
    while (pair !== undefined && pair[0].startsWith(prefix)) {
      const [key, entry] = pair;
      yield { key, size: entry.data.length, version: entry.version };
      // Re-seek after the yield: the tree may have changed while the consumer held the item.
      pair = this.objects.nextHigherPair(key);
    }
  }

  /** Test helper: the raw bytes under `key` (not a copy), to corrupt in place. */
  rawBytes(key: string): Uint8Array | undefined {
    return this.objects.get(key)?.data;
  }
}
