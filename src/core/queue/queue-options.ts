/**
 * Open-time options and per-queue configuration, with defaults, validated in one place. A bad
 * option rejects the open with INVALID_CONFIG naming the option and its value.
 */
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { InvalidConfigError } from '../errors.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../logger.js';
import { validateKeyPrefixOption } from '../objects/keys.js';
import type { ObjectStore } from '../objects/object-store.js';
import { checkObjectStore, checkOptions, optionNames } from '../options.js';
import {
  DEFAULT_DEAD_RETENTION_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_INTERRUPTIONS,
  DEFAULT_PAYLOAD_OFFLOAD_THRESHOLD,
  DEFAULT_REAPER_INTERVAL_MS,
  DEFAULT_RETRY_BACKOFF_BASE_MS,
  DEFAULT_RETRY_BACKOFF_MAX_MS,
  DEFAULT_SCHEDULER_INTERVAL_MS,
  PRIORITY_NORMAL,
} from './constants.js';
import { show } from '../show.js';
import { configDuration, validateQueueName } from './records/validation.js';

/** Per-queue behaviour. Fixed for the life of a `Queue` handle. */
export interface QueueConfig {
  /**
   * Tries allowed before a failure dead-letters: an error the handler returns or throws, or a
   * lease that expires while the process lives (a stuck or too slow handler). Interrupted
   * deliveries do not count (see `maxInterruptions`). Default 3.
   */
  readonly maxAttempts?: number;
  /**
   * Interrupted deliveries allowed before the job dead-letters: claims lost without a settlement
   * because the process exited, crashed or closed the queue (a tab reload), found at the next
   * open. Bounds a job that kills its process every time. Default 20.
   */
  readonly maxInterruptions?: number;
  /** Lease used by `claimNext` and the worker loops. Default 30 s. */
  readonly leaseMs?: number;
  /** Priority of jobs enqueued without one. Default PRIORITY_NORMAL. */
  readonly defaultPriority?: number;
  /** After a nack of attempt N the job waits min(base·2^(N−1), max). 0 retries at once. Default 1 s. */
  readonly retryBackoffBaseMs?: number;
  /** Cap of the retry backoff. Default 300 s. */
  readonly retryBackoffMaxMs?: number;
  /** Keep acked jobs in the Done space this long after completion; null (default) deletes at ack. */
  readonly keepDoneMs?: number | null;
  /** Purge dead jobs this long after they failed; null keeps them forever. Default 7 days. */
  readonly deadRetentionMs?: number | null;
}

/**
 * Every QueueConfig option name. Adding an option: add its name here too (the compiler insists),
 * or `Queue.open` rejects it as unknown (INVALID_CONFIG naming it and the nearest known name).
 */
const QUEUE_CONFIG_OPTION_NAMES = optionNames<QueueConfig>({
  maxAttempts: true,
  maxInterruptions: true,
  leaseMs: true,
  defaultPriority: true,
  retryBackoffBaseMs: true,
  retryBackoffMaxMs: true,
  keepDoneMs: true,
  deadRetentionMs: true,
});

/** A QueueConfig with every field decided. */
export interface ResolvedQueueConfig {
  readonly maxAttempts: number;
  readonly maxInterruptions: number;
  readonly leaseMs: number;
  readonly defaultPriority: number;
  readonly retryBackoffBaseMs: number;
  readonly retryBackoffMaxMs: number;
  readonly keepDoneMs: number | null;
  readonly deadRetentionMs: number | null;
}

/** Options of `Queue.open`. All optional. */
export interface QueueOptions {
  /** Tick of the lease reaper and the retention sweeps. Default 5 s. */
  readonly reaperIntervalMs?: number;
  /** Tick of the promotion of due scheduled jobs. Default 1 s. */
  readonly schedulerIntervalMs?: number;
  /** Configuration of every queue without an entry in `queueConfigs`. */
  readonly defaultQueueConfig?: QueueConfig;
  /** Per-queue overrides (merged over `defaultQueueConfig`). */
  readonly queueConfigs?: Readonly<Record<string, QueueConfig>>;
  /** Time source for timestamps, leases, backoff, scheduling and generated ids. Default: system clock. */
  readonly clock?: Clock;
  /** Fills a byte array with random bytes (ids). Default: `crypto.getRandomValues`. */
  readonly random?: (bytes: Uint8Array) => void;
  /** WAL flush period of the engine (latency floor of durable transitions). */
  readonly flushIntervalMs?: number;
  /** Engine memtable size in bytes. */
  readonly memtableBytes?: number;
  /** Write a durable liveness beat at this interval; null/undefined disables it. */
  readonly livenessHeartbeatMs?: number | null;
  /** Payloads strictly larger go to their own object. null disables offload. Default 256 KiB. */
  readonly payloadOffloadThreshold?: number | null;
  /** Store of offloaded payloads. Default: the queue's store. */
  readonly payloadStore?: ObjectStore;
  /**
   * Object-key prefix of offloaded payloads. Default `{path}-payloads`. Like `path`, a valid object
   * key ('/'-separated segments, none empty, `.` or `..`); in the queue's own store it must not
   * nest inside `path`.
   */
  readonly payloadPath?: string;
  /** Where warnings (failed sweeps, failed settlements in worker loops) go. Default `consoleLogger` (warn and error); false for none. */
  readonly logger?: LoggerOption;
}

