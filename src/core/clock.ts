/**
 * Time enters the core only through a Clock, so tests drive leases, backoff, scheduling and
 * retention with a MockClock instead of waiting.
 */
import { yieldToEventLoop } from './event-loop.js';

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: calls `onFire` after `ms` of this clock's time unless the returned function is
   * called first. For waits that are usually cut short (a worker's idle wait, a lease keeper): a
   * `sleep` with a signal costs an AbortController, a listener and an event per wait. Where a clock
   * lacks it, callers use `sleep` (see {@link startTimer}).
   */
  startTimer?(ms: number, onFire: () => void): () => void;
}

const noop = (): void => undefined;
const TIMER_CANCELLED: unknown = Object.freeze({ reason: 'timer cancelled' });

/** `clock.startTimer`, or the same through `clock.sleep` and an AbortController where it has none. */
export function startTimer(clock: Clock, ms: number, onFire: () => void): () => void {
  if (clock.startTimer) return clock.startTimer(ms, onFire);
  const stop = new AbortController();
  clock.sleep(ms, stop.signal).then(onFire, noop);
  // An explicit reason: a bare abort() builds a DOMException each time.
  return () => stop.abort(TIMER_CANCELLED);
}

/** A clock's `sleep` through its own `startTimer`: the timer is cancelled when `signal` aborts. */
function sleepOnTimer(clock: Required<Clock>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = clock.startTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The largest delay setTimeout honours (a signed 32-bit millisecond count). */
const MAX_TIMER_MS = 0x7fffffff;

/** Wall-clock time and real timers. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  startTimer(ms: number, onFire: () => void): () => void {
    // Timers overflow past 2^31-1 ms (about 24.8 days) and would fire at once: longer ones are
    // chained. A non-positive or NaN duration is one zero-delay timer; Infinity never fires.
    let remaining = ms > 0 ? ms : 0;
    let handle: unknown;
    const arm = (): void => {
      const step = Math.min(remaining, MAX_TIMER_MS);
      remaining -= step;
      handle = setTimeout(() => (remaining > 0 ? arm() : onFire()), step);
    };
    arm();
    return () => clearTimeout(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimer(this, ms, signal);
  }
}

/** The default clock instance. */
export const systemClock: Clock = new SystemClock();

interface Sleeper {
  wakeAt: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` moves time forward and resolves every
 * sleeper whose deadline has passed, in deadline order, yielding to the event loop between them
 * so that code woken by one timer runs before the next fires.
 */
export class MockClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOnTimer(this, ms, signal);
  }

  startTimer(ms: number, onFire: () => void): () => void {
    const sleeper: Sleeper = { wakeAt: this.current + (ms > 0 ? ms : 0), resolve: onFire };
    this.sleepers.push(sleeper);
    return () => {
      this.sleepers = this.sleepers.filter((s) => s !== sleeper);
    };
  }

  /** Number of sleepers (sleeps and timers) currently waiting (useful to wait until a loop has parked). */
  get pendingSleepers(): number {
    return this.sleepers.length;
  }

  /**
   * Moves time forward by `ms` (never backwards: a negative or NaN `ms` counts as 0) and wakes due
   * sleepers in time order, one event-loop turn after each (so what it started runs first).
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + (ms > 0 ? ms : 0);
    for (;;) {
      this.sleepers.sort((a, b) => a.wakeAt - b.wakeAt);
      const next = this.sleepers[0];
      if (!next || next.wakeAt > target) break;
      this.sleepers.shift();
      this.current = Math.max(this.current, next.wakeAt);
      next.resolve();
      await yieldToEventLoop();
    }
    // max: an overlapping advance() may already have moved past this target.
    this.current = Math.max(this.current, target);
    await yieldToEventLoop();
  }

  /** Sets the time directly (never backwards). */
  async set(ms: number): Promise<void> {
    if (ms > this.current) await this.advance(ms - this.current);
  }
}

