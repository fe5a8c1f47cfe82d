/**
 * Durability for transitions committed without waiting for their WAL put.
 *
 * Worker loops settle a job in two steps: the settlement commits non-durably (it is applied, and
 * visible, when the commit resolves; a conflict rejects it), the handler slot is freed, and only
 * then does the settlement wait here for durability. So the loop keeps claiming and processing
 * while a WAL put is in flight, and everything settled meanwhile shares the next put, instead of
 * each round of `concurrency` jobs waiting for its own put.
 *
 * Protocol: `wait()` is called after the caller's commit was applied. Waiters that arrive before
 * the open batch is issued join it; the batch is issued in a microtask (so the settlements of one
 * burst share it) as one tiny durable commit, the marker: a zero delta merged into a stats counter
 * of a queue that has jobs (no visible change). The engine stores WAL objects in commit order and
 * a durable commit resolves only once its object is stored, so when the marker is durable, every
 * commit applied before it was appended is durable too. A failed marker rejects every waiter of
 * its batch (the engine is then poisoned and nothing later is acknowledged).
 */
import type { KvDb } from '../kv/kv-db.js';
import { statsKey } from './keys.js';
import { encodeI64 } from './merge-operator.js';

interface Batch {
  readonly queue: string;
  readonly done: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

export class DurabilityBarrier {
  private open: Batch | undefined;
  /** Marker commits issued (tests and tuning). */
  markers = 0;

  constructor(private readonly db: KvDb) {}

  /** Resolves once every commit applied before this call is durable. `queue` must have had jobs. */
  wait(queue: string): Promise<void> {
    let batch = this.open;
    if (batch === undefined) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const b: Batch = { queue, done, resolve, reject };
      batch = this.open = b;
      queueMicrotask(() => this.issue(b));
    }
    return batch.done;
  }

  private issue(batch: Batch): void {
    if (this.open === batch) this.open = undefined;
    this.markers++;
    this.db.write([{ type: 'merge', key: statsKey(batch.queue, 'done'), value: encodeI64(0) }]).then(batch.resolve, batch.reject);
  }
}
