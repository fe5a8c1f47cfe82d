/**
 * The one implementation of `RuntimeOperations`: the operations run against a `WorkflowRuntime`
 * and its `Queue` (plus the host's jobs and bulk pipeline, when it runs them), translated between
 * the plain-data types of operations.ts and the core's. Runs are reported through the runtime's
 * run queries (the durable records, so a run submitted under an earlier leader is visible at once
 * after a takeover) and its finished-run records; terminal outcomes the runtime was seen to
 * commit (`noteTerminal`) are remembered (bounded) for `status`. No record decoding here.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Queue } from '../queue/index.js';
import {
  isFinishedRun,
  type DeadStepRetry,
  type DurableRunState,
  type FinishedRun,
  type ImportRunOptions,
  type ImportRunOutcome,
  type RunOutcome,
  type RunStatus,
  type RunTimeline,
  type SignalOutcome,
  type SubmitOutcome,
  type TerminalStatus,
  type WorkflowRuntime,
} from '../workflow/index.js';
import { confirmMovedRunDelivery, listMovedRuns } from '../workflow/archive/moved-runs.js';
import { show } from '../show.js';
import { kvKeyBytes, validateRunId } from '../workflow/validation.js';
import { readBufferedSignal } from '../workflow/history/inspection.js';
import { TERMINAL_STATUSES } from '../workflow/history/finished-runs.js';
import type { CommandOptions } from '../workflow/commands/ledger.js';
import type { JobSubmitOptions } from '../jobs/index.js';
import type { BatchProgress, BatchStatus } from '../bulk/index.js';
import { listSchedules, scheduleOfDefinition, type CronScheduler } from '../cron/index.js';
import type { AnyWorkflow } from '../workflow/functions/define.js';
import { waitAtMost } from './bounded-wait.js';
import { noJobsError, type LocalJobOperations } from './local-job-operations.js';
import { noBulkError, type LocalBulkOperations } from './local-bulk-operations.js';
import type {
  DeadStepPageOptions,
  DeadStepView,
  FinishedRunPage,
  FinishedRunView,
  JobSubmission,
  KvEntryPage,
  KvScanPageOptions,
  ListFinishedRunsOptions,
  ListMovedRunsOptions,
  ListRunsOptions,
  MemoEntryView,
  MovedRunPage,
  QueueCountsView,
  RunDetailsView,
  RunPage,
  RunView,
  RuntimeOperations,
  ScheduleDefinitionView,
  ScheduleView,
  ScheduleWriteView,
  WireBatchSubmitOptions,
  WireExportRunOptions,
  WireJobOutcome,
  WireRunSpec,
} from './operations.js';

/**
 * A stored run state as `status` reports it. A step dead-lettered outside a worker leaves its run
 * active until reconciliation fails it (the `terminal` event follows): reported as `pending`, as
 * is a run waiting for a concurrency slot (its step 0 waits, not yet enqueued; `getRun` tells).
 */
const VIEW_STATE: Readonly<Record<DurableRunState, RunView['state']>> = {
  pending: 'pending',
  scheduled: 'scheduled',
  'waiting-for-signal': 'waiting-for-signal',
  'waiting-for-slot': 'pending',
  running: 'running',
  cancelling: 'cancelling',
  dead: 'pending',
};

/** Terminal outcomes remembered for `status`. */
const TERMINAL_CACHE_SIZE = 1000;

const EVERY_TERMINAL_STATUS: readonly TerminalStatus[] = [...TERMINAL_STATUSES] as TerminalStatus[];

export interface LocalOperationsParts {
  /** The host's jobs; without any, every job call is INVALID_ARGUMENT (`unregistered_job`). */
  readonly jobs?: LocalJobOperations;
  /** The host's bulk pipeline; without one, every bulk call is INVALID_ARGUMENT (`bulk_not_configured`). */
  readonly bulk?: LocalBulkOperations;
  /**
   * The host's scheduler and the workflows a schedule added by an operation may start; without a
   * scheduler, every schedule write is INVALID_ARGUMENT (`cron_not_configured`).
   */
  readonly cron?: { readonly scheduler: CronScheduler; readonly workflows: readonly AnyWorkflow[] };
  /**
   * What every byte array of an answer goes through on its way out (the browser host makes
   * exact-size copies there, private ones when large enough to be transferred). Default: as read.
   */
  readonly exportBytes?: (bytes: Uint8Array) => Uint8Array;
}

