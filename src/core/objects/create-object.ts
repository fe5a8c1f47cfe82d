import { equalBytes } from '../bytes.js';
import { isTaqubaError } from '../errors.js';
import type { ObjectStore, StoredObject } from './object-store.js';

/** What `createObject` found: ours (stored now, or by an earlier try of the same request), or another writer's object. */
export type CreateResult = { readonly created: true } | { readonly created: false; readonly existing: StoredObject | undefined };

/**
 * A create-only put that tells a lost race from a retried request that had landed: when the key
 * is taken, the object is read back, and holding exactly `data` it counts as ours. The engine's
 * create-only writes (manifests, WAL objects, fences) all carry the writer's identity in their
 * bytes, so equal bytes are the same writer's. `existing` is undefined when the object vanished
 * between the put and the read. Other errors reject as the store's put does.
 */
export async function createObject(store: ObjectStore, key: string, data: Uint8Array): Promise<CreateResult> {
  try {
    await store.put(key, data, { ifNoneMatch: '*' });
    return { created: true };
  } catch (e) {
    if (!isTaqubaError(e, 'PRECONDITION_FAILED')) throw e;
    const existing = await store.get(key);
    return existing && equalBytes(existing.data, data) ? { created: true } : { created: false, existing };
  }
}
