/**
 * `QueueReader`: a read-only observer of a queue store, from another process or tab. It never
 * writes and never bumps the writer epoch, so it cannot fence the writer. Its view is whole
 * commits as of its last refresh: it lags the writer by the writer's flush interval plus the
 * poll interval (or until `refresh()`). `claimed` in a reader means "claim taken, no settlement
 * visible", nothing about liveness; use `writerHeartbeat()` and `lastStoreActivity()` for that.
 * Inspection flags a job whose payload object is missing or corrupt with `payloadError` (empty
 * `payload`) rather than rejecting. Here a missing object (`NOT_FOUND`) may be transient (deleted
 * after a removal the view has not seen): refresh and read again.
 */
import type { Clock } from '../../clock.js';
import { systemClock } from '../../clock.js';
import { validateKeyPrefixOption } from '../../objects/keys.js';
import { KvReader } from '../../kv/kv-reader.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../../logger.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { JobAttempt } from '../records/attempt-history.js';
import { DEFAULT_READER_POLL_INTERVAL_MS } from '../constants.js';
import { readHeartbeat, type WriterHeartbeat } from '../leases/heartbeat.js';
import {
  attemptHistory,
  deadJobs,
  getJob,
  listJobs,
  listQueues,
  queueStats,
  type InspectionSource,
  type JobPage,
  type ListJobsOptions,
  type QueueStats,
} from './inspection.js';
import { JobIdGenerator } from '../records/job-id.js';
import type { JobRecord, JobStatus } from '../records/job-record.js';
import { kvGet, kvScan, type KvPage, type KvScanOptions } from '../storage/kv-namespace.js';
import { queueMergeOperator } from '../records/merge-operator.js';
import { PayloadOffload } from '../storage/payload-offload.js';
import { checkObjectStore, checkOptions, optionNames } from '../../options.js';
import { configDuration } from '../records/validation.js';

export interface QueueReaderOptions {
  /** Refresh the view this often. Default 10 s; null disables polling (call `refresh()`). */
  readonly pollIntervalMs?: number | null;
  /** Clock for the poll loop. Default: the system clock. */
  readonly clock?: Clock;
  /** Must match the writer's. */
  readonly payloadStore?: ObjectStore;
  /** Must match the writer's. Default `{path}-payloads`. */
  readonly payloadPath?: string;
  /** Where warnings go (a failed refresh). Default `consoleLogger`; false for none. */
  readonly logger?: LoggerOption;
}

/**
 * Every QueueReaderOptions option name. Adding an option: add its name here too (the compiler
 * insists), or `QueueReader.open` rejects it as unknown (INVALID_CONFIG naming the nearest name).
 */
const QUEUE_READER_OPTION_NAMES = optionNames<QueueReaderOptions>({
  pollIntervalMs: true,
  clock: true,
  payloadStore: true,
  payloadPath: true,
  logger: true,
});

/** What the reader knows about the writer's activity, for liveness checks. */
export interface StoreActivity {
  /** Epoch of the writer that owns the store (from the manifest at the last refresh). */
  readonly writerEpoch: number;
  /** Sequence number of the newest commit visible to this reader: watch it advance. */
  readonly durableSeq: number;
}

export class QueueReader {
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;

  private constructor(
    private readonly reader: KvReader,
    private readonly payloads: PayloadOffload,
    private readonly clock: Clock,
    private readonly logger: LogSink,
  ) {}

  /**
   * Opens a read-only view of the queue store at `path`. Rejects with NOT_FOUND when no queue
   * store was ever written there (may be transient: the writer has not flushed yet),
   * CORRUPT_DATA / STORE_* from the store, INVALID_CONFIG for bad options.
   */
  static async open(store: ObjectStore, path: string, options: QueueReaderOptions = {}): Promise<QueueReader> {
    checkObjectStore(store);
    checkOptions(options, QUEUE_READER_OPTION_NAMES, 'queue reader');
    if (options.payloadStore !== undefined) checkObjectStore(options.payloadStore, 'payloadStore', 'INVALID_CONFIG');
    const poll = options.pollIntervalMs === undefined ? DEFAULT_READER_POLL_INTERVAL_MS : options.pollIntervalMs;
    if (poll !== null) configDuration(poll, 'pollIntervalMs', { allowZero: false });
    const payloadPath = options.payloadPath ?? `${path}-payloads`;
    validateKeyPrefixOption('path', path);
    validateKeyPrefixOption('payloadPath', payloadPath);
    const clock = options.clock ?? systemClock;
    const logger = resolveLogger(options.logger);
    const kv = await KvReader.open(store, { path, mergeOperator: queueMergeOperator });
    // Payload reads never name new objects; the generator is never used for writes here.
    const names = new JobIdGenerator(clock, () => undefined);
    const reader = new QueueReader(kv, new PayloadOffload(options.payloadStore ?? store, payloadPath, null, names, logger), clock, logger);
    if (poll !== null) reader.loop = reader.poll(poll);
    return reader;
  }

  private async poll(intervalMs: number): Promise<void> {
    const signal = this.stop.signal;
    while (!signal.aborted) {
      try {
        await this.clock.sleep(intervalMs, signal);
      } catch {
        return;
      }
      try {
        await this.refresh();
      } catch (e) {
        this.logger.warn('queue reader refresh failed', e);
      }
    }
  }

  /** Catches the view up with the writer's stored commits now. */
  async refresh(): Promise<void> {
    await this.reader.refresh();
  }

  /** Stops polling and releases the view. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    await this.reader.close();
  }

  /** Synchronous snapshot of the writer's activity as of the last refresh. */
  lastStoreActivity(): StoreActivity {
    return { writerEpoch: this.reader.writerEpoch, durableSeq: this.reader.appliedSeq };
  }

  /** The newest liveness beat, or undefined when the writer has none configured. */
  async writerHeartbeat(): Promise<WriterHeartbeat | undefined> {
    return readHeartbeat(this.reader);
  }

  private get source(): InspectionSource {
    return { reader: this.reader, payloads: this.payloads };
  }

  stats(queue: string): Promise<QueueStats> {
    return queueStats(this.reader, queue);
  }

  listQueues(): Promise<string[]> {
    return listQueues(this.reader);
  }

  /** As `Queue.getJob`: an unreadable payload object sets `payloadError` instead of rejecting. */
  getJob(id: string): Promise<JobRecord | undefined> {
    return getJob(this.source, id);
  }

  /** As `Queue.listJobs`. */
  listJobs(queue: string, status: JobStatus, options?: ListJobsOptions): Promise<JobPage> {
    return listJobs(this.source, queue, status, options);
  }

  /** As `Queue.deadJobs`. */
  deadJobs(queue: string, afterId: string | undefined, limit: number): Promise<JobRecord[]> {
    return deadJobs(this.source, queue, afterId, limit);
  }

  attemptHistory(id: string): Promise<JobAttempt[]> {
    return attemptHistory(this.reader, id);
  }

  kvGet(key: Uint8Array): Promise<Uint8Array | undefined> {
    return kvGet(this.reader, key);
  }

  kvScan(prefix: Uint8Array, options?: KvScanOptions): Promise<KvPage> {
    return kvScan(this.reader, prefix, options);
  }
}
