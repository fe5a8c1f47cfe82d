import { validateObjectKey } from './keys.js';
import type { ObjectStore } from './object-store.js';

/** Concurrent single deletes when the store has no batch API. */
const SINGLE_DELETE_CONCURRENCY = 8;

/**
 * Deletes `keys` from `store`: in batches through `deleteMany` when the store has one, else with
 * a few single deletes at a time. Rejects with INVALID_ARGUMENT for a bad key before deleting
 * anything, else with the first failure after every key was tried.
 */
export async function deleteObjects(store: ObjectStore, keys: readonly string[]): Promise<void> {
  for (const key of keys) validateObjectKey(key);
  if (keys.length === 0) return;
  if (store.deleteMany) return store.deleteMany(keys);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++]!;
      try {
        await store.delete(key);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SINGLE_DELETE_CONCURRENCY, keys.length) }, worker));
  if (failure) throw failure.error;
}
