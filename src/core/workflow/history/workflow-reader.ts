/**
 * `WorkflowReader`: the run queries of `WorkflowRuntime` (`listRuns`, `getRun`, `readStatus`,
 * `listDeadSteps`, `getRunTimeline`), finished runs included where asked for, for a process or tab that is not the store's writer: a dashboard, a CLI, a second Node process
 * beside a live worker. It reads through a `QueueReader`, so it never writes, never bumps the
 * writer epoch and takes no writer lock; it cannot fence the writer. Its answers are as of its
 * last refresh (the reader's poll, or `refresh()`): a run the writer submitted shows up once the
 * writer's commit is stored and the reader refreshed.
 */
import type { ObjectStore } from '../../objects/object-store.js';
import { QueueReader, type QueueReaderOptions } from '../../queue/index.js';
import { InvalidConfigError } from '../../errors.js';
import { DEFAULT_MEMO_PREFIX, DEFAULT_QUEUE_NAME } from '../constants.js';
import { show } from '../../show.js';
import { getRunTimeline, type RunTimeline } from './run-timeline.js';
import { getRun, getRunOrFinished, listDeadSteps, listRuns, type DeadStep, type DeadStepListOptions, type RunDetails, type RunListOptions, type RunListPage } from './inspection.js';
import { wantsFinished, type FinishedReadOptions, type FinishedRun, type FinishedRunListOptions, type FinishedRunListPage } from './finished-runs.js';
import type { RunStatus } from '../registry.js';
import { readEndedStatus } from '../archive/moved-runs.js';
import { validateRunId } from '../validation.js';

/** Options of `WorkflowReader.open`: the queue reader's, plus the runtime's queue name. */
export interface WorkflowReaderOptions extends QueueReaderOptions {
  /** The writer runtime's `queueName` option (where its steps go). Default `workflow-steps`. */
  readonly queueName?: string;
  /** The writer runtime's `memoPrefix` option (memo entries and step-output records, for `getRunTimeline`). Default `workflow-memo`. */
  readonly memoPrefix?: string;
}

function checkQueueName(queueName: unknown): string {
  if (queueName === undefined) return DEFAULT_QUEUE_NAME;
  if (typeof queueName !== 'string' || queueName.length === 0) {
    throw new InvalidConfigError(`queueName must be a non-empty string. queueName=${show(queueName)}`, { option: 'queueName' });
  }
  return queueName;
}

export class WorkflowReader {
  /** The runtime's step queue name. */
  readonly queueName: string;
  /** Set by `open`: the queue reader is this reader's to close. */
  private owned = false;
  /** Set by `open`: where the runtime's memo entries and step-output records are (for timelines). */
  private objects: { readonly store: ObjectStore; readonly memoPrefix: string } | undefined;

  /**
   * A reader over an open `QueueReader` (for example one also used for queue stats). It borrows
   * the queue reader: `close()` leaves it open. Throws INVALID_CONFIG for a bad `queueName`.
   */
  constructor(
    /** The queue reader: queue stats, jobs, caller KV (`kvGet`, `kvScan`). */
    readonly queue: QueueReader,
    options: { readonly queueName?: string } = {},
  ) {
    this.queueName = checkQueueName(options?.queueName);
  }

  /**
   * Opens a read-only view of the workflow store whose queue lives at `path` (the writer's
   * `Queue.open` path). Rejects with NOT_FOUND when no queue store was ever written there (may
   * be transient: the writer has not flushed yet), INVALID_CONFIG for bad options, CORRUPT_DATA
   * or STORE_* from the store.
   * @example
   * const reader = await WorkflowReader.open(new FileSystemObjectStore({ root }), 'workflow', { pollIntervalMs: 1000 });
   * const { runs } = await reader.listRuns({ status: 'waiting-for-signal' });
   * await reader.close();
   */
  static async open(store: ObjectStore, path: string, options: WorkflowReaderOptions = {}): Promise<WorkflowReader> {
    const { queueName, memoPrefix, ...queueOptions } = options ?? {};
    const name = checkQueueName(queueName);
    if (memoPrefix !== undefined && (typeof memoPrefix !== 'string' || memoPrefix.length === 0)) {
      throw new InvalidConfigError(`memoPrefix must be a non-empty string. memoPrefix=${show(memoPrefix)}`, { option: 'memoPrefix' });
    }
    const queue = await QueueReader.open(store, path, queueOptions);
    const reader = new WorkflowReader(queue, { queueName: name });
    reader.owned = true;
    reader.objects = { store, memoPrefix: memoPrefix ?? DEFAULT_MEMO_PREFIX };
    return reader;
  }

