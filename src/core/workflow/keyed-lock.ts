/**
 * A per-key async mutex whose map holds only keys in use: an entry is dropped as soon as its last
 * holder and waiter are done, so it never grows with the number of keys ever seen.
 */
export class KeyedLock {
  private readonly tails = new Map<string, { tail: Promise<void>; users: number }>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let slot = this.tails.get(key);
    if (!slot) {
      slot = { tail: Promise.resolve(), users: 0 };
      this.tails.set(key, slot);
    }
    slot.users++;
    const previous = slot.tail;
    let release!: () => void;
    slot.tail = new Promise<void>((r) => (release = r));
    const mine = slot;
    try {
      await previous;
      return await fn();
    } finally {
      release();
      if (--mine.users === 0 && this.tails.get(key) === mine) this.tails.delete(key);
    }
  }

  /** Keys currently held or awaited (tests). */
  get size(): number {
    return this.tails.size;
  }
}
