/**
 * What a batch reports while it runs (`BatchProgress`), when it ends (`BatchReport`) and per item
 * (`ItemResult`, streamed in completion order with a resumable cursor).
 */
import type { CostReport, CostRollup, PhaseCosts } from './cost.js';
import type { ItemStatus } from './records.js';

/** Item counts by state. `waiting`: not started yet (not submitted, or queued). */
export interface BatchCounts {
  readonly waiting: number;
  readonly running: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
}

/** A live view of a batch driven by this process. */
export interface BatchProgress {
  readonly batchId: string;
  readonly total: number;
  readonly counts: BatchCounts;
  /** succeeded + failed + cancelled. */
  readonly done: number;
  /** done / total (1 for an empty batch). */
  readonly doneFraction: number;
  /** Items finished per second since this process started driving the batch. */
  readonly itemsPerSecond: number;
  /** Estimated ms until every item is done at the current rate; null before the first item finishes here. */
  readonly etaMs: number | null;
  /** Since this process started driving the batch. */
  readonly elapsedMs: number;
  /** Total cost of the finished items so far (every phase summed). */
  readonly cost: CostReport;
  /** Why the failure policy stopped the batch, once it has. */
  readonly stopReason: string | null;
  /** True once every item is done and recorded. */
  readonly finished: boolean;
}

/** How a batch ended. `stopped`: the failure policy stopped it (items not started were cancelled). */
export type BatchOutcome = 'completed' | 'stopped';

export interface BatchReport {
  readonly batchId: string;
  readonly outcome: BatchOutcome;
  /** Why the batch stopped (null when it completed). */
  readonly stopReason: string | null;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
  /** Keys of the failed items in item order. */
  readonly failedKeys: string[];
  /** Per phase and total, summed in item order (the same however the items' completions were ordered). */
  readonly cost: CostRollup;
  /** Since this process started driving the batch. */
  readonly elapsedMs: number;
}

/** One finished item, as `results()` streams it. */
export interface ItemResult<O> {
  /** Pass as `results({ after })` to continue after this item (also in another process). */
  readonly cursor: string;
  readonly index: number;
  readonly key: string;
  readonly status: ItemStatus;
  /** The last phase's output (succeeded items). */
  readonly output?: O;
  /** What failed (failed items) or why it was cancelled. */
  readonly error?: string;
  /** The cost each phase reported (phases that finished). */
  readonly cost: PhaseCosts;
}
