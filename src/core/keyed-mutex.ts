/**
 * An async mutex per key: holders of one key run one at a time, in arrival order; other keys do
 * not wait. An uncontended holder starts in the same turn (no await before `fn`). The map holds
 * only keys in use: an entry is dropped as soon as its last holder and waiter are done, so it never
 * grows with the number of keys ever seen.
 *
 * The one copy used by the queue's claim locks, the workflow runtime's submit and signal locks,
 * and the per-file (fs) and per-key (OPFS) locks of the directory stores.
 */
export class KeyedMutex {
  /** Per key, the promise the next arrival waits for: settles when every earlier holder is done. */
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous === undefined ? current : previous.then(() => current);
    this.tails.set(key, tail);
    if (previous !== undefined) await previous;
    try {
      return await fn();
    } finally {
      release();
      // Still the last arrival: nobody waits on this key any more.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys currently held or awaited (tests). */
  get size(): number {
    return this.tails.size;
  }
}
