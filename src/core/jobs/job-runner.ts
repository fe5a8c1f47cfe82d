/**
 * `JobRunner`: typed jobs over a `WorkflowRuntime` of its own (queue name `jobs` by default, no
 * terminal notifications). Each submission is one run with one step that calls the job's `run`;
 * the outcome is stored in the run memo, so a handle reads it also after a restart.
 *
 * Submission protocol (`submit`):
 * 1. The job must be registered here (INVALID_ARGUMENT, reason `unregistered_job`); the input must
 *    pass `parse.input` and encode (reason `invalid_job_input`).
 * 2. Run input = envelope { name, encoded input }. With an idempotency key the job id is
 *    hex(SHA-256(name + NUL + key)), else a fresh time-ordered id. (The reference hashes the key
 *    alone; keys here are per job name, so two jobs choosing the same key do not collide.)
 * 3. With a key, read the outcome record first (it outlives the run record): same input ⇒ a
 *    handle on it (`newlySubmitted` false) without running; another input ⇒ INPUT_MISMATCH.
 * 4. Else `runtime.submit` (an in-flight duplicate is recognised there: same input ⇒
 *    `newlySubmitted` false, another ⇒ INPUT_MISMATCH).
 *
 * Retention (`retentionMs`, default one day) is the runtime's memo retention and its outcome
 * retention: a finished job's outcome (and the finished-run record that answers for a cancelled
 * job) is swept that long after it ended; afterwards `fetchResult` gives null, `result()`
 * NOT_FOUND, and a keyed resubmission runs again under the same id. Size it to cover the longest
 * gap between resubmissions. `null` keeps outcomes forever.
 */
import { toHex, utf8 } from '../bytes.js';
import type { Clock } from '../clock.js';
import { InvalidArgumentError, InvalidConfigError } from '../errors.js';
import { sha256 } from '../hash.js';
import type { LoggerOption } from '../logger.js';
import type { ObjectStore } from '../objects/object-store.js';
import { checkOptions, optionNames } from '../options.js';
import type { Queue } from '../queue/index.js';
import { show } from '../show.js';
import { InputMismatchError } from '../workflow/errors.js';
import { WorkflowRuntime, type RunnerHandle } from '../workflow/runtime.js';
import type { RunSpec } from '../workflow/runs/submit.js';
import { NoopTerminalHook } from '../workflow/runs/terminal-hook.js';
import type { AnyJob, Job } from './job.js';
import { runJobStep } from './job-dispatch.js';
import { JobHandle } from './job-handle.js';
import { RunnerState, type StateEntry, type StateKey } from './job-state.js';
import { encodeEnvelope } from './job-records.js';
import { RuntimeJobOutcomes } from './runtime-job-outcomes.js';
import { equalBytes } from '../bytes.js';
import type { OpenTelemetryTracer } from '../tracing.js';

export const DEFAULT_JOBS_QUEUE_NAME = 'jobs';
export const DEFAULT_JOB_RETENTION_MS = 86_400_000;

export interface JobRunnerOptions {
  /** Queue name of the job runs. Default `jobs`; several runners and runtimes can share one `Queue` under different names. */
  readonly queueName?: string;
  /** Object-key prefix of job memos and outcomes. Default `{queueName}-memo`. */
  readonly memoPrefix?: string;
  /** How long a finished job's outcome is kept (ms); null keeps it forever. Default one day. */
  readonly retentionMs?: number | null;
  /** Jobs run at once. Default 16. */
  readonly maxConcurrentJobs?: number;
  /** Default attempts per job (a job's `maxAttempts` wins). Default: the queue's. */
  readonly maxAttempts?: number;
  readonly pollIntervalMs?: number;
  readonly clock?: Clock;
  readonly logger?: LoggerOption;
  /**
   * Values every job of this runner reads with `ctx.state(key)`, as `provideState(key, value)`
   * entries (the same as `runner.provide`; the option also reaches the runners a host builds,
   * `createRuntimeHost({ jobRunnerOptions })`).
   */
  readonly state?: readonly StateEntry[];
  /**
   * An OpenTelemetry tracer (`trace.getTracer('my-app')`): a `run.submit` span per submission (a
   * child of the submitter's active span, say the workflow step that submits the job) and a
   * `run.step` span per attempt, as `WorkflowRuntimeOptions.tracer`. Default none.
   */
  readonly tracer?: OpenTelemetryTracer;
}

/** Per-submission options. */
export interface JobSubmitOptions {
  /** Queue priority (lower is claimed first). */
  readonly priority?: number;
  /** Epoch ms before which the job does not start. */
  readonly runAt?: number;
  /** Attempts for this submission (wins over the job's and the runner's). */
  readonly maxAttempts?: number;
  /** Threaded to `ctx.headers`; `workflow.*` names are reserved. */
  readonly headers?: Readonly<Record<string, string>>;
  /** At most `limit` jobs with this key running at once; the others wait, in order (`RunSpec.concurrency`). */
  readonly concurrency?: RunSpec['concurrency'];
  /** At most `limit` jobs with this key start per `periodMs` (`RunSpec.rateLimit`). */
  readonly rateLimit?: RunSpec['rateLimit'];
}

