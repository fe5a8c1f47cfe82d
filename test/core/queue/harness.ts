/** Shared helpers of the queue suites: a mock clock, quiet background loops and event barriers. */
import { expect } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/queue.js';
import type { QueueOptions } from '../../../src/core/queue/queue-options.js';
import type { StoreFactory } from '../../support/stores.js';

export type { StoreFactory };

export const silentLogger = { warn: () => undefined };

export interface QueueHarness<S extends ObjectStore = ObjectStore> {
  readonly store: S;
  readonly clock: MockClock;
  readonly path: string;
  /** Opens a writer on the harness store (fencing any earlier one). Background loops never tick on their own. */
  open(options?: QueueOptions): Promise<Queue>;
}

let counter = 0;

export async function makeHarness<S extends ObjectStore>(factory: () => S | Promise<S>): Promise<QueueHarness<S>> {
  const store = await factory();
  const clock = new MockClock(1_700_000_000_000);
  const path = `queue-test-${++counter}`;
  return {
    store,
    clock,
    path,
    open: (options = {}) =>
      Queue.open(store, path, { clock, reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: silentLogger, ...options }),
  };
}

export const b = utf8;
export const s = fromUtf8;

/**
 * Resolves once `check` holds, polling it (real time, never the MockClock) for up to 20 s; fails
 * the test naming `what` otherwise. For work that runs in the background (a worker loop, a reaper
 * tick): the test waits for the outcome it needs, never for a fixed time.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await expect.poll(check, { timeout: 20_000, interval: 2, message: `condition never held: ${what}` }).toBe(true);
}

/**
 * Counts the lookups of `q.getJob`, which `waitForCompletion` uses: a waiter registers for the
 * completion broadcast BEFORE each lookup, so once its lookup has finished no later settlement can
 * be missed. `finished(n)` resolves when n lookups (from any caller) have returned.
 */
export function watchLookups(q: Queue): { readonly started: number; finished(n: number): Promise<void> } {
  const original = q.getJob.bind(q);
  let started = 0;
  let done = 0;
  const waiters = new Set<{ n: number; resolve: () => void }>();
  q.getJob = async (id: string) => {
    started++;
    try {
      return await original(id);
    } finally {
      done++;
      for (const w of [...waiters]) {
        if (done >= w.n) {
          waiters.delete(w);
          w.resolve();
        }
      }
    }
  };
  return {
    get started() {
      return started;
    },
    finished: (n) => (done >= n ? Promise.resolve() : new Promise((resolve) => void waiters.add({ n, resolve }))),
  };
}
