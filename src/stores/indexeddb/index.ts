/**
 * `taquba-workflow/stores/indexeddb`: an ObjectStore on IndexedDB, for browser pages and workers.
 *
 * One database per store name, one record per object, preconditions checked inside one
 * read-write transaction (atomic across tabs), strict durability for every write. Importing this
 * module touches no browser API; opening the store where IndexedDB is missing rejects with
 * UNSUPPORTED_PLATFORM. Quota exhaustion surfaces as STORE_PERMISSION with the DOMException as
 * `cause`.
 */
export { IndexedDbObjectStore, INLINE_MAX_BYTES, indexedDbDatabaseName } from './indexeddb-store.js';
export type { IndexedDbObjectStoreOptions } from './indexeddb-store.js';
