/**
 * The leader's side of every `RuntimeOperations` call: the operations run against this worker's
 * `WorkflowRuntime` and `Queue`, translated between wire and core types. Runs are reported
 * through the runtime's run queries (`getRun`, `listRuns`, `listDeadSteps`: the durable records,
 * so a run submitted under an earlier leader is visible at once after a takeover); terminal
 * outcomes this leader saw commit are remembered (bounded) for `status`. No record decoding here.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Queue } from '../core/queue/index.js';
import type { DurableRunState, RunOutcome, RunTimeline, SignalOutcome, SubmitOutcome, WorkflowRuntime } from '../core/workflow/index.js';
import { show } from '../core/show.js';
import { kvKeyBytes, validateRunId } from '../core/workflow/validation.js';
import { readBufferedSignal } from '../core/workflow/history/inspection.js';
import type { CommandOptions } from '../core/workflow/commands/ledger.js';
import type { JobSubmitOptions } from '../core/jobs/index.js';
import { noJobsError, type LocalJobOperations } from './local-job-operations.js';
import { noBulkError, type LocalBulkOperations } from './local-bulk-operations.js';
import type { BatchProgress, BatchStatus } from '../core/bulk/index.js';
import type {
  DeadStepPageOptions,
  DeadStepView,
  JobSubmission,
  KvEntryPage,
  KvScanPageOptions,
  ListRunsOptions,
  MemoEntryView,
  QueueCountsView,
  RunDetailsView,
  RunPage,
  RunView,
  RuntimeOperations,
  WireBatchSubmitOptions,
  WireJobOutcome,
  WireRunSpec,
} from './protocol.js';
import { exportBytes, TRANSFER_THRESHOLD_BYTES } from './transfer-handlers.js';

/**
 * A stored run state as `status` reports it. A step dead-lettered outside a worker leaves its run
 * active until reconciliation fails it (the `terminal` event follows): reported as `pending`.
 */
const WIRE_STATE: Readonly<Record<DurableRunState, RunView['state']>> = {
  pending: 'pending',
  scheduled: 'scheduled',
  'waiting-for-signal': 'waiting-for-signal',
  running: 'running',
  cancelling: 'cancelling',
  dead: 'pending',
};

/** Terminal outcomes remembered for `status`. */
const TERMINAL_CACHE_SIZE = 1000;

/** Bytes leaving the runtime: an exact-size view, a private copy when large enough to be transferred. */
function outBytes(bytes: Uint8Array): Uint8Array {
  return exportBytes(bytes, bytes.byteLength >= TRANSFER_THRESHOLD_BYTES);
}

