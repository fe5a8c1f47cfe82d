/** `WorkflowRuntime` options, their defaults and validation (INVALID_CONFIG naming the option). */
import type { Clock } from '../clock.js';
import { InvalidConfigError } from '../errors.js';
import { validateKeyPrefixOption } from '../objects/index.js';
import { checkOptions, optionNames } from '../options.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../logger.js';
import type { Queue } from '../queue/index.js';
import { DEFAULT_COMMAND_POLL_MS, DEFAULT_COMMAND_RETENTION_MS, DEFAULT_MAX_CONCURRENT_STEPS, DEFAULT_MEMO_PREFIX, DEFAULT_POLL_INTERVAL_MS, DEFAULT_QUEUE_NAME } from './constants.js';
import { show } from '../show.js';
import { checkTracer, type OpenTelemetryTracer } from '../tracing.js';
import type { StepRunnerObject } from './steps/step.js';

export interface WorkflowRuntimeOptions {
  /**
   * Queue for step jobs and terminal notifications. Default `workflow-steps`. Its `QueueConfig`
   * (set when the queue is opened) decides the lease, the retry backoff of failing steps and the
   * default attempts. Several runtimes can share one `Queue` under different names.
   */
  readonly queueName?: string;
  /** Object-store prefix of memo and replay entries, a valid object key ('/'-separated segments, none empty, `.` or `..`). Default `workflow-memo`. */
  readonly memoPrefix?: string;
  /** Clear a run's memo entries this long after it terminated; null (default) keeps them. */
  readonly memoRetentionMs?: number | null;
  /**
   * How long a finished run stays readable (`getRun` / `readStatus` with `includeFinished`,
   * `listRuns` by terminal status, `result`, the timeline's outcome), in ms. Each ending commits
   * a small record (tens of bytes plus the result up to 64 KiB, error text and headers) that
   * `run`'s background sweep deletes this long after the run ended. 0 writes no records (a
   * finished run is then unknown, as before); Infinity keeps them until deleted by hand.
   * Default 7 days.
   */
  readonly outcomeRetentionMs?: number;
  /**
   * When a run id may name a new run. `'after-finish'` (default, the reference's rule): a run
   * releases its id when it ends, and submitting the id again starts a new run (sharing the old
   * run's memo). `'after-retention'`: the id stays one run while its outcome is kept
   * (`outcomeRetentionMs`): submitting it again answers `newlySubmitted: false` with
   * `finished` set to how it ended (INPUT_MISMATCH for another input), and `result(runId)`
   * returns its outcome; once the outcome is swept, the id starts a new run.
   */
  readonly runIdReuse?: RunIdReuse;
  /** Store every runner outcome and replay it on redelivery instead of running the step again. Default false. */
  readonly stepOutputReplay?: boolean;
  /** Time source of every timestamp the runtime writes. Default: the queue's clock. */
  readonly clock?: Clock;
  /**
   * Steps (and notifications) processed at once. Default 16. A workflow function's run gives its
   * slot to another run while it only waits for a step's value to become durable, and takes one
   * back before its code goes on: at most this many run code at once.
   */
  readonly maxConcurrentSteps?: number;
  /** Longest idle wait between claim attempts; also the dead-step check interval. Default 250 ms. */
  readonly pollIntervalMs?: number;
  /**
   * How often `run` looks for commands other processes sent (`RuntimeClient`, the CLI's `signal`,
   * `cancel` and `retry` beside a live writer), in ms; idle looks back off to 8 times this. Each
   * look is one listing of the runtime's inbox (on S3 a LIST request). null serves no inbox.
   * Default 200 ms.
   */
  readonly commandPollMs?: number | null;
  /**
   * How long the answer of a command applied with a command id (`{ commandId }`, every command a
   * cluster member, a tab or a `RuntimeClient` forwards) is kept: sent again within it, the
   * command answers from the record; after, it would apply again. Each is about 200 bytes of
   * caller KV, deleted by `run`'s background sweep. Infinity keeps them. Default 24 hours.
   */
  readonly commandRetentionMs?: number;
  /** Attempts per step for runs submitted without `maxAttemptsPerStep`. Default: the queue's `maxAttempts`. */
  readonly stepMaxAttempts?: number;
  /**
   * Where the runtime logs: step retries (warn), dead-lettered steps and failed runs (error),
   * run outcomes (info), step starts and finishes (debug), plus recovered problems (warn). A
   * `Logger` (console fits; every level optional), or false for none. Default: the queue's
   * logger (by default `consoleLogger`: warn and error to the console).
   */
  readonly logger?: LoggerOption;
  /**
   * An OpenTelemetry tracer (`trace.getTracer('my-app')` from `@opentelemetry/api`) to trace runs
   * with: a `run.submit` span per submission (its trace context kept in the run's
   * `taquba-traceparent` header), a `run.step` span per delivery of a step, a span per attempt of
   * a `ctx.step`, and `signal.send` spans. Default none: no span, no header.
   */
  readonly tracer?: OpenTelemetryTracer;
}

/**
 * Internal: an options key (a symbol, so no app passes it by accident and `checkOptions` never
 * sees it) through which the browser host wraps the runner the runtime builds, a `StepRunner` or
 * the function runner of `{ workflows }` alike, to report run events.
 */
export const RUNNER_WRAPPER: unique symbol = Symbol('taquba.runnerWrapper');

/** `WorkflowRuntimeOptions` with the internal runner wrapper. */
export type HostRuntimeOptions = WorkflowRuntimeOptions & { readonly [RUNNER_WRAPPER]?: (runner: StepRunnerObject) => StepRunnerObject };

