import { yieldToEventLoop } from '../../event-loop.js';
import { deleteObjects } from '../../objects/delete-objects.js';
import type { ObjectStore } from '../../objects/object-store.js';

/** Keys handed to one `deleteObjects` call (S3's DeleteObjects limit). */
const BATCH_KEYS = 1000;

/**
 * Deletes objects the manifest no longer needs, off the flush and compaction path (on S3 a flush
 * would otherwise wait for one DELETE per retired WAL object). Everything queued goes out as one
 * `deleteObjects` call, up to BATCH_KEYS keys: one DeleteObjects request on a store with a batch
 * API, a few single deletes at a time on the others. Best effort: a failed delete leaves an
 * orphan that the next writer's open collects.
 */
export class DeleteQueue {
  private readonly keys: string[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly store: ObjectStore) {}

  add(keys: Iterable<string>): void {
    for (const key of keys) this.keys.push(key);
    if (!this.running && this.keys.length > 0) void this.worker();
  }

  private async worker(): Promise<void> {
    this.running = true;
    try {
      while (this.keys.length > 0) {
        await deleteObjects(this.store, this.keys.splice(0, BATCH_KEYS)).catch(() => undefined);
        // A store that answers at once (memory) would otherwise run batch after batch in one
        // unbroken chain of microtasks and starve timers.
        await yieldToEventLoop();
      }
    } finally {
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Resolves when every queued delete has been attempted. */
  idle(): Promise<void> {
    if (!this.running && this.keys.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
