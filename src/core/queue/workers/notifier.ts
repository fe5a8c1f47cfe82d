/**
 * Wakeups without busy polling.
 *
 * `Notify` has "notify one, with a single stored permit" semantics: each committed Pending insert
 * wakes at most one registered waiter, or stores one permit that the next waiter consumes at once.
 * Waiters register BEFORE they try to claim, so an insert landing between an empty scan and the
 * wait is never lost. `Broadcast` wakes every registered listener and stores nothing (completion).
 */
import { startTimer, type Clock } from '../../clock.js';

/** A registration taken before looking for work. */
export interface Waiter {
  /** Resolves true on a notification, false when `timeoutMs` elapses or `signal` aborts. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * Unregisters, and ends a `wait` still pending (it resolves false): a caller that stopped
   * waiting for another reason must not leave its timer and its listener on `signal` behind.
   * A notification this waiter received but never used is passed on.
   */
  dispose(): void;
}

const noop = (): void => undefined;

interface Slot {
  notified: boolean;
  consumed: boolean;
  wake: (() => void) | undefined;
  /** Ends the pending wait's sleep (set while a wait is pending). */
  endWait: (() => void) | undefined;
}

export class Notify {
  private permit = false;
  private readonly slots: Slot[] = [];

  constructor(private readonly clock: Clock) {}

  /** Wakes one registered waiter, or stores the permit if none is registered. */
  notifyOne(): void {
    const slot = this.slots.shift();
    if (slot) {
      slot.notified = true;
      slot.wake?.();
    } else {
      this.permit = true;
    }
  }

  /** Number of waiters currently registered (tests). */
  get waiting(): number {
    return this.slots.length;
  }

  /** Registers a waiter now. A stored permit is consumed at once. */
  register(): Waiter {
    const slot: Slot = { notified: false, consumed: false, wake: undefined, endWait: undefined };
    if (this.permit) {
      this.permit = false;
      slot.notified = true;
    } else {
      this.slots.push(slot);
    }
    return {
      wait: async (timeoutMs, signal) => {
        if (slot.notified) {
          slot.consumed = true;
          return true;
        }
        if (signal?.aborted || timeoutMs <= 0) return false;
        // One promise, ended by whichever comes first: the notification, the timer, the
        // signal, or `dispose`. A timer rather than a `sleep` with a signal: most waits are cut
        // short, and cancelling a sleep costs an AbortController and an abort event each time.
        let cancelTimer = noop;
        let onAbort: (() => void) | undefined;
        try {
          await new Promise<void>((resolve) => {
            slot.wake = resolve;
            slot.endWait = resolve;
            if (signal) {
              onAbort = resolve;
              signal.addEventListener('abort', onAbort, { once: true });
            }
            cancelTimer = startTimer(this.clock, timeoutMs, resolve);
          });
        } finally {
          cancelTimer();
          if (onAbort) signal?.removeEventListener('abort', onAbort);
          slot.wake = undefined;
          slot.endWait = undefined;
        }
        if (slot.notified) {
          slot.consumed = true;
          return true;
        }
        return false;
      },
      dispose: () => {
        slot.endWait?.();
        const i = this.slots.indexOf(slot);
        if (i >= 0) this.slots.splice(i, 1);
        else if (slot.notified && !slot.consumed) {
          slot.consumed = true;
          this.notifyOne();
        }
      },
    };
  }
}

/** Notify-all with no stored state. */
export class Broadcast {
  private listeners = new Set<() => void>();

  notifyAll(): void {
    const current = this.listeners;
    this.listeners = new Set();
    for (const l of current) l();
  }

  /** Registers for the next broadcast; the returned promise resolves on it. */
  register(): { readonly fired: Promise<void>; dispose(): void } {
    let listener!: () => void;
    const fired = new Promise<void>((resolve) => {
      listener = resolve;
    });
    this.listeners.add(listener);
    return { fired, dispose: () => this.listeners.delete(listener) };
  }
}

/** One Notify per queue, created on demand. */
export class QueueNotifiers {
  private readonly byQueue = new Map<string, Notify>();

  constructor(private readonly clock: Clock) {}

  get(queue: string): Notify {
    let n = this.byQueue.get(queue);
    if (!n) {
      n = new Notify(this.clock);
      this.byQueue.set(queue, n);
    }
    return n;
  }
}