export class LocalOperations implements RuntimeOperations {
  private readonly terminals = new Map<string, RunView>();
  private readonly stopping = new AbortController();
  private readonly jobs: LocalJobOperations | undefined;
  private readonly bulk: LocalBulkOperations | undefined;
  private readonly cron: LocalOperationsParts['cron'];
  private readonly out: (bytes: Uint8Array) => Uint8Array;

  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly queue: Queue,
    parts: LocalOperationsParts = {},
  ) {
    this.jobs = parts.jobs;
    this.bulk = parts.bulk;
    this.cron = parts.cron;
    this.out = parts.exportBytes ?? ((bytes) => bytes);
  }

  /** Answers every `runWait` and `jobWait` (null) at once from now on, so a stopping host is not held up by waits. */
  stop(): void {
    this.stopping.abort();
    this.jobs?.stop();
  }

  /** Remembers a committed terminal outcome (the newest `TERMINAL_CACHE_SIZE` are kept). */
  noteTerminal(outcome: RunOutcome): void {
    this.terminals.delete(outcome.runId);
    this.terminals.set(outcome.runId, {
      runId: outcome.runId,
      state: outcome.status,
      currentStep: outcome.finalStep,
      result: outcome.result === null ? null : this.out(outcome.result),
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
    const run = await this.runtime.getRun(runId, { includeFinished: true });
    if (run !== null && !isFinishedRun(run)) return { runId, state: VIEW_STATE[run.state], currentStep: run.currentStep };
    if (live) return { runId, state: live.state, currentStep: live.currentStep };
    // What this runtime saw commit keeps a result the record may have left out (over 64 KiB).
    const seen = this.terminals.get(runId);
    // A copy: the answer's bytes may be transferred away, the cached ones must stay.
    if (seen) return { ...seen, result: seen.result ? seen.result.slice() : null };
    return run === null ? null : { runId, state: run.status, currentStep: run.finalStep, result: this.bytesOrNull(run.result), error: run.error };
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
      nextCursor: this.cursor(page.nextCursor),
    };
  }

  async listFinishedRuns(options: ListFinishedRunsOptions = {}): Promise<FinishedRunPage> {
    const { status = EVERY_TERMINAL_STATUS, cursor, limit } = options ?? {};
    const statuses: readonly unknown[] = Array.isArray(status) ? status : [status];
    // No terminal state, or an active one, would make the runtime list active runs instead.
    if (statuses.length === 0) throw new InvalidArgumentError('status names no way of ending: pass succeeded, failed or cancelled', { reason: 'invalid_status', status: '' });
    for (const s of statuses) {
      if (typeof s !== 'string' || !TERMINAL_STATUSES.has(s)) {
        throw new InvalidArgumentError(`finished runs are listed by how they ended: succeeded, failed or cancelled. status=${show(s)}`, { reason: 'invalid_status', status: String(s) });
      }
    }
    const page = await this.runtime.listRuns({ status, cursor, limit });
    return { runs: page.runs.map((run) => this.finished(run)), nextCursor: this.cursor(page.nextCursor) };
  }

  async getFinishedRun(runId: string): Promise<FinishedRunView | null> {
    const run = await this.runtime.getRun(runId, { includeFinished: true });
    return isFinishedRun(run) ? this.finished(run) : null;
  }

  async runWait(runId: string, waitMs: number): Promise<FinishedRunView | null> {
    validateRunId(runId);
    const run = await waitAtMost(this.runtime.clock, waitMs, this.stopping.signal, (signal) => this.runtime.result(runId, { signal }));
    return run === null ? null : this.finished(run);
  }

  async kvGet(key: Parameters<RuntimeOperations['kvGet']>[0]): Promise<Uint8Array | null> {
    const value = await this.queue.kvGet(kvKeyBytes(key));
    return value === undefined ? null : this.out(value);
  }

  async kvScan(prefix: Parameters<RuntimeOperations['kvScan']>[0], options: KvScanPageOptions = {}): Promise<KvEntryPage> {
    const page = await this.queue.kvScan(kvKeyBytes(prefix, 'kv prefix'), { cursor: options.cursor, limit: options.limit ?? 100 });
    return {
      entries: page.entries.map(([k, v]) => [this.out(k), this.out(v)] as const),
      nextCursor: this.cursor(page.nextCursor),
    };
  }

  async memoGet(runId: string, scope: number | 'run', key: string): Promise<Uint8Array | null> {
    validateRunId(runId);
    if (scope !== 'run' && !(Number.isSafeInteger(scope) && scope >= 0)) {
      throw new InvalidArgumentError(`memo scope must be a step number or 'run'. scope=${show(scope)}`, { reason: 'invalid_memo_scope' });
    }
    const memo = scope === 'run' ? this.runtime.memoStore.newRunMemo(runId) : this.runtime.memoStore.newMemo(runId, scope);
    return this.bytesOrNull(await memo.get(key));
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
    return entries.map((e) => ({ ...e, value: this.bytesOrNull(e.value) }));
  }

  async bufferedSignal(correlationKey: string): Promise<Uint8Array | null> {
    return this.bytesOrNull(await readBufferedSignal(this.queue, correlationKey));
  }

  async queueCounts(): Promise<readonly QueueCountsView[]> {
    const names = await this.queue.listQueues();
    return Promise.all(names.map((name) => this.queue.stats(name)));
  }

  async listSchedules(): Promise<readonly ScheduleView[]> {
    const schedules = await listSchedules(this.queue);
    return schedules.map((s) => ({ ...s, target: { ...s.target, input: this.out(s.target.input) } }));
  }

  async addSchedule(definition: ScheduleDefinitionView, once?: CommandOptions): Promise<ScheduleWriteView> {
    const cron = this.cronOrThrow();
    return cron.scheduler.writeFromOperation(scheduleOfDefinition(definition, cron.workflows), false, once);
  }

  async replaceSchedule(definition: ScheduleDefinitionView, once?: CommandOptions): Promise<ScheduleWriteView> {
    const cron = this.cronOrThrow();
    return cron.scheduler.writeFromOperation(scheduleOfDefinition(definition, cron.workflows), true, once);
  }

  async removeSchedule(name: string, once?: CommandOptions): Promise<boolean> {
    return this.cronOrThrow().scheduler.removeFromOperation(name, once);
  }

  private cronOrThrow(): NonNullable<LocalOperationsParts['cron']> {
    if (!this.cron) throw new InvalidArgumentError('the host serving this store fires no schedules (give it schedules, even an empty list, to change them at run time)', { reason: 'cron_not_configured' });
    return this.cron;
  }

  /** The runtime's one retry rule (`retryDeadStep`): a step whose run failed with it revives the run. */
  async retryDeadStep(jobId: string, once?: CommandOptions): Promise<DeadStepRetry> {
    checkJobId(jobId);
    return this.runtime.retryDeadStep(jobId, once);
  }

  async discardDeadStep(jobId: string): Promise<boolean> {
    if (!(await this.deadStepOfThisRuntime(jobId))) return false;
    return this.queue.deleteDeadJob(jobId);
  }

  async exportRun(runId: string, options?: WireExportRunOptions): Promise<Uint8Array> {
    return this.out(await this.runtime.exportRun(runId, options));
  }

  importRun(archive: Uint8Array, options?: ImportRunOptions): Promise<ImportRunOutcome> {
    return this.runtime.importRun(archive, options);
  }

  async listMovedRuns(options: ListMovedRunsOptions = {}): Promise<MovedRunPage> {
    const { cursor, limit = 100, undelivered = false } = options ?? {};
    if (!(Number.isSafeInteger(limit) && limit >= 1 && limit <= 1000)) {
      throw new InvalidArgumentError(`limit must be an integer in 1..1000. limit=${show(limit)}`, { reason: 'invalid_limit' });
    }
    if (cursor !== undefined && !(cursor instanceof Uint8Array)) throw new InvalidArgumentError(`cursor must be the nextCursor of an earlier page. cursor=${show(cursor)}`, { reason: 'invalid_cursor' });
    if (typeof undelivered !== 'boolean') throw new InvalidArgumentError(`undelivered must be a boolean. undelivered=${show(undelivered)}`, { reason: 'invalid_options', option: 'undelivered' });
    const page = await listMovedRuns(this.queue, this.runtime.queueName, { ...(cursor === undefined ? {} : { cursor }), limit });
    return { runs: undelivered ? page.runs.filter((run) => run.deliveredAtMs === null) : page.runs, nextCursor: this.cursor(page.nextCursor) };
  }

  async confirmHandOff(runId: string, archiveId: string): Promise<boolean> {
    validateRunId(runId);
    if (typeof archiveId !== 'string' || archiveId === '') throw new InvalidArgumentError(`archive id must be a non-empty string. archiveId=${show(archiveId)}`, { reason: 'invalid_archive_id' });
    return confirmMovedRunDelivery(this.queue, this.runtime.queueName, runId, archiveId, this.runtime.clock.now());
  }

  /** Operator actions reach only this runtime's dead jobs, never another queue's. */
  private async deadStepOfThisRuntime(jobId: string): Promise<boolean> {
    checkJobId(jobId);
    const job = await this.queue.getJob(jobId);
    return job !== undefined && job.queue === this.runtime.queueName && job.status === 'dead';
  }

  async jobSubmit(name: string, input: Uint8Array, options?: JobSubmitOptions): Promise<JobSubmission> {
    return this.jobsFor(name).jobSubmit(name, input, options);
  }

  async jobWait(name: string, id: string, waitMs: number): Promise<WireJobOutcome | null> {
    return this.jobOutcome(await this.jobsFor(name).jobWait(name, id, waitMs));
  }

  async jobFetch(name: string, id: string): Promise<WireJobOutcome | null> {
    return this.jobOutcome(await this.jobsFor(name).jobFetch(name, id));
  }

  async jobStatus(id: string): Promise<RunStatus | null> {
    if (!this.jobs) return null;
    return this.jobs.jobStatus(id);
  }

  async jobCancel(id: string): Promise<boolean> {
    if (!this.jobs) return false;
    return this.jobs.jobCancel(id);
  }

  async bulkSubmit(inputs: readonly unknown[], options?: WireBatchSubmitOptions): Promise<BatchProgress> {
    return this.bulkOrThrow().submit(inputs, options);
  }

  async bulkProgress(batchId: string): Promise<BatchProgress> {
    return this.bulkOrThrow().progress(batchId);
  }

  async bulkStatus(batchId: string): Promise<BatchStatus> {
    return this.bulkOrThrow().status(batchId);
  }

  private jobsFor(name: string): LocalJobOperations {
    if (!this.jobs) throw noJobsError(name);
    return this.jobs;
  }

  private bulkOrThrow(): LocalBulkOperations {
    if (!this.bulk) throw noBulkError();
    return this.bulk;
  }

  private bytesOrNull(bytes: Uint8Array | null | undefined): Uint8Array | null {
    return bytes === null || bytes === undefined ? null : this.out(bytes);
  }

  /** A cursor leaves as a copy of its own: it may be the engine's key bytes. */
  private cursor(cursor: Uint8Array | undefined): Uint8Array | undefined {
    return cursor === undefined ? undefined : this.out(cursor.slice());
  }

  private finished(run: FinishedRun): FinishedRunView {
    return { ...run, result: this.bytesOrNull(run.result) };
  }

  private jobOutcome(outcome: WireJobOutcome | null): WireJobOutcome | null {
    if (outcome === null) return null;
    if (outcome.ok) return { ok: true, output: this.out(outcome.output) };
    return outcome.error === undefined ? outcome : { ...outcome, error: this.out(outcome.error) };
  }
}

function checkJobId(jobId: unknown): asserts jobId is string {
  if (typeof jobId !== 'string' || jobId === '') throw new InvalidArgumentError(`dead step job id must be a non-empty string. jobId=${show(jobId)}`, { reason: 'invalid_job_id' });
}
