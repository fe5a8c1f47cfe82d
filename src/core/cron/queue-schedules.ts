/**
 * What every scheduler on one queue handle shares: a lock per schedule name (a firing, a
 * redefinition and a delete of one schedule run one at a time, so two schedulers never both see a
 * fire time as due) and the wakeup of every scheduler's loop when a schedule changes. The handle
 * is the store's single writer, so this is all the coordination schedules need: another process
 * writes only after opening the store as its writer, which fences this handle.
 */
import { KeyedMutex } from '../keyed-mutex.js';
import type { Queue } from '../queue/index.js';

interface Shared {
  readonly locks: KeyedMutex;
  readonly listeners: Set<() => void>;
}

const byQueue = new WeakMap<Queue, Shared>();

function sharedOf(queue: Queue): Shared {
  let shared = byQueue.get(queue);
  if (!shared) {
    shared = { locks: new KeyedMutex(), listeners: new Set() };
    byQueue.set(queue, shared);
  }
  return shared;
}

/** Runs `fn` holding the lock of schedule `name` on `queue`. */
export function withScheduleLock<T>(queue: Queue, name: string, fn: () => Promise<T>): Promise<T> {
  return sharedOf(queue).locks.run(name, fn);
}

/** Tells every scheduler loop on `queue` that a schedule changed. */
export function notifySchedulesChanged(queue: Queue): void {
  for (const listener of sharedOf(queue).listeners) listener();
}

/** Calls `listener` on every change until the returned function is called. */
export function onSchedulesChanged(queue: Queue, listener: () => void): () => void {
  const { listeners } = sharedOf(queue);
  listeners.add(listener);
  return () => listeners.delete(listener);
}