/**
 * Every QueueOptions option name, plus `path` (the `Queue.open(store, { path, ... })` form).
 * Adding an option: add its name here too (the compiler insists), or `Queue.open` rejects it as
 * unknown (INVALID_CONFIG naming it and the nearest known name).
 */
const QUEUE_OPTION_NAMES = optionNames<QueueOptions & { path: string }>({
  path: true,
  reaperIntervalMs: true,
  schedulerIntervalMs: true,
  defaultQueueConfig: true,
  queueConfigs: true,
  clock: true,
  random: true,
  flushIntervalMs: true,
  memtableBytes: true,
  livenessHeartbeatMs: true,
  payloadOffloadThreshold: true,
  payloadStore: true,
  payloadPath: true,
  logger: true,
});

export interface ResolvedQueueOptions {
  readonly reaperIntervalMs: number;
  readonly schedulerIntervalMs: number;
  readonly clock: Clock;
  readonly random: (bytes: Uint8Array) => void;
  readonly flushIntervalMs: number | undefined;
  readonly memtableBytes: number | undefined;
  readonly livenessHeartbeatMs: number | null;
  readonly payloadOffloadThreshold: number | null;
  readonly payloadStore: ObjectStore | undefined;
  readonly payloadPath: string;
  readonly logger: LogSink;
  readonly configs: QueueConfigs;
}

export function defaultRandom(bytes: Uint8Array): void {
  crypto.getRandomValues(bytes as Uint8Array<ArrayBuffer>);
}

function resolveConfig(base: ResolvedQueueConfig, over: QueueConfig | undefined, where: string): ResolvedQueueConfig {
  if (over === undefined) return base;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) throw new InvalidConfigError(`${where} must be an object. value=${show(over)}`, { where });
  checkOptions(over, QUEUE_CONFIG_OPTION_NAMES, where);
  const out = { ...base };
  if (over.maxAttempts !== undefined) {
    if (!Number.isSafeInteger(over.maxAttempts) || over.maxAttempts < 1) {
      throw new InvalidConfigError(`${where}.maxAttempts must be an integer of at least 1. value=${show(over.maxAttempts)}`, { where });
    }
    out.maxAttempts = over.maxAttempts;
  }
  if (over.maxInterruptions !== undefined) {
    if (!Number.isSafeInteger(over.maxInterruptions) || over.maxInterruptions < 1) {
      throw new InvalidConfigError(`${where}.maxInterruptions must be an integer of at least 1. value=${show(over.maxInterruptions)}`, { where });
    }
    out.maxInterruptions = over.maxInterruptions;
  }
  if (over.leaseMs !== undefined) out.leaseMs = configDuration(over.leaseMs, `${where}.leaseMs`);
  if (over.defaultPriority !== undefined) {
    const p = over.defaultPriority;
    if (!Number.isInteger(p) || p < 0 || p > 0xffffffff) {
      throw new InvalidConfigError(`${where}.defaultPriority must be an integer in [0, 2^32). value=${show(p)}`, { where });
    }
    out.defaultPriority = p;
  }
  if (over.retryBackoffBaseMs !== undefined) out.retryBackoffBaseMs = configDuration(over.retryBackoffBaseMs, `${where}.retryBackoffBaseMs`);
  if (over.retryBackoffMaxMs !== undefined) out.retryBackoffMaxMs = configDuration(over.retryBackoffMaxMs, `${where}.retryBackoffMaxMs`);
  if (over.keepDoneMs !== undefined) out.keepDoneMs = over.keepDoneMs === null ? null : configDuration(over.keepDoneMs, `${where}.keepDoneMs`);
  if (over.deadRetentionMs !== undefined) {
    out.deadRetentionMs = over.deadRetentionMs === null ? null : configDuration(over.deadRetentionMs, `${where}.deadRetentionMs`);
  }
  return out;
}

