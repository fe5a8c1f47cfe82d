/**
 * Layer 2: the transactional, ordered KV engine over an ObjectStore.
 *
 * Owns: the WAL (group commit, fencing), memtables, sorted tables, the manifest, compaction and
 * garbage collection. Every durable byte is a create-only object: `<path>/manifest/<id>`,
 * `<path>/wal/<id>`, `<path>/sst/<epoch>-<n>.sst`; except on stores with append logs, where the
 * WAL is `<path>/log/<epoch>-<n>` segments grown by appends (docs/rfcs/0002-wal-append-log.md). Folders follow the protocol: fencing/ (open as
 * writer, kept fences), recovery/ (replay at open), manifest/ (the manifest sequence, publish), wal/ (group commit, replay),
 * tables/ (sorted tables, block cache), flush/ (memtable flushes, backpressure), compaction/ (merges), gc/ (deletes, garbage);
 * kv-db.ts is the public face over them. Errors: CONFLICT (retry the transaction), FENCED (a newer writer owns
 * the store), CLOSED (closed or failed; reopen), CORRUPT_DATA (names the object),
 * STORE_UNAVAILABLE / STORE_PERMISSION from the store.
 * Never: acknowledges a commit that is not stored, or lets a fenced writer add to history.
 */
export { KvDb, type TransactionOptions } from './kv-db.js';
export { KvReader } from './kv-reader.js';
export { Transaction, MAX_KEY_BYTES, MAX_VALUE_BYTES } from './transaction.js';
export type { KvDbOptions, FaultHook, WalKind } from './kv-options.js';
export type { CommitOptions, KvEntry, KvReadable, MergeOperator, KvWriteOptions, ScanRange, WriteOp } from './types.js';
