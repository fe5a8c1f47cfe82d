/** An async mutex per key (per queue): holders of one key run one at a time, in arrival order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Uncontended (the common case): no wait at all, so the holder starts in this same turn.
    const tail = previous === undefined ? current : previous.then(() => current);
    this.tails.set(key, tail);
    if (previous !== undefined) await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
