/**
 * `taquba-workflow/stores/opfs`: an ObjectStore on the origin private file system, for dedicated
 * workers.
 *
 * One file per object, written through sync access handles (write + flush = one fdatasync) to a
 * temporary file and moved over the target, so a put is atomic. Create-only and compare-and-swap
 * are enforced under an in-process per-key lock: run one writer per directory. On the main thread
 * (no sync access handles, and `createWritable` never syncs) every call rejects with
 * UNSUPPORTED_PLATFORM; use the IndexedDB store there. Importing this module touches no browser
 * API. Quota exhaustion surfaces as STORE_PERMISSION with the DOMException as `cause`.
 */
export { OpfsObjectStore, OPFS_HEADER_BYTES } from './opfs-store.js';
export type { OpfsObjectStoreOptions } from './opfs-store.js';
