/**
 * Fixtures for the browser-only stores (see stores.ts for the others): each call of a factory
 * gets a fresh database or directory; everything is closed and deleted after the file.
 */
import { afterAll } from 'vitest';
import { IndexedDbObjectStore } from '../../src/stores/indexeddb/index.js';
import { OpfsWorkerClient, type WorkerOpfsStore } from '../stores/opfs/opfs-worker-client.js';
// Type-only: stores.ts itself imports Node modules and must not load in the browser.
import type { StoreFixture } from './stores.js';

let counter = 0;
const unique = (label: string): string => `${label}-${Date.now().toString(36)}-${counter++}`;

/** IndexedDbObjectStore on a fresh database per store. */
export function indexedDbStore(label = 'test'): StoreFixture<IndexedDbObjectStore> {
  const opened: { store: IndexedDbObjectStore; name: string }[] = [];
  afterAll(async () => {
    for (const { store, name } of opened.splice(0)) {
      await store.close().catch(() => undefined);
      await IndexedDbObjectStore.deleteDatabase(name).catch(() => undefined);
    }
  });
  return {
    name: 'indexeddb store',
    factory: async () => {
      const name = unique(label);
      const store = await IndexedDbObjectStore.open({ name });
      opened.push({ store, name });
      return store;
    },
  };
}

/**
 * OpfsObjectStore in a dedicated worker (the sync-access-handle path; see opfs-worker-client.ts),
 * on a fresh directory per store. `client` is the file's worker, for raw file operations.
 */
export function opfsStore(label = 'test', options: { readonly appendLogs?: boolean } = {}): StoreFixture<WorkerOpfsStore> & { readonly client: OpfsWorkerClient } {
  const client = new OpfsWorkerClient();
  const opened: { store: WorkerOpfsStore; directory: string }[] = [];
  afterAll(async () => {
    for (const { store, directory } of opened.splice(0)) {
      await store.close().catch(() => undefined);
      await client.call('deleteDirectory', directory).catch(() => undefined);
    }
    client.terminate();
  });
  return {
    name: 'opfs store (in a dedicated worker)',
    client,
    factory: async () => {
      const directory = `taquba-test/${unique(label)}`;
      const store = await client.open(directory, undefined, options);
      opened.push({ store, directory });
      return store;
    },
  };
}
