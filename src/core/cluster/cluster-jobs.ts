/**
 * Typed jobs in a cluster: a job is a single-step run of its shard's `JobRunner` (queue name
 * `jobs`). Submission is routed like any run (inbox.ts); the outcome is a memo object of the
 * shard (`<shard>/jobs-memo/...`), which any member reads straight from the store, so a
 * `ClusterJobHandle` resolves on every member, also one that never owned the shard.
 */
import { equalBytes, toHex, utf8 } from '../bytes.js';
import type { Clock } from '../clock.js';
import { InvalidArgumentError, NotFoundError, TaqubaError } from '../errors.js';
import { sha256 } from '../hash.js';
import type { ObjectStore } from '../objects/object-store.js';
import { InputMismatchError } from '../workflow/errors.js';
import { endedWithoutRecord, jobResultOf, type JobResult, type JobResultOptions } from '../jobs/job-handle.js';
import { encodeEnvelope, readOutcome } from '../jobs/job-records.js';
import { JobFailedError, type JobSubmitOptions } from '../jobs/index.js';
import type { AnyJob, Job } from '../jobs/job.js';
import { MemoStore } from '../workflow/steps/memo.js';
import type { FinishedRun, RunStatus } from '../workflow/index.js';
import { show } from '../show.js';
import { checkOptions, optionNames } from '../options.js';

/** What a handle needs of its member: where outcomes are, and the job's run status. */
export interface JobSource {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly pollMs: number;
  memoPrefix(id: string): string;
  /** The job's run status while it is active, else null (its shard's jobs runtime or a reader of it). */
  status(id: string): Promise<RunStatus | null>;
  /** The job's finished-run record, once it ended (kept `outcomeRetentionMs`), else null. */
  finished(id: string): Promise<FinishedRun | null>;
}

const SUBMIT_OPTIONS = optionNames<JobSubmitOptions>({ priority: true, runAt: true, maxAttempts: true, headers: true });

/** The most a waiting handle sleeps between two reads of the outcome. */
const MAX_RESULT_POLL_MS = 1000;
/** Every this many empty reads, the handle checks that the job's run still exists. */
const ACTIVE_CHECK_EVERY = 5;

export class ClusterJobHandle<O, E = never> {
  /** @internal */
  constructor(
    private readonly source: JobSource,
    private readonly job: AnyJob,
    /** The job id (= its run id). */
    readonly id: string,
    /** False when collapsed onto an earlier submission with the same idempotency key; false for `jobHandle`. */
    readonly newlySubmitted: boolean,
  ) {}

  get jobName(): string {
    return this.job.name;
  }

  /** The stored outcome, or null while the job runs. From any member. CORRUPT_DATA or store errors. */
  async fetchResult(): Promise<JobResult<O, E> | null> {
    const record = await readOutcome(new MemoStore(this.source.store, this.source.memoPrefix(this.id)).newRunMemo(this.id));
    return record === null ? null : jobResultOf<O, E>(this.job, this.id, record);
  }

  /**
   * Waits for the job's outcome (polling the store, backing off to 1 s) and resolves with its
   * output. Rejects with JOB_FAILED for the job's own failure (reason `cancelled` or
   * `dead_lettered` when its run ended from outside, as its finished-run record says; `no_outcome` when the run
   * ended without one, e.g. cancelled), NOT_FOUND for an id with neither a run nor an outcome,
   * CANCELLED when `options.signal` aborts, or store errors.
   */
  async result(options: JobResultOptions = {}): Promise<O> {
    const signal = options.signal;
    const cancelled = () => new TaqubaError('CANCELLED', `stopped waiting for the job. jobId=${this.id}`, { details: { jobId: this.id } });
    const unwrap = (r: JobResult<O, E>): O => {
      if (r.ok) return r.value;
      throw r.error;
    };
    let waitMs = this.source.pollMs;
    for (let polls = 1; ; polls++) {
      if (signal?.aborted) throw cancelled();
      const stored = await this.fetchResult();
      if (stored) return unwrap(stored);
      if (polls % ACTIVE_CHECK_EVERY === 0 && (await this.source.status(this.id)) === null) {
        const late = await this.fetchResult();
        if (late) return unwrap(late);
        // Ended without a job outcome: cancelled or dead-lettered from outside, as its run's record says.
        const run = await this.source.finished(this.id);
        const ended = run === null ? undefined : endedWithoutRecord<E>(this.job, this.id, run);
        if (ended) throw ended;
        if (this.newlySubmitted) throw new JobFailedError<E>({ jobId: this.id, jobName: this.job.name, reason: 'no_outcome', message: 'the job ended without recording an outcome' });
        throw new NotFoundError(`no job and no stored outcome under this id. jobId=${this.id}`, { jobId: this.id, reason: 'job_not_found' });
      }
      try {
        await this.source.clock.sleep(waitMs, signal);
      } catch {
        throw cancelled();
      }
      waitMs = Math.min(Math.round(waitMs * 1.5), MAX_RESULT_POLL_MS);
    }
  }

