import { compareBytes, prefixEnd, startsWith } from '../bytes.js';
import { InvalidArgumentError } from '../errors.js';
import type { ScanRange } from './types.js';

/** A ScanRange reduced to a lower bound and an exclusive upper bound. */
export interface Bounds {
  readonly lower: Uint8Array | undefined;
  readonly lowerExclusive: boolean;
  readonly upper: Uint8Array | undefined;
  readonly limit: number;
  readonly fillCache: boolean;
}

export function resolveBounds(range: ScanRange = {}): Bounds {
  const { prefix, start, end } = range;
  if (range.limit !== undefined && (!Number.isInteger(range.limit) || range.limit < 0)) {
    throw new InvalidArgumentError(`scan limit must be a non-negative integer. limit=${String(range.limit)}`, { limit: String(range.limit) });
  }
  let lower = start;
  let lowerExclusive = range.startExclusive === true && start !== undefined;
  let upper = end;
  if (prefix !== undefined) {
    if (lower === undefined || compareBytes(lower, prefix) < 0) {
      // A start below the prefix means "from the beginning of the prefix".
      lower = prefix;
      lowerExclusive = false;
    } else if (!startsWith(lower, prefix) && compareBytes(lower, prefix) > 0) {
      lower = prefixEnd(prefix) ?? lower;
      lowerExclusive = false;
    }
    const pEnd = prefixEnd(prefix);
    if (pEnd !== undefined && (upper === undefined || compareBytes(pEnd, upper) < 0)) upper = pEnd;
  }
  return { lower, lowerExclusive, upper, limit: range.limit ?? Number.POSITIVE_INFINITY, fillCache: range.fillCache ?? true };
}

/** True when `key` is at or past the exclusive upper bound. */
export function pastUpper(key: Uint8Array, bounds: Bounds): boolean {
  return bounds.upper !== undefined && compareBytes(key, bounds.upper) >= 0;
}