const RUNNER_OPTIONS = optionNames<JobRunnerOptions>({ queueName: true, memoPrefix: true, retentionMs: true, maxConcurrentJobs: true, maxAttempts: true, pollIntervalMs: true, clock: true, logger: true, state: true, tracer: true });
const SUBMIT_OPTIONS = optionNames<JobSubmitOptions>({ priority: true, runAt: true, maxAttempts: true, headers: true, concurrency: true, rateLimit: true });

export class JobRunner {
  private readonly jobs = new Map<string, AnyJob>();
  private readonly state = new RunnerState();
  /** The workflow runtime the jobs run on (for `listRuns`, `getRun`, `listDeadSteps`, ...). */
  readonly runtime: WorkflowRuntime;
  private readonly outcomes: RuntimeJobOutcomes;

  /**
   * Builds a runner over `queue` with job memos and outcomes in `store`. Pure: no I/O until
   * `submit` or `spawn`. Throws INVALID_CONFIG for bad options.
   * @example
   * const runner = new JobRunner(queue, store).register(fetchPage);
   * const worker = runner.spawn();
   * const page = await (await runner.submit(fetchPage, { url })).result();
   */
  constructor(
    queue: Queue,
    store: ObjectStore,
    options: JobRunnerOptions = {},
  ) {
    checkOptions(options, RUNNER_OPTIONS, 'JobRunner options');
    const queueName = options.queueName ?? DEFAULT_JOBS_QUEUE_NAME;
    const retention = options.retentionMs === undefined ? DEFAULT_JOB_RETENTION_MS : options.retentionMs;
    if (options.maxConcurrentJobs !== undefined && (!Number.isInteger(options.maxConcurrentJobs) || options.maxConcurrentJobs < 1)) {
      throw new InvalidConfigError(`maxConcurrentJobs must be a positive integer. maxConcurrentJobs=${show(options.maxConcurrentJobs)}`, { option: 'maxConcurrentJobs' });
    }
    if (options.state !== undefined) {
      if (!Array.isArray(options.state)) throw new InvalidConfigError(`state must be an array of provideState(key, value) entries. state=${show(options.state)}`, { option: 'state' });
      for (const entry of options.state as readonly StateEntry[]) {
        if (typeof entry !== 'object' || entry === null) throw new InvalidConfigError(`state entries come from provideState(key, value). entry=${show(entry)}`, { option: 'state' });
        this.state.provide(entry.key, entry.value);
      }
    }
    let warn: (m: string, e?: unknown) => void = () => undefined;
    this.runtime = new WorkflowRuntime(queue, store, (step) => runJobStep(this.jobs, this.state, step, warn), new NoopTerminalHook(), {
      queueName,
      memoPrefix: options.memoPrefix ?? `${queueName}-memo`,
      memoRetentionMs: retention,
      // A cancelled job stores no job outcome: its finished-run record answers for it, as long.
      outcomeRetentionMs: retention === null ? Infinity : retention,
      // A keyed job's id stays its one job while its outcome is kept, decided in the submission's
      // own transaction: reading the outcome first and submitting after left a window where a
      // duplicate racing the job's end ran it again.
      ...(retention === 0 ? {} : { runIdReuse: 'after-retention' as const }),
      maxConcurrentSteps: options.maxConcurrentJobs ?? 16,
      // Jobs are submitted through the runner (or a cluster's inbox), never as raw commands.
      commandPollMs: null,
      ...(options.maxAttempts === undefined ? {} : { stepMaxAttempts: options.maxAttempts }),
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.tracer === undefined ? {} : { tracer: options.tracer }),
    });
    warn = (m, e) => (options.logger === false ? undefined : console.warn(`[jobs] ${m}`, e));
    this.outcomes = new RuntimeJobOutcomes(this.runtime, queue);
  }

  /** The queue name of the job runs. */
  get queueName(): string {
    return this.runtime.queueName;
  }

  /**
   * Registers jobs to execute and submit here; returns the runner. Jobs may be submitted (and
   * registered) before `spawn`. Throws INVALID_ARGUMENT (reason `duplicate_job`) when another
   * definition already has the name.
   */
  register<I, O, E>(job: Job<I, O, E>): this {
    if (typeof job !== 'object' || job === null || typeof job.name !== 'string' || typeof job.run !== 'function') {
      throw new InvalidArgumentError(`register takes a job from defineJob. job=${show(job)}`, { reason: 'invalid_job' });
    }
    const known = this.jobs.get(job.name);
    if (known !== undefined && known !== job) throw new InvalidArgumentError(`a job is already registered under this name. name=${job.name}`, { reason: 'duplicate_job', name: job.name });
    this.jobs.set(job.name, job);
    return this;
  }

  /**
   * Gives the runner's jobs `value` under `key` (`ctx.state(key)` in `run`); returns the runner.
   * May be called before or after `spawn`. Throws INVALID_ARGUMENT (`invalid_state_key`, or
   * `duplicate_state` when the key already has another value).
   * @example
   * const Db = defineState<Pool>('db');
   * runner.provide(Db, pool); // in a job: const pool = ctx.state(Db);
   */
  provide<T>(key: StateKey<T>, value: T): this {
    this.state.provide(key, value);
    return this;
  }

  /** Executes jobs until `signal` aborts (see `WorkflowRuntime.run`). */
  run(signal?: AbortSignal): Promise<void> {
    return this.runtime.run(signal);
  }

  /** `run` in the background; `shutdown()` stops claiming and waits for jobs in flight. */
  spawn(signal?: AbortSignal): RunnerHandle {
    return this.runtime.spawn(signal);
  }

  /**
   * Submits a job; durable when it resolves. Await `handle.result()` for the output.
   * Rejects with INVALID_ARGUMENT (`unregistered_job`, `invalid_job_input` for input that fails
   * `parse.input` or the codec or an idempotency key that is not a string, `invalid_spec` for
   * bad options), INPUT_MISMATCH (the key's job exists with another input), CLOSED, FENCED or
   * store errors.
   */
  async submit<I, O, E>(job: Job<I, O, E>, input: I, options: JobSubmitOptions = {}): Promise<JobHandle<O, E>> {
    checkOptions(options, SUBMIT_OPTIONS, 'job submit options', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
    this.checkRegistered(job);
    let encoded: Uint8Array;
    let key: string | null | undefined;
    try {
      const parsed = job.parse.input ? job.parse.input(input) : input;
      encoded = job.codec.encode(parsed);
      key = await job.idempotencyKey?.(parsed);
    } catch (e) {
      const err = new InvalidArgumentError(`job input does not parse or encode: ${e instanceof Error ? e.message : String(e)}. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
      Object.defineProperty(err, 'cause', { value: e, configurable: true, writable: true });
      throw err;
    }
    if (key !== undefined && key !== null && typeof key !== 'string') {
      throw new InvalidArgumentError(`idempotencyKey must return a string or null. key=${show(key)} job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
    }
    const runInput = encodeEnvelope({ name: job.name, input: encoded });
    let runId: string | undefined;
    if (typeof key === 'string') {
      runId = toHex(await sha256(utf8(`${job.name}\u0000${key}`)));
      const record = await this.outcomes.record(runId);
      if (record !== null) {
        if (!equalBytes(record.inputHash, await sha256(runInput))) throw new InputMismatchError(runId);
        return new JobHandle(this.outcomes, job, runId, false);
      }
    }
    const outcome = await this.runtime.submit({
      ...(runId === undefined ? {} : { runId }),
      input: runInput,
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
      ...(options.runAt === undefined ? {} : { runAt: options.runAt }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...((options.maxAttempts ?? job.maxAttempts) === undefined ? {} : { maxAttemptsPerStep: options.maxAttempts ?? job.maxAttempts }),
    });
    return new JobHandle(this.outcomes, job, outcome.runId, outcome.newlySubmitted);
  }

  /**
   * A handle on a job submitted earlier (by this process or one before a restart), typed by
   * `job`; no I/O. Throws INVALID_ARGUMENT (`unregistered_job`, or a bad id).
   */
  handle<I, O, E>(job: Job<I, O, E>, id: string): JobHandle<O, E> {
    this.checkRegistered(job);
    if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw new InvalidArgumentError(`invalid job id. id=${show(id)}`, { reason: 'invalid_run_id' });
    return new JobHandle(this.outcomes, job, id, false);
  }

  /**
   * Cancels a pending or running job (see `WorkflowRuntime.cancel`): its `ctx.signal` fires, and
   * `result()` rejects with JOB_FAILED, reason `cancelled` (also when called later, within the
   * retention); `fetchResult` answers the same failure. False for an unknown or ended job.
   */
  cancel(id: string): Promise<boolean> {
    return this.runtime.cancel(id);
  }

  private checkRegistered(job: AnyJob): void {
    const known = typeof job?.name === 'string' ? this.jobs.get(job.name) : undefined;
    if (known === undefined || known !== job) {
      throw new InvalidArgumentError(`job is not registered with this runner. job=${show(job?.name)}`, { reason: 'unregistered_job', job: typeof job?.name === 'string' ? job.name : null });
    }
  }
}