  /** The job's run status (pending, running, cancelling), or null once it ended; from any member. See `Cluster.readStatus`. */
  status(): Promise<RunStatus | null> {
    return this.source.status(this.id);
  }
}

/** A job submission ready to route: its run id, its run input (the envelope), and the run spec fields. */
export interface PreparedJob {
  readonly runId: string;
  readonly input: Uint8Array;
  readonly spec: { headers?: Record<string, string>; priority?: number; maxAttemptsPerStep?: number; runAt?: number };
}

/**
 * Checks and encodes a job submission like `JobRunner.submit`: INVALID_ARGUMENT (`unregistered_job`,
 * `invalid_job_input`, `invalid_spec`). A job with an idempotency key gets the run id
 * `JobRunner` would give it (SHA-256 of name and key).
 */
export async function prepareJob<I, O, E>(jobs: ReadonlyMap<string, AnyJob>, job: Job<I, O, E>, input: I, options: JobSubmitOptions, nextRunId: () => string): Promise<PreparedJob> {
  if (typeof job?.name !== 'string' || jobs.get(job.name) !== job) {
    throw new InvalidArgumentError(`job is not in this cluster's jobs option. job=${show(job?.name)}`, { reason: 'unregistered_job', job: typeof job?.name === 'string' ? job.name : null });
  }
  checkOptions(options, SUBMIT_OPTIONS, 'job submit options', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
  let encoded: Uint8Array;
  let key: unknown;
  try {
    const parsed = job.parse.input ? job.parse.input(input) : input;
    encoded = job.codec.encode(parsed);
    key = job.idempotencyKey?.(parsed as I);
  } catch (e) {
    throw new InvalidArgumentError(`job input does not parse or encode: ${e instanceof Error ? e.message : String(e)}. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
  }
  if (key !== undefined && key !== null && typeof key !== 'string') throw new InvalidArgumentError(`idempotencyKey must return a string or null. key=${show(key)} job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
  const runId = typeof key === 'string' ? toHex(await sha256(utf8(`${job.name}\u0000${key}`))) : nextRunId();
  const attempts = options.maxAttempts ?? job.maxAttempts;
  return {
    runId,
    input: encodeEnvelope({ name: job.name, input: encoded }),
    spec: {
      ...(options.headers === undefined ? {} : { headers: { ...options.headers } }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
      ...(options.runAt === undefined ? {} : { runAt: options.runAt }),
      ...(attempts === undefined ? {} : { maxAttemptsPerStep: attempts }),
    },
  };
}

/** An earlier job under the same key that already finished: its handle (INPUT_MISMATCH for another input), or undefined. */
export async function finishedJob<O, E>(source: JobSource, job: AnyJob, prepared: PreparedJob): Promise<ClusterJobHandle<O, E> | undefined> {
  const record = await readOutcome(new MemoStore(source.store, source.memoPrefix(prepared.runId)).newRunMemo(prepared.runId));
  if (record === null) return undefined;
  if (!equalBytes(record.inputHash, await sha256(prepared.input))) throw new InputMismatchError(prepared.runId);
  return new ClusterJobHandle<O, E>(source, job, prepared.runId, false);
}
