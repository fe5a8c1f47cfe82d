import { systemClock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';

const YIELD_EVERY = 64;

/**
 * Deletes objects the manifest no longer needs, a few at a time, off the flush and compaction
 * path (on S3 a flush would otherwise wait for one DELETE per retired WAL object). Best effort:
 * a failed delete leaves an orphan that the next writer's open collects.
 */
export class DeleteQueue {
  private readonly keys: string[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly concurrency = 8,
  ) {}

  add(keys: Iterable<string>): void {
    for (const key of keys) this.keys.push(key);
    while (this.running < this.concurrency && this.keys.length > 0) void this.worker();
  }

  private async worker(): Promise<void> {
    this.running++;
    try {
      let sinceYield = 0;
      for (let key = this.keys.shift(); key !== undefined; key = this.keys.shift()) {
        await this.store.delete(key).catch(() => undefined);
        // A store that answers at once (memory) would otherwise run thousands of deletes in
        // one unbroken chain of microtasks and starve timers.
        if (++sinceYield % YIELD_EVERY === 0) await systemClock.sleep(0);
      }
    } finally {
      this.running--;
      if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Resolves when every queued delete has been attempted. */
  idle(): Promise<void> {
    if (this.running === 0 && this.keys.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
