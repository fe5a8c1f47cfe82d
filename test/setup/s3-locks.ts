/** Small async locks for the S3 test front. */

/** One queue per key: `run(key, fn)` calls for a key run one at a time, in arrival order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** A fair (FIFO) readers-writer lock: shared holders run together, an exclusive holder alone. */
export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly queue: { exclusive: boolean; grant: () => void }[] = [];

  /** Resolves with the release function once the lock is held. */
  acquire(exclusive: boolean): Promise<() => void> {
    return new Promise((resolve) => {
      this.queue.push({
        exclusive,
        grant: () => {
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            if (exclusive) this.writer = false;
            else this.readers--;
            this.pump();
          });
        },
      });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const next = this.queue[0];
      if (next.exclusive && this.readers > 0) return;
      this.queue.shift();
      if (next.exclusive) this.writer = true;
      else this.readers++;
      next.grant();
    }
  }
}
