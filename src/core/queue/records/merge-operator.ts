/**
 * The engine merge operator of a queue store, dispatching on the key's tag: Stats counters sum
 * signed 64-bit little-endian deltas; attempt histories concatenate bytes. Both are associative
 * with `undefined` as identity, as the engine requires.
 */
import { concatBytes } from '../../bytes.js';
import { CorruptDataError } from '../../errors.js';
import type { MergeOperator } from '../../kv/types.js';
import { TAG } from './keys.js';

const TWO_32 = 2 ** 32;

// Counter deltas and small sums repeat endlessly; their encodings are shared (never mutated).
const SMALL_MIN = -64;
const SMALL_MAX = 256;
const small: Uint8Array[] = [];

/**
 * Signed 64-bit little-endian. Counters stay far below 2^53, so plain numbers are exact. Small
 * integers return a shared array: treat the result as immutable.
 */
export function encodeI64(n: bigint | number): Uint8Array {
  if (typeof n === 'number' && Number.isInteger(n) && n >= SMALL_MIN && n <= SMALL_MAX) {
    return (small[n - SMALL_MIN] ??= encodeI64Fresh(n));
  }
  return encodeI64Fresh(n);
}

function encodeI64Fresh(n: bigint | number): Uint8Array {
  const out = new Uint8Array(8);
  if (typeof n === 'bigint') {
    new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, n), true);
    return out;
  }
  // Byte writes, no DataView per call (this runs for every counter merge the engine resolves).
  const hi = Math.floor(n / TWO_32);
  const lo = n - hi * TWO_32;
  out[0] = lo & 0xff;
  out[1] = (lo >>> 8) & 0xff;
  out[2] = (lo >>> 16) & 0xff;
  out[3] = lo >>> 24;
  out[4] = hi & 0xff;
  out[5] = (hi >>> 8) & 0xff;
  out[6] = (hi >>> 16) & 0xff;
  out[7] = (hi >>> 24) & 0xff;
  return out;
}

function checkLength(bytes: Uint8Array): void {
  if (bytes.length !== 8) throw new CorruptDataError(`counter value is not 8 bytes. length=${bytes.length}`, { length: bytes.length });
}

export function decodeI64(bytes: Uint8Array | undefined): bigint {
  if (bytes === undefined) return 0n;
  checkLength(bytes);
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0, true);
}

/** The counter as a number (exact below 2^53). */
export function decodeI64Number(bytes: Uint8Array | undefined): number {
  if (bytes === undefined) return 0;
  checkLength(bytes);
  const lo = (bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (bytes[3] << 24)) >>> 0;
  const hi = bytes[4] | (bytes[5] << 8) | (bytes[6] << 16) | (bytes[7] << 24);
  return hi * TWO_32 + lo;
}

export const queueMergeOperator: MergeOperator = (key, existing, operand) => {
  switch (key[0]) {
    case TAG.stats:
      return encodeI64(decodeI64Number(existing) + decodeI64Number(operand));
    case TAG.history:
      return existing === undefined ? operand : concatBytes(existing, operand);
    default:
      throw new CorruptDataError(`merge on a key without a merge rule. tag=${key[0]}`, { tag: key[0] });
  }
};
