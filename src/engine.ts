/**
 * `taquba-workflow/engine`: the layers under the queue, for adapter authors and direct engine use.
 *
 * The object-store contract beyond the `ObjectStore` type itself (which the root entry exports
 * with `MemoryObjectStore`): the key, prefix, range and data rules every adapter enforces, the
 * option and result types of its methods, writer locks and append logs. And the transactional
 * ordered KV engine the queue is built on: `KvDb` (a writer), `KvReader` (a read-only observer),
 * `Transaction`, their options and limits. An app that runs workflows needs none of it.
 *
 * Every name is listed here (no `export *`); `test/api/public-api.json` holds the list.
 */

// Objects (layer 1): what an ObjectStore adapter implements and checks.
export {
  deleteObjects,
  MAX_OBJECT_KEY_LENGTH,
  validateGetRange,
  validateListPrefix,
  validateObjectKey,
  validatePutData,
  type AppendLog,
  type AppendLogStore,
  type SealFlag,
  type SealFlagStore,
  type GetOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectVersion,
  type PutOptions,
  type StoredObject,
  type WriterLock,
} from './core/objects/index.js';

// Engine (layer 2): the transactional ordered KV store.
export {
  KvDb,
  KvReader,
  Transaction,
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  type CommitOptions,
  type KvDbOptions,
  type KvEntry,
  type KvReadable,
  type KvWriteOptions,
  type MergeOperator,
  type ScanRange,
  type TransactionOptions,
  type WalKind,
  type WriteOp,
} from './core/kv/index.js';
