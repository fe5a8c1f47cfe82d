/**
 * The retry rule of a nacked job, beside the settlement that applies it: the delay before the next
 * attempt grows exponentially from the queue's `retryBackoffBaseMs` up to `retryBackoffMaxMs`.
 */
import type { ResolvedQueueConfig } from '../queue-options.js';

/** Nack backoff after attempt `attempts`: min(base·2^(attempts−1), max); 0 when base is 0. */
export function retryBackoffMs(config: ResolvedQueueConfig, attempts: number): number {
  if (config.retryBackoffBaseMs === 0) return 0;
  const exponent = Math.max(0, attempts - 1);
  // 2^exponent overflows to Infinity for huge attempt counts; the cap handles it.
  return Math.min(config.retryBackoffBaseMs * 2 ** exponent, config.retryBackoffMaxMs);
}
