/** Shared helpers of the queue suites: a store factory, a mock clock and quiet background loops. */
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/queue.js';
import type { QueueOptions } from '../../../src/core/queue/queue-options.js';

export type StoreFactory = () => ObjectStore | Promise<ObjectStore>;

export const silentLogger = { warn: () => undefined };

export interface QueueHarness {
  readonly store: ObjectStore;
  readonly clock: MockClock;
  readonly path: string;
  /** Opens a writer on the harness store (fencing any earlier one). Background loops never tick on their own. */
  open(options?: QueueOptions): Promise<Queue>;
}

let counter = 0;

export async function makeHarness(factory: StoreFactory): Promise<QueueHarness> {
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

/** Lets pending promise chains and the engine's next-macrotask flush run. */
export function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 5));
}
