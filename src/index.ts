/**
 * `taquba-workflow`: the platform-neutral public API (runs in browsers, workers and Node): the
 * workflow runtime and what an app builds with it.
 *
 * Every public name is listed here, by layer; a name exported from a module but not listed is
 * internal (and members tagged internal are stripped from the published `.d.ts`). Adding or
 * removing a name here fails `test/api/public-api.test.ts` until its checked-in list is updated.
 *
 * Lower layers have their own entry points: `taquba-workflow/queue` (the queue used directly:
 * worker loops, claims and leases, job records, the queue reader; the job headers, reserved names
 * and defaults of runs, batches and webhook deliveries on a queue; a run's timeline read from a
 * queue) and `taquba-workflow/engine` (the KV engine and the object-store contract for adapter
 * authors). Other entry points: `taquba-workflow/testing` (MockClock, fault-injecting and
 * counting store wrappers, a seeded random source), `taquba-workflow/node` (filesystem store,
 * process lock), `taquba-workflow/browser`, `taquba-workflow/browser/worker` and
 * `taquba-workflow/browser/inspector` (the Web Worker host, its client and the inspector element),
 * `taquba-workflow/stores/indexeddb`, `/stores/opfs`, `/stores/s3`.
 */

// Errors: one base class with a stable `code`, subclasses for the codes callers catch by type.
export {
  TaqubaError,
  isTaqubaError,
  AlreadyExistsError,
  ClaimLostError,
  ClosedError,
  ConflictError,
  CorruptDataError,
  FencedError,
  InternalError,
  InvalidArgumentError,
  InvalidConfigError,
  NotFoundError,
  PreconditionFailedError,
  StoreLockedError,
  StorePermissionError,
  StoreUnavailableError,
  UnsupportedPlatformError,
  type ErrorCode,
  type ErrorDetails,
} from './core/errors.js';

// Clock and logging: injected time (MockClock is in `taquba-workflow/testing`) and the one logger shape.
export { SystemClock, systemClock, type Clock } from './core/clock.js';
export { consoleLogger, type Logger, type LogFields, type LoggerOption } from './core/logger.js';

// Objects (layer 1): the contract every store implements and the in-memory reference store
// (adapter helpers and the engine are in `taquba-workflow/engine`).
export { MemoryObjectStore, type ObjectStore } from './core/objects/index.js';

// Queue (layer 3): the handle a runtime is built on and its options (the rest of the queue is
// in `taquba-workflow/queue`).
export { Queue, type QueueOpenOptions, type QueueOptions, type QueueConfig } from './core/queue/index.js';

// Workflow functions: a workflow as one async function (ctx.step, ctx.sleep, ctx.waitForSignal).
export {
  defineWorkflow,
  WorkflowRun,
  StepFailedError,
  RunFailedError,
  NonDeterminismError,
  type Workflow,
  type WorkflowDefinition,
  type WorkflowInput,
  type WorkflowOutput,
  type WorkflowSet,
  type AnyWorkflow,
  type WorkflowContext,
  type WorkflowLog,
  type StepAttempt,
  type StepOptions,
  type StepBackoff,
  type SignalResult,
  type WaitForSignalOptions,
  type InvokeOptions,
  type StartOptions,
  type RunIdReuse,
  type FlowKey,
  type WorkflowFlowDefaults,
} from './core/workflow/index.js';

// Workflow (layer 4): runs as chains of steps, signals, effects, the memo, terminal hooks, run queries.
export {
  WorkflowRuntime,
  WorkflowReader,
  RuntimeClient,
  createRunIdGenerator,
  StepOutcome,
  Trigger,
  StepError,
  InputMismatchError,
  KvReadHandle,
  EffectsHandle,
  TerminalEffects,
  Memo,
  MemoStore,
  NoopTerminalHook,
  isFinishedRun,
  describeRunArchive,
  RUN_ARCHIVE_FORMAT_VERSION,
  type ExportRunOptions,
  type ImportRunOptions,
  type ImportRunOutcome,
  type RunArchiveSummary,
  type WorkflowRuntimeOptions,
  type RuntimeClientOptions,
  type CommandOptions,
  type FinishedReadOptions,
  type FinishedRun,
  type FinishedRunListOptions,
  type FinishedRunListPage,
  type RunResultOptions,
  type RunnerHandle,
  type RunSpec,
  type SubmitOutcome,
  type ConcurrencyLimit,
  type RateLimit,
  type Debounce,
  type FlowControl,
  type RunState,
  type RunStatus,
  type SignalOutcome,
  type WorkflowReaderOptions,
  type DurableRunState,
  type RunDetails,
  type RunSummary,
  type RunWait,
  type DeadStepRetry,
  type RunListOptions,
  type RunListPage,
  type DeadStep,
  type DeadStepListOptions,
  type Step,
  type StepRunner,
  type StepRunnerFunction,
  type StepRunnerObject,
  type StepErrorKind,
  type KvKey,
  type MemoizedOptions,
  type RunOutcome,
  type TerminalHook,
  type TerminalStatus,
} from './core/workflow/index.js';

