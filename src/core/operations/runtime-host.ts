/**
 * `createRuntimeHost`: what serves one store's runs in one process, assembled in one place: the
 * workflow runtime, a `JobRunner` for typed jobs, a `Bulk` for a pipeline and a `CronScheduler`
 * for schedules when given (all on the same queue and store), and the `LocalOperations` over them,
 * the one front door every carrier serves. The browser worker's leader, each cluster shard and a
 * Node process build their host here; what differs between them (memo prefixes, the runtime's
 * inbox, a runner wrapper, a cluster's firing run ids) comes in as options.
 *
 * Schedules fire where the host runs, which holds the queue handle (the store's writer): one
 * firing per fire time, also across a takeover (cron/firing.ts).
 *
 * Shutdown order: every wait of `operations` answers (null) at once; then the scheduler stops
 * (its firing in flight ends first: it submits to the runtime and the jobs); then the runtime (its
 * in-flight steps may wait on jobs or batches, so those keep running until it has); then the jobs
 * and the pipeline, together. The queue and the store stay open: they are the caller's.
 */
import { checkOptions, optionNames } from '../options.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { Queue } from '../queue/index.js';
import { NoopTerminalHook, WorkflowRuntime, type RunnerHandle, type StepRunner, type TerminalHook, type WorkflowRuntimeOptions, type WorkflowSet } from '../workflow/index.js';
import { JobRunner, type JobRunnerOptions } from '../jobs/index.js';
import type { AnyJob } from '../jobs/job.js';
import { Bulk } from '../bulk/index.js';
import { CronScheduler, type AnySchedule, type CronSchedulerOptions } from '../cron/index.js';
import { LocalJobOperations } from './local-job-operations.js';
import { LocalBulkOperations, type BatchProgressUpdate, type HostBulk } from './local-bulk-operations.js';
import { LocalOperations } from './local-operations.js';
import { applyOperation, HOST_COMMAND_NAMES, type HostCommandName, type OperationCall } from './operation-list.js';
import { registerCommandExtension } from '../workflow/commands/command-extensions.js';
import { isWorkflowSet } from '../workflow/functions/define.js';

export interface RuntimeHostOptions<I = unknown, O = unknown> {
  /** What runs the runs: workflow functions (`{ workflows: [...] }`, started with `runtime.start`) or a `StepRunner`. */
  readonly runner: StepRunner | WorkflowSet;
  /** The runtime's terminal hook. Default: none. */
  readonly hook?: TerminalHook;
  /** Options of the `WorkflowRuntime` (a cluster shard's memo prefix, `commandPollMs: null` where no other process sends commands). */
  readonly runtimeOptions?: WorkflowRuntimeOptions;
  /**
   * Typed jobs (`defineJob`) a `JobRunner` runs on the same queue and store (queue name `jobs`
   * unless `jobRunnerOptions` say otherwise). Default: none.
   */
  readonly jobs?: readonly AnyJob[];
  /** Options of the `JobRunner` (clock and logger default to the runtime options'). */
  readonly jobRunnerOptions?: JobRunnerOptions;
  /**
   * A bulk pipeline a `Bulk` runs on the same queue and store (queue name `bulk-items` unless
   * its options say otherwise). Default: none.
   */
  readonly bulk?: HostBulk<I, O>;
  /**
   * Cron schedules (`Schedule`: a name, a 5-field expression, a zone, and a workflow `start`, a
   * `submit`, a typed `job` or a plain `enqueue` per firing) a `CronScheduler` fires on the host's
   * runtime and jobs. They are the host's whole declaration: written when it spawns (a schedule
   * unchanged keeps its recorded next firing), and a schedule an earlier declaration wrote that
   * this list lacks is deleted (those made with `host.cron.define` or added by an operation stay;
   * a declared one replaces a stored one of its name). Given, even empty, the host fires every
   * schedule in the store and serves the schedule operations (`addSchedule`, `replaceSchedule`,
   * `removeSchedule`, also through the runtime's inbox: `taquba schedules add`). Default: no scheduler.
   */
  readonly schedules?: readonly AnySchedule[];
  /** Options of the `CronScheduler` (clock and logger default to the runtime options', then the queue's). */
  readonly cronOptions?: Omit<CronSchedulerOptions, 'runtime' | 'jobs' | 'schedules' | 'removeUndeclared'>;
  /** Progress of the batches `operations` submits or follows (throttled per batch; the final snapshot always comes). Default: none. */
  readonly onBatchProgress?: (update: BatchProgressUpdate) => void;
  /** @internal What every byte array of an answer of `operations` goes through (the browser host's exact-size copies). Default: as read. */
  readonly exportBytes?: (bytes: Uint8Array) => Uint8Array;
}

export interface RuntimeHost<I = unknown, O = unknown> {
  readonly runtime: WorkflowRuntime;
  /** The typed-jobs runner, with `jobs` (`host.jobs.submit(job, input)`). */
  readonly jobs: JobRunner | undefined;
  /** The pipeline's runner, with `bulk` (`host.bulk.submit(inputs)`). */
  readonly bulk: Bulk<I, O> | undefined;
  /** The scheduler, with `schedules` (`host.cron.define(schedule)`, `host.cron.list()`). */
  readonly cron: CronScheduler | undefined;
  /** The operations on the store as plain data, served by this host (what tabs, inboxes and tools call). */
  readonly operations: LocalOperations;
  /**
   * Starts the workers: the runtime's, and the jobs', the pipeline's and the scheduler's when given. The handle's
   * `done` settles when the first of them stops (rejects with its error when it failed): the host
   * then no longer does all its work. `shutdown()`, or an abort of `signal`, stops them in order
   * (module comment) and rejects with the first failure of a worker, if any.
   */
  spawn(signal?: AbortSignal): RunnerHandle;
}

