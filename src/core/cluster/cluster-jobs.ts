/**
 * Typed jobs in a cluster: a job is a single-step run of its shard's `JobRunner` (queue name
 * `jobs`). Submission is routed like any run (inbox.ts); the outcome is a memo object of the
 * shard (`<shard>/jobs-memo/...`), which any member reads straight from the store, so a
 * cluster's `JobHandle` resolves on every member, also one that never owned the shard.
 */
import { equalBytes, toHex, utf8 } from '../bytes.js';
import type { Clock } from '../clock.js';
import { InvalidArgumentError } from '../errors.js';
import { sha256 } from '../hash.js';
import type { ObjectStore } from '../objects/object-store.js';
import { InputMismatchError } from '../workflow/errors.js';
import { endedWithoutRecord, JobHandle, jobNotFound, type JobOutcomeSource, type JobRef } from '../jobs/job-handle.js';
import { encodeEnvelope, readOutcome, type JobOutcome, type OutcomeRecord } from '../jobs/job-records.js';
import type { JobSubmitOptions } from '../jobs/index.js';
import type { AnyJob, Job } from '../jobs/job.js';
import { MemoStore } from '../workflow/steps/memo.js';
import type { FinishedRun, RunStatus } from '../workflow/index.js';
import { show } from '../show.js';
import { checkOptions, optionNames } from '../options.js';

/** What the cluster's job outcomes need of their member: where outcomes are, the job's run, and its cancel. */
export interface JobMember {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly pollMs: number;
  memoPrefix(id: string): string;
  /** The job's run status while it is active, else null (its shard's jobs runtime or a reader of it). */
  status(id: string): Promise<RunStatus | null>;
  /** The job's finished-run record, once it ended (kept `outcomeRetentionMs`), else null. */
  finished(id: string): Promise<FinishedRun | null>;
  /** `Cluster.cancelJob`. */
  cancel(id: string): Promise<boolean>;
}

const SUBMIT_OPTIONS = optionNames<JobSubmitOptions>({ priority: true, runAt: true, maxAttempts: true, headers: true, concurrency: true, rateLimit: true });

/** The most a waiting handle sleeps between two reads of the outcome. */
const MAX_RESULT_POLL_MS = 1000;
/** Every this many empty reads, the handle checks that the job's run still exists. */
const ACTIVE_CHECK_EVERY = 5;

/** The sleep after the empty read of `round` (from 0): `pollMs`, growing by half each time, to 1 s at most. */
function pollDelay(pollMs: number, round: number): number {
  let ms = pollMs;
  for (let i = 0; i < round; i++) {
    const next = Math.min(Math.round(ms * 1.5), MAX_RESULT_POLL_MS);
    if (next === ms) break;
    ms = next;
  }
  return ms;
}

/** A cluster's jobs as a `JobOutcomeSource`: outcomes read from the store by any member, waited for by polling it. */
export class ClusterJobOutcomes implements JobOutcomeSource {
  constructor(private readonly member: JobMember) {}

  /** The stored outcome record of job `id`, or null. CORRUPT_DATA for an undecodable one. */
  record(id: string): Promise<OutcomeRecord | null> {
    return readOutcome(new MemoStore(this.member.store, this.member.memoPrefix(id)).newRunMemo(id));
  }

  /** Only the stored outcome: a job that ended without one answers null (`result()` says why). */
  fetch(job: JobRef): Promise<JobOutcome | null> {
    return this.record(job.id);
  }

  async wait(job: JobRef, signal: AbortSignal | undefined, round: number): Promise<JobOutcome | null> {
    const stored = await this.record(job.id);
    if (stored) return stored;
    if ((round + 1) % ACTIVE_CHECK_EVERY === 0 && (await this.member.status(job.id)) === null) return this.endedOutcome(job);
    // An abort ends the sleep early; the handle then says so.
    await this.member.clock.sleep(pollDelay(this.member.pollMs, round), signal).catch(() => undefined);
    return null;
  }

  status(id: string): Promise<RunStatus | null> {
    return this.member.status(id);
  }

  cancel(id: string): Promise<boolean> {
    return this.member.cancel(id);
  }

  /** The outcome of a job whose run is no longer active. */
  private async endedOutcome(job: JobRef): Promise<JobOutcome> {
    const late = await this.record(job.id);
    if (late) return late;
    // Ended without a job outcome: cancelled or dead-lettered from outside, as its run's record says.
    const run = await this.member.finished(job.id);
    const ended = run === null ? undefined : endedWithoutRecord(run);
    if (ended) return ended;
    if (job.newlySubmitted) return { ok: false, reason: 'no_outcome', message: 'the job ended without recording an outcome' };
    throw jobNotFound(job.id);
  }
}

/** A job submission ready to route: its run id, its run input (the envelope), and the run spec fields. */
export interface PreparedJob {
  readonly runId: string;
  readonly input: Uint8Array;
  readonly spec: { headers?: Record<string, string>; priority?: number; maxAttemptsPerStep?: number; runAt?: number } & Pick<JobSubmitOptions, 'concurrency' | 'rateLimit'>;
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
    key = await job.idempotencyKey?.(parsed as I);
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
      // A job's run lives on the shard of its id: its flow limits hold per shard.
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    },
  };
}

/** An earlier job under the same key that already finished: its handle (INPUT_MISMATCH for another input), or undefined. */
export async function finishedJob<O, E>(outcomes: ClusterJobOutcomes, job: AnyJob, prepared: PreparedJob): Promise<JobHandle<O, E> | undefined> {
  const record = await outcomes.record(prepared.runId);
  if (record === null) return undefined;
  if (!equalBytes(record.inputHash, await sha256(prepared.input))) throw new InputMismatchError(prepared.runId);
  return new JobHandle<O, E>(outcomes, job, prepared.runId, false);
}
