/**
 * State that belongs to a `Queue` handle (the store's one writer) rather than to a runtime: every
 * runtime built on the handle must share it (its locks, its flow cache), and it goes with the
 * handle. `perHandle(create)` gives the accessor; the state is made on first use.
 */
import type { Queue } from '../queue/index.js';

export function perHandle<T>(create: () => T): (queue: Queue) => T {
  const byQueue = new WeakMap<Queue, T>();
  return (queue) => {
    let state = byQueue.get(queue);
    if (state === undefined) {
      state = create();
      byQueue.set(queue, state);
    }
    return state;
  };
}
