/**
 * `Batch`: a handle on a batch this process drives. Everything it shows comes from the batch's
 * durable state plus what this process observed, so a handle from `bulk.resume(id)` after a
 * restart shows the same finished items, costs and completion order as before the restart.
 */
import { InvalidArgumentError } from '../errors.js';
import { checkOptions, optionNames } from '../options.js';
import { show } from '../show.js';
import type { BatchDriver } from './batch-driver.js';
import type { BatchProgress, BatchReport, ItemResult } from './progress.js';

/** Options of `Batch.results`. */
export interface BatchResultsOptions {
  /** Continue after this item's `cursor` (from an earlier stream, also of an earlier process). */
  readonly after?: string;
}

const RESULTS_OPTIONS = optionNames<BatchResultsOptions>({ after: true });
const CURSOR = /^\d{10}$/;

export class Batch<O> {
  /** @internal */
  constructor(private readonly driver: BatchDriver) {}

  get id(): string {
    return this.driver.batchId;
  }

  /** Number of items. */
  get total(): number {
    return this.driver.total;
  }

  /** Item keys in item order. */
  get keys(): readonly string[] {
    return this.driver.keys;
  }

  /** Counts by state, done fraction, rate, ETA and cost so far. */
  progress(): BatchProgress {
    return this.driver.progress();
  }

  /**
   * Calls `listener` with a fresh `BatchProgress` whenever finished items are recorded (group
   * commits, so at most once per commit). Returns the unsubscribe function.
   */
  onProgress(listener: (progress: BatchProgress) => void): () => void {
    if (typeof listener !== 'function') throw new InvalidArgumentError(`listener must be a function. listener=${show(listener)}`, { reason: 'invalid_listener' });
    return this.driver.onProgress(listener);
  }

  /**
   * Finished items in completion order, each once, as they are recorded; ends when the batch is
   * finished. `after` resumes after an item's `cursor`, also in a later process (the order is
   * durable), so a consumer that stores the cursor of what it handled loses nothing and sees
   * nothing twice. INVALID_ARGUMENT (reason `invalid_cursor`) for a malformed cursor.
   * @example
   * for await (const r of batch.results({ after: savedCursor })) { write(r); savedCursor = r.cursor; }
   */
  results(options: BatchResultsOptions = {}): AsyncGenerator<ItemResult<O>> {
    checkOptions(options, RESULTS_OPTIONS, 'batch results', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
    const after = options.after;
    if (after !== undefined && (typeof after !== 'string' || !CURSOR.test(after))) {
      throw new InvalidArgumentError(`cursor must be a cursor string from an earlier result. after=${show(after)}`, { reason: 'invalid_cursor' });
    }
    return this.driver.results<O>(after === undefined ? -1 : Number(after));
  }

  /**
   * Resolves when every item is finished and recorded: counts, failed keys, the cost rollup, and
   * whether the failure policy stopped the batch (`outcome: 'stopped'`, `stopReason`). Rejects
   * with CANCELLED when the bulk runner shuts down first (resume the batch later), the
   * infrastructure error that stopped driving it (CLOSED, FENCED, STORE_*), or the output sink's
   * write error (which stops driving too) or flush error; the durable state is kept either way.
   * With an output sink, resolves once every item was written and the sink flushed.
   */
  done(): Promise<BatchReport> {
    return this.driver.finished;
  }
}