/** See `WorkflowRuntimeOptions.runIdReuse`. */
export type RunIdReuse = 'after-finish' | 'after-retention';

export interface ResolvedRuntimeOptions {
  readonly queueName: string;
  readonly memoPrefix: string;
  readonly memoRetentionMs: number | null;
  readonly outcomeRetentionMs: number;
  readonly runIdReuse: RunIdReuse;
  readonly stepOutputReplay: boolean;
  readonly clock: Clock;
  readonly maxConcurrentSteps: number;
  readonly pollIntervalMs: number;
  readonly commandPollMs: number | null;
  readonly commandRetentionMs: number;
  readonly stepMaxAttempts: number | undefined;
  readonly logger: LogSink;
  readonly tracer: OpenTelemetryTracer | undefined;
}

/**
 * Every WorkflowRuntimeOptions option name. Adding an option: add its name here too (the compiler
 * insists), or the runtime rejects it as unknown (INVALID_CONFIG naming the nearest known name).
 */
const RUNTIME_OPTION_NAMES = optionNames<WorkflowRuntimeOptions>({
  queueName: true,
  memoPrefix: true,
  memoRetentionMs: true,
  outcomeRetentionMs: true,
  runIdReuse: true,
  stepOutputReplay: true,
  clock: true,
  maxConcurrentSteps: true,
  pollIntervalMs: true,
  commandPollMs: true,
  commandRetentionMs: true,
  stepMaxAttempts: true,
  logger: true,
  tracer: true,
});

/** Default `outcomeRetentionMs`: a week. */
export const DEFAULT_OUTCOME_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

function bad(option: string, value: unknown, rule: string): InvalidConfigError {
  return new InvalidConfigError(`${option} ${rule}. ${option}=${show(value)}`, { option, value: show(value) });
}

function positiveInt(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw bad(option, value, 'must be an integer of at least 1');
  return value;
}

function positiveMs(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1) throw bad(option, value, 'must be a finite number of milliseconds, at least 1');
  return value;
}

/** 0 (off), a positive number of ms, or Infinity (kept until deleted by hand). */
function retentionMs(option: string, value: unknown): number {
  if (typeof value !== 'number') throw bad(option, value, `must be a number of milliseconds (0 turns it off), not ${value === null ? 'null' : typeof value}`);
  if (Number.isNaN(value)) throw bad(option, value, 'must be a number of milliseconds, not NaN');
  if (value < 0) throw bad(option, value, 'must not be negative (0 turns it off)');
  return value;
}

/** A positive number of ms or Infinity (a retention of 0 would let every retry apply again). */
function commandRetention(value: unknown): number {
  if (value === undefined) return DEFAULT_COMMAND_RETENTION_MS;
  if (value === Number.POSITIVE_INFINITY) return value;
  return positiveMs('commandRetentionMs', value);
}

function runIdReuse(value: unknown, outcomeRetention: number): RunIdReuse {
  if (value === undefined || value === 'after-finish') return 'after-finish';
  if (value !== 'after-retention') throw bad('runIdReuse', value, "must be 'after-finish' or 'after-retention'");
  // Without kept outcomes there is nothing to answer a finished run's id with.
  if (outcomeRetention === 0) throw bad('runIdReuse', value, 'needs outcomeRetentionMs above 0 (finished runs are not kept)');
  return value;
}

export function resolveRuntimeOptions(queue: Queue, options: WorkflowRuntimeOptions = {}): ResolvedRuntimeOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidConfigError(`options must be an object. options=${show(options)}`);
  checkOptions(options, RUNTIME_OPTION_NAMES, 'workflow runtime');
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  try {
    queue.queueConfig(queueName);
  } catch (e) {
    throw bad('queueName', queueName, `is not a valid queue name (${(e as Error).message})`);
  }
  const memoPrefix = options.memoPrefix ?? DEFAULT_MEMO_PREFIX;
  validateKeyPrefixOption('memoPrefix', memoPrefix);
  const retention = options.memoRetentionMs ?? null;
  const clock = options.clock ?? queue.clock;
  if (typeof clock?.now !== 'function' || typeof clock?.sleep !== 'function') throw bad('clock', clock, 'must implement now() and sleep()');
  const replay = options.stepOutputReplay ?? false;
  if (typeof replay !== 'boolean') throw bad('stepOutputReplay', replay, 'must be a boolean');
  const outcomeRetention = options.outcomeRetentionMs === undefined ? DEFAULT_OUTCOME_RETENTION_MS : retentionMs('outcomeRetentionMs', options.outcomeRetentionMs);
  return {
    queueName,
    memoPrefix,
    memoRetentionMs: retention === null ? null : positiveMs('memoRetentionMs', retention),
    outcomeRetentionMs: outcomeRetention,
    runIdReuse: runIdReuse(options.runIdReuse, outcomeRetention),
    stepOutputReplay: replay,
    clock,
    maxConcurrentSteps: positiveInt('maxConcurrentSteps', options.maxConcurrentSteps ?? DEFAULT_MAX_CONCURRENT_STEPS),
    pollIntervalMs: positiveMs('pollIntervalMs', options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS),
    commandPollMs: options.commandPollMs === null ? null : positiveMs('commandPollMs', options.commandPollMs ?? DEFAULT_COMMAND_POLL_MS),
    commandRetentionMs: commandRetention(options.commandRetentionMs),
    stepMaxAttempts: options.stepMaxAttempts === undefined ? undefined : positiveInt('stepMaxAttempts', options.stepMaxAttempts),
    logger: options.logger === undefined ? queue.logger : resolveLogger(options.logger),
    tracer: checkTracer('tracer', options.tracer),
  };
}
