import { systemClock } from '../clock.js';
import type { ObjectStore } from '../objects/object-store.js';

const YIELD_EVERY = 64;
/** Keys per batch request on a store with `deleteMany` (S3's DeleteObjects limit). */
const BATCH_KEYS = 1000;

/**
 * Deletes objects the manifest no longer needs, off the flush and compaction path (on S3 a flush
 * would otherwise wait for one DELETE per retired WAL object). A store with a batch API
 * (`deleteMany`) gets one request for everything queued at once, up to BATCH_KEYS keys, which
 * on S3 turns a flush's dozens of DELETEs into one request that does not hold up the next WAL
 * PUT; other stores get single deletes, a few at a time. Best effort: a failed delete leaves an
 * orphan that the next writer's open collects.
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
    const workers = this.store.deleteMany ? 1 : this.concurrency;
    while (this.running < workers && this.keys.length > 0) void this.worker();
  }

  private async worker(): Promise<void> {
    this.running++;
    try {
      let sinceYield = 0;
      const deleteMany = this.store.deleteMany?.bind(this.store);
      while (this.keys.length > 0) {
        if (deleteMany) await deleteMany(this.keys.splice(0, BATCH_KEYS)).catch(() => undefined);
        else await this.store.delete(this.keys.shift()!).catch(() => undefined);
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
