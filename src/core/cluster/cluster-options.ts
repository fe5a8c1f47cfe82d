/** `openCluster` options, their defaults and validation (INVALID_CONFIG naming the option). */
import { systemClock, type Clock } from '../clock.js';
import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../logger.js';
import { validateKeyPrefixOption } from '../objects/keys.js';
import { checkOptions, optionNames } from '../options.js';
import type { QueueOptions } from '../queue/index.js';
import { show } from '../show.js';
import { asStepRunnerObject, type StepRunner } from '../workflow/steps/step.js';
import { NoopTerminalHook, type TerminalHook } from '../workflow/runs/terminal-hook.js';
import type { WorkflowRuntimeOptions } from '../workflow/runtime-options.js';
import { isWorkflowSet, WorkflowRegistry, type WorkflowSet } from '../workflow/functions/define.js';
import { MAX_SHARDS } from './layout.js';
import type { AnyJob } from '../jobs/job.js';
import { DEFAULT_JOBS_QUEUE_NAME } from '../jobs/job-runner.js';
import { DEFAULT_QUEUE_NAME } from '../workflow/constants.js';
import type { AnySchedule } from '../cron/index.js';
import { checkSchedulerSettings, type CronSettings } from '../cron/cron-scheduler.js';
import { checkClusterSchedules } from './cluster-schedules.js';

export interface ClusterOptions {
  /** Object-key prefix of the whole cluster (a valid object key). Every member passes the same one. */
  readonly name: string;
  /** Shard count, fixed when the cluster is created (1..9999). Every member passes the same one. */
  readonly shards: number;
  /**
   * Runs every step of every shard this member owns: workflow functions (`{ workflows: [...] }`,
   * started with `cluster.start(workflow, input)`) or a `StepRunner` (runs started with `submit`).
   */
  readonly runner: StepRunner | WorkflowSet;
  /** Terminal hook of every shard this member owns. Default: none (`NoopTerminalHook`). */
  readonly hook?: TerminalHook;
  /**
   * Typed jobs (`defineJob`) the shards run and `submitJob` accepts. Each shard then also hosts a
   * `JobRunner` on queue name `jobs`. Every member passes the same jobs. Default: none.
   */
  readonly jobs?: readonly AnyJob[];
  /**
   * Cron schedules (`Schedule`: a name, a 5-field expression, a zone, and a workflow `start`, a
   * `submit` or a typed `job` per firing; no plain `enqueue`). Each lives on the shard its name
   * hashes to and fires there, so a tick fires once across members, a new owner going on from
   * the recorded firing (cluster-schedules.ts). A firing's run id routes to that shard, so
   * `cluster.result(id)` finds it from any member. They are the cluster's whole declaration: a
   * schedule dropped from the list is deleted when its shard next opens. Every member passes the
   * same ones. Default: none (no scheduler).
   */
  readonly schedules?: readonly AnySchedule[];
  /**
   * Options of each shard's `CronScheduler` (as `createRuntimeHost`'s `cronOptions`): `retryDelayMs`
   * (first wait before a failed firing is tried again), `clock` and `logger` (default the cluster's).
   */
  readonly cronOptions?: CronSettings;
  /** This member's id (`[A-Za-z0-9_-]`, 1..64). Default: a random one. Two live members must never share one. */
  readonly memberId?: string;
  /** False: a client member that owns no shards (submits, signals, cancels and reads only). Default true. */
  readonly takesShards?: boolean;
  /** How long a shard lease lasts without renewal; renewed every third of it. Default 15 s. */
  readonly leaseMs?: number;
  /** The most two members' clocks may differ by (added before taking an expired lease). Default 2 s. */
  readonly maxClockSkewMs?: number;
  /** How often an owner looks for commands in a shard's inbox, and a sender for the reply. Default 100 ms. */
  readonly inboxPollMs?: number;
  /** How long a command sent through an inbox waits for its reply before TIMEOUT. Default 60 s. */
  readonly commandTimeoutMs?: number;
  /** Options of each shard's `Queue.open` (its clock and logger default to the cluster's). */
  readonly queueOptions?: QueueOptions;
  /** Options of each shard's `WorkflowRuntime` (not `memoPrefix`: every shard has its own). */
  readonly runtimeOptions?: Omit<WorkflowRuntimeOptions, 'memoPrefix'>;
  /** Time source of leases, heartbeats and polls. Default: the system clock. */
  readonly clock?: Clock;
  /** Where membership changes (info) and lost shards or failed loops (warn) go. Default `consoleLogger`; false for none. */
  readonly logger?: LoggerOption;
}

export interface ResolvedClusterOptions {
  readonly name: string;
  readonly shards: number;
  readonly runner: StepRunner | WorkflowSet;
  /** The runner's workflow functions, when it is a `WorkflowSet`. */
  readonly workflows: WorkflowRegistry | undefined;
  readonly hook: TerminalHook;
  readonly jobs: ReadonlyMap<string, AnyJob>;
  /** Undefined: no scheduler on the shards. */
  readonly schedules: readonly AnySchedule[] | undefined;
  readonly cronOptions: CronSettings;
  readonly memberId: string;
  readonly takesShards: boolean;
  readonly leaseMs: number;
  readonly maxClockSkewMs: number;
  readonly inboxPollMs: number;
  readonly commandTimeoutMs: number;
  readonly queueOptions: QueueOptions;
  readonly runtimeOptions: Omit<WorkflowRuntimeOptions, 'memoPrefix'>;
  readonly clock: Clock;
  readonly logger: LogSink;
}

