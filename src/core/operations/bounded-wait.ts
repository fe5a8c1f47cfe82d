/**
 * Waits that a carrier can hold: an operation that waits for an outcome (`runWait`, `jobWait`)
 * waits at most `waitMs` (capped) and answers null when nothing came, so the caller asks again;
 * a serving runtime that stops answers its waits at once (null), so its graceful hand-over is not
 * held up and the caller's next ask reaches the next one.
 */
import type { Clock } from '../clock.js';
import { InvalidArgumentError, isTaqubaError } from '../errors.js';
import { show } from '../show.js';

/** Longest single wait of a waiting operation. */
export const MAX_WAIT_MS = 60_000;

/**
 * `wait(signal)`, given up (null) after `waitMs` of `clock` time or when `stopping` aborts.
 * `wait` rejects with CANCELLED when its signal aborts (as `result` waits do). INVALID_ARGUMENT
 * (`invalid_wait`) for a `waitMs` that is not a non-negative number.
 */
export async function waitAtMost<T>(clock: Clock, waitMs: number, stopping: AbortSignal, wait: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
  if (typeof waitMs !== 'number' || !(waitMs >= 0)) throw new InvalidArgumentError(`waitMs must be a non-negative number. waitMs=${show(waitMs)}`, { reason: 'invalid_wait' });
  if (stopping.aborted) return null;
  const timeout = new AbortController();
  const timer = new AbortController();
  void clock.sleep(Math.min(waitMs, MAX_WAIT_MS), timer.signal).then(
    () => timeout.abort(),
    () => undefined,
  );
  const signal = AbortSignal.any([stopping, timeout.signal]);
  try {
    return await wait(signal);
  } catch (e) {
    if (signal.aborted && isTaqubaError(e, 'CANCELLED')) return null;
    throw e;
  } finally {
    timer.abort();
  }
}
