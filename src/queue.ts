/**
 * `taquba-workflow/queue`: the durable queue used directly, and the layers above as the queue sees them.
 *
 * The queue layer beyond `Queue` and its options (which the root entry exports): worker loops
 * (`runWorker`, `runWorkerConcurrent`, `processClaim`) and the handler outcomes they honour
 * (`RetryLater`, `PermanentFailure`, `FailWith`), claims and leases, job records and attempt
 * history, enqueue and settlement types, the read-only `QueueReader`, stats and pages,
 * priorities and limits.
 *
 * And what workflow runs, bulk batches and webhook deliveries look like on a queue, for code that
 * reads or writes their jobs beside a runtime: the job headers and reserved prefixes, default
 * queue names, limits and defaults; a run's timeline read straight from a `Queue` or a
 * `QueueReader` (`getRunTimeline`, what `taquba run` and the inspector show); webhook deliveries
 * staged by hand (`webhookEnqueueRequest`, `enqueueWebhook`) and their header names.
 *
 * Every name is listed here (no `export *`); `test/api/public-api.json` holds the list.
 */

// Queue (layer 3): worker loops, claims and leases, records, the read-only observer.
export {
  QueueReader,
  Claim,
  LeaseHandle,
  runWorker,
  runWorkerConcurrent,
  processClaim,
  PermanentFailure,
  RetryLater,
  FailWith,
  retryBackoffMs,
  PRIORITY_HIGH,
  PRIORITY_NORMAL,
  PRIORITY_LOW,
  MAX_KV_VALUE_SIZE,
  DEFAULT_PAYLOAD_OFFLOAD_THRESHOLD,
  MAX_QUEUE_NAME_LEN,
  MAX_JOB_ID_LEN,
  type ResolvedQueueConfig,
  type QueueReaderOptions,
  type StoreActivity,
  type QueueWorker,
  type WorkerHandler,
  type RunWorkerOptions,
  type JobRecord,
  type JobStatus,
  type PayloadError,
  type JobAttempt,
  type AttemptOutcome,
  type EnqueueOptions,
  type EnqueueRequest,
  type EnqueueResult,
  type SettlementEffects,
  type NackOptions,
  type NackOutcome,
  type CancelOutcome,
  type RequeueDeadOptions,
  type WakeOutcome,
  type WaitOutcome,
  type QueueStats,
  type JobPage,
  type ListJobsOptions,
  type KvPage,
  type KvScanOptions,
  type WriterHeartbeat,
} from './core/queue/index.js';

// Workflow runs on the queue: job headers, reserved names, limits and defaults; the run timeline
// read from a Queue or QueueReader (both are a WorkflowReadSource).
export {
  HEADER_RUN_ID,
  HEADER_STEP,
  HEADER_TERMINAL,
  HEADER_SIGNAL_WAIT,
  HEADER_SIGNAL_DELIVERED,
  RESERVED_HEADER_PREFIX,
  RESERVED_KV_PREFIX,
  MAX_RUN_ID_LEN,
  DEFAULT_QUEUE_NAME,
  DEFAULT_MEMO_PREFIX,
  DEFAULT_OUTCOME_RETENTION_MS,
  getRunTimeline,
  type WorkflowReadSource,
  type RunTimeline,
  type RunTimelineOptions,
  type RunTimelineSource,
  type TimelineJob,
  type TimelineMemoEntry,
  type TimelineSignal,
  type TimelineStep,
  type TimelineStepOutcome,
  type TimelineTerminal,
  type FunctionTimeline,
  type FunctionCall,
  type FunctionCallKind,
  type FunctionCallStatus,
  type StepFailure,
} from './core/workflow/index.js';

// Bulk batches on the queue.
export { DEFAULT_BULK_QUEUE_NAME } from './core/bulk/index.js';

// Webhook deliveries on the queue: staging one by hand, the job headers that carry the request,
// the run header the terminal hook reads, and the HTTP headers and defaults of a delivery.
export {
  webhookEnqueueRequest,
  enqueueWebhook,
  isWebhookUrl,
  WEBHOOK_HEADER_URL,
  WEBHOOK_HEADER_METHOD,
  WEBHOOK_HEADER_TIMEOUT_MS,
  WEBHOOK_HTTP_HEADER_PREFIX,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  DEFAULT_CALLBACK_URL_HEADER,
  HEADER_WEBHOOK_ID,
  HEADER_WEBHOOK_TIMESTAMP,
  HEADER_WEBHOOK_SIGNATURE,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  type WebhookRequest,
} from './core/webhooks/index.js';
