/**
 * Layer 3: the durable job queue on the KV engine.
 *
 * Folders: transitions/ (enqueue, claim, settle, operator actions, reaper, scheduler, retention:
 * each one engine transaction), records/ (the job record, keys, ids, attempt history, merged
 * counters, input checks), storage/ (staged transactions, caller KV, payload offload, settlement
 * effects), leases/ (in-memory leases, lease handles, the writer heartbeat), workers/ (worker
 * loops, handler slots, wakeups), reads/ (inspection, QueueReader, completion waits); the Queue
 * facade, its options and shared context sit at the top.
 *
 * Owns: job records in per-state key spaces (records/keys.ts), one engine transaction per state
 * transition (record move + job index + merged counters + attempt history + settlement effects,
 * all or nothing), in-memory leases with crash recovery at open, per-queue claim serialisation
 * with a tombstone-skipping claim cursor, notify-based worker wakeups, caller KV under a reserved
 * tag, payload offload to the object store, retention sweeps, and a read-only observer.
 *
 * Core types: `Queue` (single writer per store; opening fences the previous writer), `Claim`
 * (the only thing that can settle), `LeaseHandle` (what handlers get), `JobRecord`,
 * `QueueReader`. Delivery is at-least-once: attempts are counted at claim time and a crash or a
 * lost lease redelivers, so handlers must be idempotent. A delivery interrupted by a process exit
 * gives its try back and counts as an interruption (`maxInterruptions`), not a failure.
 *
 * Errors: INVALID_ARGUMENT / INVALID_CONFIG (bad input, before any write), CLAIM_LOST (a stale
 * claim; nothing applied), CANCELLED (lease renewal after a cancel request), ALREADY_EXISTS (a
 * taken id override), NOT_FOUND, CORRUPT_DATA (an undecodable record; an offloaded payload object
 * that is missing or fails its length/CRC-32C checks makes a claim dead-letter the job with a
 * reason naming the object, and a dead requeue reject, while inspection returns the job with
 * `payloadError` set instead of rejecting), and the engine's FENCED / CLOSED / STORE_* passed
 * through unchanged.
 *
 * Never: read ambient time or randomness (clock and random source are injected), import a
 * platform API, or acknowledge a durable transition before its WAL object is stored.
 */
export { Queue, type QueueOpenOptions } from './queue.js';
export { QueueReader, type QueueReaderOptions, type StoreActivity } from './reads/reader.js';
export { Claim } from './transitions/claim.js';
export { LeaseHandle } from './leases/lease-handle.js';
export {
  runWorker,
  runWorkerConcurrent,
  processClaim,
  PermanentFailure,
  RetryLater,
  FailWith,
  type QueueWorker,
  type WorkerHandler,
  type RunWorkerOptions,
} from './workers/worker.js';
export type { QueueConfig, QueueOptions, ResolvedQueueConfig } from './queue-options.js';
export { retryBackoffMs } from './transitions/retry-backoff.js';
export type { JobRecord, JobStatus, PayloadError } from './records/job-record.js';
export type { JobAttempt, AttemptOutcome } from './records/attempt-history.js';
export type { EnqueueOptions, EnqueueRequest, EnqueueResult } from './transitions/enqueue.js';
export type { SettlementEffects } from './storage/effects.js';
export type { NackOptions, NackOutcome } from './transitions/settlement.js';
export type { CancelOutcome, RequeueDeadOptions, WakeOutcome } from './transitions/operator-actions.js';
export type { WaitOutcome } from './reads/completion-wait.js';
export type { QueueStats, JobPage, ListJobsOptions } from './reads/inspection.js';
export type { KvPage, KvScanOptions } from './storage/kv-namespace.js';
export type { WriterHeartbeat } from './leases/heartbeat.js';
export {
  PRIORITY_HIGH,
  PRIORITY_NORMAL,
  PRIORITY_LOW,
  MAX_KV_VALUE_SIZE,
  DEFAULT_PAYLOAD_OFFLOAD_THRESHOLD,
  MAX_QUEUE_NAME_LEN,
  MAX_JOB_ID_LEN,
} from './constants.js';
