/**
 * The ordered map under memtables and caller-side indexes: `sorted-btree` (a well-kept B+ tree),
 * resolved here once because it is CommonJS: Node's ESM loader hands back the whole
 * `module.exports` as the default import while bundlers unwrap `default` for us.
 */
import * as btreeModule from 'sorted-btree';

type BTreeClass = typeof btreeModule.default;

const imported: unknown = btreeModule.default;
export const BTree: BTreeClass =
  typeof imported === 'function' ? (imported as BTreeClass) : ((imported as { default: BTreeClass }).default);

export type BTreeMap<K, V> = InstanceType<typeof btreeModule.default<K, V>>;