export class LocalOperations implements RuntimeOperations {
  private readonly terminals = new Map<string, RunView>();

  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly queue: Queue,
    /** The worker's jobs; without any, every job call is INVALID_ARGUMENT (`unregistered_job`). */
    private readonly jobs?: LocalJobOperations,
    /** The worker's bulk pipeline; without one, every bulk call is INVALID_ARGUMENT (`bulk_not_configured`). */
    private readonly bulk?: LocalBulkOperations,
  ) {}

  async bulkSubmit(inputs: readonly unknown[], options?: WireBatchSubmitOptions): Promise<BatchProgress> {
    if (!this.bulk) throw noBulkError();
    return this.bulk.submit(inputs, options);
  }

  async bulkProgress(batchId: string): Promise<BatchProgress> {
    if (!this.bulk) throw noBulkError();
    return this.bulk.progress(batchId);
  }

  async bulkStatus(batchId: string): Promise<BatchStatus> {
    if (!this.bulk) throw noBulkError();
    return this.bulk.status(batchId);
  }

  /** Remembers a committed terminal outcome (the newest `TERMINAL_CACHE_SIZE` are kept). */
  noteTerminal(outcome: RunOutcome): void {
    this.terminals.delete(outcome.runId);
    this.terminals.set(outcome.runId, {
      runId: outcome.runId,
      state: outcome.status,
      currentStep: outcome.finalStep,
      result: outcome.result === null ? null : outBytes(outcome.result),
      error: outcome.error,
    });
    if (this.terminals.size > TERMINAL_CACHE_SIZE) this.terminals.delete(this.terminals.keys().next().value as string);
  }

  async submit(spec: WireRunSpec, once?: CommandOptions): Promise<SubmitOutcome> {
    if (spec?.runId !== undefined) this.terminals.delete(spec.runId);
    return this.runtime.submit(spec, once);
  }

  async status(runId: string): Promise<RunView | null> {
    validateRunId(runId);
    const live = this.runtime.status(runId);
    if (live && live.state !== 'pending') return { runId, state: live.state, currentStep: live.currentStep };
    const run = await this.runtime.getRun(runId);
    if (run === null) {
      if (live) return { runId, state: live.state, currentStep: live.currentStep };
      const seen = this.terminals.get(runId);
      // A copy: the answer's bytes may be transferred away, the cached ones must stay.
      return seen ? { ...seen, result: seen.result ? seen.result.slice() : null } : null;
    }
    return { runId, state: WIRE_STATE[run.state], currentStep: run.currentStep };
  }

  cancel(runId: string, once?: CommandOptions): Promise<boolean> {
    return this.runtime.cancel(runId, once);
  }

  signal(correlationKey: string, payload: Uint8Array, once?: CommandOptions): Promise<SignalOutcome> {
    return this.runtime.signal(correlationKey, payload, once);
  }

  clearSignal(correlationKey: string): Promise<boolean> {
    return this.runtime.clearSignal(correlationKey);
  }

  async listRuns(options: ListRunsOptions = {}): Promise<RunPage> {
    const page = await this.runtime.listRuns({ cursor: options.cursor, limit: options.limit, status: options.status });
    return {
      runs: page.runs.map(({ runId, submittedAtMs, currentStep, state }) => ({ runId, submittedAtMs, currentStep, state })),
      nextCursor: page.nextCursor === undefined ? undefined : exportBytes(page.nextCursor, true),
    };
  }

  async kvGet(key: Parameters<RuntimeOperations['kvGet']>[0]): Promise<Uint8Array | null> {
    const value = await this.queue.kvGet(kvKeyBytes(key));
    return value === undefined ? null : outBytes(value);
  }

  async kvScan(prefix: Parameters<RuntimeOperations['kvScan']>[0], options: KvScanPageOptions = {}): Promise<KvEntryPage> {
    const page = await this.queue.kvScan(kvKeyBytes(prefix, 'kv prefix'), { cursor: options.cursor, limit: options.limit ?? 100 });
    return {
      entries: page.entries.map(([k, v]) => [exportBytes(k), outBytes(v)] as const),
      nextCursor: page.nextCursor === undefined ? undefined : exportBytes(page.nextCursor, true),
    };
  }

  async memoGet(runId: string, scope: number | 'run', key: string): Promise<Uint8Array | null> {
    validateRunId(runId);
    if (scope !== 'run' && !(Number.isSafeInteger(scope) && scope >= 0)) {
      throw new InvalidArgumentError(`memo scope must be a step number or 'run'. scope=${show(scope)}`, { reason: 'invalid_memo_scope' });
    }
    const memo = scope === 'run' ? this.runtime.memoStore.newRunMemo(runId) : this.runtime.memoStore.newMemo(runId, scope);
    const value = await memo.get(key);
    return value === null ? null : outBytes(value);
  }

  async listDeadSteps(options: DeadStepPageOptions = {}): Promise<readonly DeadStepView[]> {
    return this.runtime.listDeadSteps({ afterJobId: options.afterJobId, limit: options.limit });
  }

  getRun(runId: string): Promise<RunDetailsView | null> {
    return this.runtime.getRun(runId);
  }

  runTimeline(runId: string): Promise<RunTimeline> {
    return this.runtime.getRunTimeline(runId);
  }

  async listMemo(runId: string, knownKeys: readonly string[] = []): Promise<readonly MemoEntryView[]> {
    if (!Array.isArray(knownKeys) || knownKeys.some((k) => typeof k !== 'string')) {
      throw new InvalidArgumentError(`memo key names must be an array of strings. knownKeys=${show(knownKeys)}`, { reason: 'invalid_memo_key' });
    }
    const entries = await this.runtime.memoStore.listEntries(runId, knownKeys);
    return entries.map((e) => ({ ...e, value: e.value === null ? null : outBytes(e.value) }));
  }

  async bufferedSignal(correlationKey: string): Promise<Uint8Array | null> {
    const value = await readBufferedSignal(this.queue, correlationKey);
    return value === null ? null : outBytes(value);
  }

  async queueCounts(): Promise<readonly QueueCountsView[]> {
    const names = await this.queue.listQueues();
    return Promise.all(names.map((name) => this.queue.stats(name)));
  }

  /** The runtime's one retry rule (`retryDeadJob`): a step whose run failed with it revives the run. */
  async retryDeadStep(jobId: string, once?: CommandOptions): Promise<void> {
    checkJobId(jobId);
    await this.runtime.retryDeadJob(jobId, once);
  }

  async discardDeadStep(jobId: string): Promise<boolean> {
    if (!(await this.deadStepOfThisRuntime(jobId))) return false;
    return this.queue.deleteDeadJob(jobId);
  }

  /** Operator actions reach only this runtime's dead jobs, never another queue's. */
  private async deadStepOfThisRuntime(jobId: string): Promise<boolean> {
    checkJobId(jobId);
    const job = await this.queue.getJob(jobId);
    return job !== undefined && job.queue === this.runtime.queueName && job.status === 'dead';
  }

  async jobSubmit(name: string, input: Uint8Array, options?: JobSubmitOptions): Promise<JobSubmission> {
    if (!this.jobs) throw noJobsError(name);
    return this.jobs.jobSubmit(name, input, options);
  }

  async jobWait(name: string, id: string, waitMs: number): Promise<WireJobOutcome | null> {
    if (!this.jobs) throw noJobsError(name);
    return this.jobs.jobWait(name, id, waitMs);
  }

  async jobFetch(name: string, id: string): Promise<WireJobOutcome | null> {
    if (!this.jobs) throw noJobsError(name);
    return this.jobs.jobFetch(name, id);
  }

  async jobCancel(id: string): Promise<boolean> {
    if (!this.jobs) return false;
    return this.jobs.jobCancel(id);
  }
}

function checkJobId(jobId: unknown): asserts jobId is string {
  if (typeof jobId !== 'string' || jobId === '') throw new InvalidArgumentError(`dead step job id must be a non-empty string. jobId=${show(jobId)}`, { reason: 'invalid_job_id' });
}