  /** Catches the view up with the writer's stored commits now. STORE_* / CORRUPT_DATA from the store. */
  refresh(): Promise<void> {
    return this.queue.refresh();
  }

  /** Stops polling and releases the view (the queue reader only when `open` created it). */
  async close(): Promise<void> {
    if (this.owned) await this.queue.close();
  }

  /** Finished runs kept by the writer's `outcomeRetentionMs`, as `WorkflowRuntime.listRuns` with a terminal `status`. */
  listRuns(options: FinishedRunListOptions): Promise<FinishedRunListPage>;
  /** As `WorkflowRuntime.listRuns` (the runs of the runtime on `queueName`), as of the last refresh. */
  listRuns(options?: RunListOptions): Promise<RunListPage>;
  listRuns(options?: RunListOptions | FinishedRunListOptions): Promise<RunListPage | FinishedRunListPage> {
    return listRuns(this.queue, this.queueName, options);
  }

  /** With `{ includeFinished: true }`, also a finished run from its record (`isFinishedRun` tells them apart). */
  getRun(runId: string, options: FinishedReadOptions): Promise<RunDetails | FinishedRun | null>;
  /** As `WorkflowRuntime.getRun` (null for another runtime's run), as of the last refresh. */
  getRun(runId: string): Promise<RunDetails | null>;
  async getRun(runId: string, options?: FinishedReadOptions): Promise<RunDetails | FinishedRun | null> {
    return getRunOrFinished(this.queue, this.queueName, runId, wantsFinished(options));
  }

  /**
   * As `WorkflowRuntime.readStatus`, from the store only (a reader has no registry, so a cancel
   * requested of a step not yet claimed shows once its job is flagged), as of the last refresh.
   * With `{ includeFinished: true }`, a finished run reports how it ended (a handed-off one: `moved`). Rejects with
   * INVALID_ARGUMENT (run id, options), CORRUPT_DATA or STORE_*.
   */
  async readStatus(runId: string, options?: FinishedReadOptions): Promise<RunStatus | null> {
    validateRunId(runId);
    const includeFinished = wantsFinished(options);
    const run = await getRun(this.queue, this.queueName, runId);
    if (run !== null) {
      // A dead step's run has failed; its ending is not committed yet (the writer's reconciliation does it).
      if (run.state === 'dead') return null;
      return { runId, state: run.state === 'running' || run.state === 'cancelling' ? run.state : 'pending', currentStep: run.currentStep };
    }
    if (!includeFinished) return null;
    return readEndedStatus(this.queue, this.queueName, runId);
  }

  /**
   * As `WorkflowRuntime.listDeadSteps`, as of the last refresh. A `payloadError` of `NOT_FOUND`
   * may be transient here (the job was removed after the view): refresh and read again.
   */
  listDeadSteps(options?: DeadStepListOptions): Promise<DeadStep[]> {
    return listDeadSteps(this.queue, this.queueName, options);
  }

  /**
   * Everything the store still holds about one run, active or terminated, step by step (see
   * `RunTimeline`), as of the last refresh. Memo entries and step outcomes need the object store:
   * a reader built with the constructor has none unless `store` is given. `scanLimit` bounds the
   * job and marker scans (default 10,000 records each). INVALID_ARGUMENT (run id), CORRUPT_DATA,
   * STORE_*.
   */
  getRunTimeline(runId: string, options: { readonly store?: ObjectStore; readonly memoPrefix?: string; readonly scanLimit?: number } = {}): Promise<RunTimeline> {
    return getRunTimeline(this.queue, this.queueName, runId, {
      store: options.store ?? this.objects?.store,
      memoPrefix: options.memoPrefix ?? this.objects?.memoPrefix,
      scanLimit: options.scanLimit,
    });
  }
}
