/**
 * The browser benchmarks' stores (worker side): a fresh IndexedDB database or OPFS directory per
 * call, with a `dispose` that closes and deletes it. Imported by `browser-chain.ts` and
 * `browser-latency.ts`; loads each store's module only when it is used.
 */
import type { ObjectStore } from '../src/core/objects/object-store.js';

export type BrowserStore = 'idb' | 'opfs';

export async function openStore(kind: BrowserStore, label: string): Promise<{ store: ObjectStore; dispose(): Promise<void> }> {
  const name = `bench-${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  if (kind === 'idb') {
    const { IndexedDbObjectStore } = await import('../src/stores/indexeddb/index.js');
    const store = await IndexedDbObjectStore.open({ name });
    return {
      store,
      dispose: async () => {
        await store.close();
        await IndexedDbObjectStore.deleteDatabase(name);
      },
    };
  }
  const { OpfsObjectStore } = await import('../src/stores/opfs/index.js');
  const directory = `taquba-bench/${name}`;
  const store = await OpfsObjectStore.open({ directory });
  return {
    store,
    dispose: async () => {
      await store.close();
      await OpfsObjectStore.deleteDirectory(directory);
    },
  };
}