export const BUILTIN_QUEUE_CONFIG: ResolvedQueueConfig = {
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  maxInterruptions: DEFAULT_MAX_INTERRUPTIONS,
  leaseMs: DEFAULT_LEASE_MS,
  defaultPriority: PRIORITY_NORMAL,
  retryBackoffBaseMs: DEFAULT_RETRY_BACKOFF_BASE_MS,
  retryBackoffMaxMs: DEFAULT_RETRY_BACKOFF_MAX_MS,
  keepDoneMs: null,
  deadRetentionMs: DEFAULT_DEAD_RETENTION_MS,
};

/** Looks up the resolved configuration of any queue. */
export class QueueConfigs {
  private readonly overrides: Map<string, ResolvedQueueConfig>;

  constructor(
    readonly defaults: ResolvedQueueConfig,
    overrides: Map<string, ResolvedQueueConfig>,
  ) {
    this.overrides = overrides;
  }

  get(queue: string): ResolvedQueueConfig {
    return this.overrides.get(queue) ?? this.defaults;
  }

  /** Every distinct configuration in force (the default and each override). */
  all(): ResolvedQueueConfig[] {
    return [this.defaults, ...this.overrides.values()];
  }
}

/** Applies defaults and validates. Throws INVALID_CONFIG. */
export function resolveQueueOptions(path: string, options: QueueOptions = {}): ResolvedQueueOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError(`queue options must be an object. options=${show(options)}`, { value: show(options) });
  checkOptions(options, QUEUE_OPTION_NAMES, 'queue');
  // The engine checks its path too; checked first here so payloadPath's default is built from a valid one.
  validateKeyPrefixOption('path', path);
  const defaults = resolveConfig(BUILTIN_QUEUE_CONFIG, options.defaultQueueConfig, 'defaultQueueConfig');
  const overrides = new Map<string, ResolvedQueueConfig>();
  const configs: unknown = options.queueConfigs;
  if (configs !== undefined && (typeof configs !== 'object' || configs === null || Array.isArray(configs))) {
    throw new InvalidConfigError(`queueConfigs must be an object of queue name to QueueConfig. queueConfigs=${show(configs)}`, { value: show(configs) });
  }
  for (const [queue, config] of Object.entries(options.queueConfigs ?? {})) {
    try {
      validateQueueName(queue);
    } catch (e) {
      throw new InvalidConfigError(`queueConfigs has an invalid queue name. queue=${show(queue)}`, { queue });
    }
    overrides.set(queue, resolveConfig(defaults, config, `queueConfigs[${JSON.stringify(queue)}]`));
  }
  const threshold = options.payloadOffloadThreshold;
  if (threshold !== undefined && threshold !== null && (!Number.isSafeInteger(threshold) || threshold < 0)) {
    throw new InvalidConfigError(`payloadOffloadThreshold must be a non-negative integer or null. value=${show(threshold)}`);
  }
  const payloadPath = options.payloadPath ?? `${path}-payloads`;
  // At open, not at the first offloaded payload: a bad prefix would otherwise surface only then.
  validateKeyPrefixOption('payloadPath', payloadPath);
  if (options.payloadStore !== undefined) checkObjectStore(options.payloadStore, 'payloadStore', 'INVALID_CONFIG');
  const sameStore = options.payloadStore === undefined;
  if (sameStore && (payloadPath === path || payloadPath.startsWith(`${path}/`))) {
    throw new InvalidConfigError(`payloadPath must not nest inside the queue path. path=${path} payloadPath=${payloadPath}`, { path, payloadPath });
  }
  const heartbeat = options.livenessHeartbeatMs ?? null;
  return {
    reaperIntervalMs: configDuration(options.reaperIntervalMs ?? DEFAULT_REAPER_INTERVAL_MS, 'reaperIntervalMs', { allowZero: false }),
    schedulerIntervalMs: configDuration(options.schedulerIntervalMs ?? DEFAULT_SCHEDULER_INTERVAL_MS, 'schedulerIntervalMs', { allowZero: false }),
    clock: options.clock ?? systemClock,
    random: options.random ?? defaultRandom,
    flushIntervalMs: options.flushIntervalMs === undefined ? undefined : configDuration(options.flushIntervalMs, 'flushIntervalMs'),
    memtableBytes: options.memtableBytes,
    livenessHeartbeatMs: heartbeat === null ? null : configDuration(heartbeat, 'livenessHeartbeatMs', { allowZero: false }),
    payloadOffloadThreshold: threshold === undefined ? DEFAULT_PAYLOAD_OFFLOAD_THRESHOLD : threshold,
    payloadStore: options.payloadStore,
    payloadPath,
    logger: resolveLogger(options.logger),
    configs: new QueueConfigs(defaults, overrides),
  };
}