const HOST_OPTIONS = optionNames<RuntimeHostOptions>({
  runner: true,
  hook: true,
  runtimeOptions: true,
  jobs: true,
  jobRunnerOptions: true,
  bulk: true,
  schedules: true,
  cronOptions: true,
  onBatchProgress: true,
  exportBytes: true,
});

/**
 * Builds the host of `queue` and `store`. Pure: no I/O until `spawn` or a call. Throws
 * INVALID_CONFIG for bad options, INVALID_ARGUMENT for a bad runner, hook, job, pipeline or
 * schedule (the scheduler's reasons: `invalid_cron_expression`, `duplicate_schedule`, ...).
 * @example
 * const host = createRuntimeHost(queue, store, {
 *   runner: { workflows: [order, nightlyReport] },
 *   jobs: [sendEmail],
 *   schedules: [{ name: 'nightly-report', cron: '0 3 * * *', timezone: 'Europe/Paris', start: [nightlyReport, {}] }],
 * });
 * const worker = host.spawn();
 * await host.runtime.start(order, { id: 42 });
 * await worker.shutdown();
 */
export function createRuntimeHost<I = unknown, O = unknown>(queue: Queue, store: ObjectStore, options: RuntimeHostOptions<I, O>): RuntimeHost<I, O> {
  checkOptions(options, HOST_OPTIONS, 'runtime host options');
  const runtimeOptions = options.runtimeOptions ?? {};
  const runtime = new WorkflowRuntime(queue, store, options.runner, options.hook ?? new NoopTerminalHook(), runtimeOptions);
  const jobList = options.jobs ?? [];
  const jobs =
    jobList.length === 0
      ? undefined
      : new JobRunner(queue, store, {
          ...(runtimeOptions.clock === undefined ? {} : { clock: runtimeOptions.clock }),
          ...(runtimeOptions.logger === undefined ? {} : { logger: runtimeOptions.logger }),
          ...options.jobRunnerOptions,
        });
  const bulk = options.bulk === undefined ? undefined : new Bulk(queue, store, options.bulk.pipeline, options.bulk.options);
  const onBatchProgress = options.onBatchProgress ?? (() => undefined);
  const jobOperations = jobs && new LocalJobOperations(jobs, jobList);
  // Built after LocalJobOperations registered the jobs: a `job` target is checked against them.
  const cron =
    options.schedules === undefined
      ? undefined
      : new CronScheduler(queue, {
          ...(runtimeOptions.clock === undefined ? {} : { clock: runtimeOptions.clock }),
          ...(runtimeOptions.logger === undefined ? {} : { logger: runtimeOptions.logger }),
          ...options.cronOptions,
          runtime,
          jobs,
          schedules: options.schedules,
          removeUndeclared: true,
        });
  const operations = new LocalOperations(runtime, queue, {
    jobs: jobOperations,
    bulk: bulk && new LocalBulkOperations(bulk, () => runtime.clock.now(), onBatchProgress),
    cron: cron && { scheduler: cron, workflows: isWorkflowSet(options.runner) ? options.runner.workflows : [] },
    exportBytes: options.exportBytes,
  });
  // The host's commands reach it through the runtime's inbox too (another process, the CLI).
  for (const method of HOST_COMMAND_NAMES) {
    registerCommandExtension(runtime, method, (args, once) => applyOperation(operations, { method, args, ...(once?.commandId === undefined ? {} : { commandId: once.commandId }) } as OperationCall & { method: HostCommandName }));
  }
  return {
    runtime,
    jobs,
    bulk,
    cron,
    operations,
    spawn: (signal) => spawnWorkers(operations, cron?.spawn(), runtime.spawn(), [jobs?.spawn(), bulk?.spawn()].filter((w) => w !== undefined), signal),
  };
}

/** One handle over the host's workers (`RuntimeHost.spawn`). */
function spawnWorkers(operations: LocalOperations, cronWorker: RunnerHandle | undefined, runtimeWorker: RunnerHandle, others: readonly RunnerHandle[], signal: AbortSignal | undefined): RunnerHandle {
  const done = Promise.race([cronWorker, runtimeWorker, ...others].filter((w) => w !== undefined).map((w) => w.done));
  // Observed here so an unawaited failure is not reported as unhandled; callers see it via done/shutdown.
  done.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      operations.stop();
      const outcomes = [
        ...(await Promise.allSettled(cronWorker ? [cronWorker.shutdown()] : [])),
        ...(await Promise.allSettled([runtimeWorker.shutdown()])),
        ...(await Promise.allSettled(others.map((w) => w.shutdown()))),
      ];
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    })());
  if (signal) {
    const stop = (): void => void shutdown().catch(() => undefined);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  }
  return { done, shutdown };
}
