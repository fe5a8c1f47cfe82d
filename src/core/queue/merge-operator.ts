/**
 * The engine merge operator of a queue store, dispatching on the key's tag: Stats counters sum
 * signed 64-bit little-endian deltas; attempt histories concatenate bytes. Both are associative
 * with `undefined` as identity, as the engine requires.
 */
import { concatBytes } from '../bytes.js';
import { CorruptDataError } from '../errors.js';
import type { MergeOperator } from '../kv/types.js';
import { TAG } from './keys.js';

export function encodeI64(n: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, n), true);
  return out;
}

export function decodeI64(bytes: Uint8Array | undefined): bigint {
  if (bytes === undefined) return 0n;
  if (bytes.length !== 8) throw new CorruptDataError(`counter value is not 8 bytes. length=${bytes.length}`, { length: bytes.length });
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0, true);
}

export const queueMergeOperator: MergeOperator = (key, existing, operand) => {
  switch (key[0]) {
    case TAG.stats:
      return encodeI64(decodeI64(existing) + decodeI64(operand));
    case TAG.history:
      return existing === undefined ? operand : concatBytes(existing, operand);
    default:
      throw new CorruptDataError(`merge on a key without a merge rule. tag=${key[0]}`, { tag: key[0] });
  }
};