// Jobs: typed async functions as single-step runs, awaited for their typed output (also after a restart).
export {
  defineJob,
  defineState,
  JobFailedError,
  JobHandle,
  JobRunner,
  payloadIdempotencyKey,
  provideState,
  type AnyJob,
  type Job,
  type JobCodec,
  type JobContext,
  type JobDefinition,
  type JobFailureReason,
  type JobParse,
  type JobResult,
  type JobResultOptions,
  type JobRunnerOptions,
  type JobSubmitOptions,
  type StateEntry,
  type StateKey,
} from './core/jobs/index.js';

// Bulk: one pipeline of memoized phases over many inputs, with batch progress, cost rollup, resumable results and a failure policy.
export {
  Bulk,
  Batch,
  JsonlSink,
  NullSink,
  Pipeline,
  pipeline,
  readJsonl,
  type BatchCounts,
  type BatchOutcome,
  type BatchProgress,
  type BatchReport,
  type BatchResultsOptions,
  type BatchResumeOptions,
  type BatchStatus,
  type BatchSubmitOptions,
  type BulkOptions,
  type CostReport,
  type CostRollup,
  type FailurePolicy,
  type ItemResult,
  type ItemStatus,
  type JsonlItem,
  type JsonlReadableStream,
  type JsonlSource,
  type JsonlStreamReader,
  type JsonlStreamWriter,
  type JsonlTarget,
  type JsonlWritableStream,
  type OutputRecord,
  type OutputSink,
  type PhaseContext,
  type PhaseCosts,
  type PhaseRun,
  type ReadJsonlOptions,
} from './core/bulk/index.js';

// Webhooks: the terminal hook for `callback_url`, the delivery worker, Standard Webhooks signatures
// (staging deliveries by hand and the header names are in `taquba-workflow/queue`).
export {
  WebhookTerminalHook,
  runTerminatedWebhook,
  WebhookWorker,
  signWebhook,
  verifyWebhook,
  type WebhookTerminalHookOptions,
  type RunTerminatedWebhook,
  type WebhookWorkerOptions,
  type WebhookFetch,
  type WebhookFetchInit,
  type WebhookResponse,
  type WebhookSecret,
  type WebhookHeaders,
  type VerifyWebhookOptions,
  type VerifiedWebhook,
} from './core/webhooks/index.js';

// Tracing: OpenTelemetry spans of runs, steps, signals and webhook deliveries, with the app's tracer
// (`tracer` option; `@opentelemetry/api` stays an optional peer: nothing here imports it), and the
// run header that carries a run's trace context.
export { HEADER_TRACEPARENT } from './core/trace-context.js';
export { type OpenTelemetryTracer } from './core/tracing.js';

// Schedules: cron schedules kept in the store (5-field POSIX cron, UTC or an IANA zone), each fire
// time enqueued once by the writer: a workflow start, a plain run, a typed job or a plain job.
export {
  CronScheduler,
  listSchedules,
  parseCronExpression,
  HEADER_CRON_SCHEDULE,
  HEADER_CRON_FIRE_TIME,
  type AnySchedule,
  type CronExpression,
  type CronFiring,
  type CronSchedulerOptions,
  type Schedule,
  type ScheduleDefinition,
  type ScheduleInfo,
  type ScheduleSource,
  type ScheduleTarget,
  type ScheduleTargetInfo,
  type ScheduleTargetOptions,
  type ScheduleWriteResult,
} from './core/cron/index.js';

// Cluster: many processes sharing the shards of one store, with leases, failover and inboxes (RFC 0003).
export { openCluster, Cluster, type ClusterOptions } from './core/cluster/index.js';

// Hosting: one process serving a store's runs, typed jobs and a bulk pipeline together (the browser
// worker and each cluster shard are assembled the same way).
export { createRuntimeHost, type RuntimeHost, type RuntimeHostOptions } from './core/operations/runtime-host.js';
