/**
 * The Node host: the filesystem object store (and, in later issues, process integration).
 * Never import this entry from browser code.
 */
export { FileSystemObjectStore } from './fs-store.js';
export type { FileSystemObjectStoreOptions } from './fs-store.js';
export { acquireProcessLock } from './process-lock.js';
export type { ProcessLock, ProcessLockOptions } from './process-lock.js';