const CLUSTER_OPTION_NAMES = optionNames<ClusterOptions>({
  name: true,
  shards: true,
  runner: true,
  hook: true,
  jobs: true,
  schedules: true,
  cronOptions: true,
  memberId: true,
  takesShards: true,
  leaseMs: true,
  maxClockSkewMs: true,
  inboxPollMs: true,
  commandTimeoutMs: true,
  queueOptions: true,
  runtimeOptions: true,
  clock: true,
  logger: true,
});

const CRON_OPTION_NAMES = optionNames<CronSettings>({ retryDelayMs: true, clock: true, logger: true });

const MEMBER_ID = /^[A-Za-z0-9_-]{1,64}$/;

function bad(option: string, value: unknown, rule: string): InvalidConfigError {
  return new InvalidConfigError(`cluster ${option} ${rule}. ${option}=${show(value)}`, { option, value: show(value) });
}

function ms(option: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) throw bad(option, value, `must be a finite number of milliseconds, at least ${min}`);
  return value;
}

function randomMemberId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return `m-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new InvalidConfigError(`cluster options must be an object. options=${show(options)}`);
  checkOptions(options, CLUSTER_OPTION_NAMES, 'cluster');
  if (typeof options.name !== 'string') throw bad('name', options.name, 'must be a string');
  validateKeyPrefixOption('name', options.name);
  const shards = options.shards;
  if (typeof shards !== 'number' || !Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS) throw bad('shards', shards, `must be an integer in 1..${MAX_SHARDS}`);
  // A workflow list is checked by building its registry (INVALID_ARGUMENT naming what is wrong).
  const workflows = isWorkflowSet(options.runner) ? new WorkflowRegistry(options.runner) : undefined;
  if (!workflows) {
    try {
      asStepRunnerObject(options.runner);
    } catch {
      throw new InvalidArgumentError(`cluster runner must be { workflows: [...] }, a function or an object with runStep. runner=${show(options.runner)}`, { reason: 'invalid_runner' });
    }
  }
  const hook = options.hook ?? new NoopTerminalHook();
  if (typeof hook?.onTermination !== 'function') throw new InvalidArgumentError(`cluster hook must implement onTermination(outcome, effects). hook=${show(hook)}`, { reason: 'invalid_hook' });
  const jobs = new Map<string, AnyJob>();
  if (options.jobs !== undefined) {
    if (!Array.isArray(options.jobs)) throw bad('jobs', options.jobs, 'must be an array of jobs from defineJob');
    for (const job of options.jobs as readonly AnyJob[]) {
      if (typeof job?.name !== 'string' || typeof job.run !== 'function') throw bad('jobs', job, 'must hold jobs from defineJob');
      if (jobs.has(job.name) && jobs.get(job.name) !== job) throw bad('jobs', job.name, 'holds two jobs with one name');
      jobs.set(job.name, job);
    }
  }
  const memberId = options.memberId ?? randomMemberId();
  if (typeof memberId !== 'string' || !MEMBER_ID.test(memberId)) throw bad('memberId', memberId, 'must be 1..64 characters of [A-Za-z0-9_-]');
  const takesShards = options.takesShards ?? true;
  if (typeof takesShards !== 'boolean') throw bad('takesShards', takesShards, 'must be a boolean');
  const leaseMs = ms('leaseMs', options.leaseMs, 15_000, 100);
  const maxClockSkewMs = ms('maxClockSkewMs', options.maxClockSkewMs, 2_000, 0);
  const inboxPollMs = ms('inboxPollMs', options.inboxPollMs, 100, 1);
  const commandTimeoutMs = ms('commandTimeoutMs', options.commandTimeoutMs, 60_000, 1);
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock?.sleep !== 'function') throw bad('clock', clock, 'must implement now() and sleep()');
  const objectOption = (option: string, value: unknown): void => {
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw bad(option, value, 'must be an object');
  };
  objectOption('queueOptions', options.queueOptions);
  objectOption('runtimeOptions', options.runtimeOptions);
  objectOption('cronOptions', options.cronOptions);
  const cronOptions = options.cronOptions ?? {};
  checkOptions(cronOptions, CRON_OPTION_NAMES, 'cluster cronOptions');
  checkSchedulerSettings(cronOptions);
  if (options.runtimeOptions && 'memoPrefix' in options.runtimeOptions) throw bad('runtimeOptions.memoPrefix', (options.runtimeOptions as WorkflowRuntimeOptions).memoPrefix, 'is set by the cluster (one per shard)');
  const schedules =
    options.schedules === undefined
      ? undefined
      : checkClusterSchedules(options.schedules, {
          queueName: options.runtimeOptions?.queueName ?? DEFAULT_QUEUE_NAME,
          workflows,
          jobs: [...jobs.values()],
          jobsQueueName: DEFAULT_JOBS_QUEUE_NAME,
        });
  return {
    name: options.name,
    shards,
    runner: options.runner,
    workflows,
    hook,
    jobs,
    schedules,
    cronOptions,
    memberId,
    takesShards,
    leaseMs,
    maxClockSkewMs,
    inboxPollMs,
    commandTimeoutMs,
    queueOptions: options.queueOptions ?? {},
    runtimeOptions: options.runtimeOptions ?? {},
    clock,
    logger: resolveLogger(options.logger),
  };
}
