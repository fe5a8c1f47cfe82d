import { InvalidConfigError } from '../errors.js';
import type { VersionedEntry } from './entry.js';
import type { MergeOperator } from './types.js';

/**
 * Folds a chain of versions of one key, newest first, down to the first put or delete.
 * Returns a put (or delete) when a base was found or `atBottom` says nothing older exists, else a
 * merge entry holding the combined operands (valid because the operator is associative).
 * The result carries the newest version's seq.
 */
export function resolveChain(
  key: Uint8Array,
  chain: readonly VersionedEntry[],
  merge: MergeOperator | undefined,
  atBottom: boolean,
): VersionedEntry {
  const newest = chain[0];
  if (newest.kind !== 'merge') return newest;
  if (!merge) throw new InvalidConfigError('merge entry found but no mergeOperator configured');
  const baseIndex = chain.findIndex((v) => v.kind !== 'merge');
  const operandsEnd = baseIndex < 0 ? chain.length : baseIndex;
  let acc: Uint8Array | undefined = baseIndex >= 0 && chain[baseIndex].kind === 'put' ? chain[baseIndex].value : undefined;
  for (let i = operandsEnd - 1; i >= 0; i--) acc = merge(key, acc, chain[i].value);
  const resolved = baseIndex >= 0 || atBottom;
  return { key, seq: newest.seq, kind: resolved ? 'put' : 'merge', value: acc ?? new Uint8Array(0) };
}
