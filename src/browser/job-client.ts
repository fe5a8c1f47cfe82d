/**
 * `client.jobs`: typed jobs from the page. The page passes the same `Job` definition the worker
 * registered; only its `name`, `codec` and `parse` are used here (inputs are encoded, outputs and
 * error payloads decoded and checked on the page), while `run` executes in the leader's worker.
 * A handle is plain data plus an id, so a reloaded page re-attaches with `jobs.handle(job, id)`.
 */
import { CorruptDataError, InvalidArgumentError } from '../core/errors.js';
import { JobFailedError, type Job, type JobResult, type JobResultOptions, type JobSubmitOptions } from '../core/jobs/index.js';
import { awaitInChunks, WAIT_CHUNK_MS } from './chunked-wait.js';
import type { RuntimeOperations, WireJobOutcome } from './protocol.js';

/** A job submitted through the page client, typed by the job's output and error payload. */
export interface RemoteJobHandle<O, E = never> {
  /** The job id (= its run id): keep it to re-attach after a reload (`jobs.handle(job, id)`). */
  readonly id: string;
  readonly jobName: string;
  /** False when collapsed onto an earlier submission with the same idempotency key, and for `jobs.handle`. */
  readonly newlySubmitted: boolean;
  /**
   * Waits for the job (on whichever tab leads, across leader changes) and resolves with its
   * output. Rejects with JOB_FAILED (`JobFailedError`, its `error` the typed payload of
   * `ctx.fail`) for the job's own failure, NOT_FOUND (no job and no stored outcome under this
   * id), CANCELLED when `options.signal` aborts (the job goes on), CORRUPT_DATA for an outcome
   * that does not decode or parse here, INVALID_ARGUMENT (`unregistered_job` in the worker), and
   * CLOSED or STORE_* otherwise.
   */
  result(options?: JobResultOptions): Promise<O>;
  /** The stored outcome, or null while the job is pending or running. Errors as `result`, without NOT_FOUND and CANCELLED. */
  fetchResult(): Promise<JobResult<O, E> | null>;
  /** Cancels the job (`result()` then rejects with JOB_FAILED, reason `no_outcome`); false when unknown or ended. */
  cancel(): Promise<boolean>;
}

/** Typed jobs through the worker host (`client.jobs`). */
export interface JobsClient {
  /**
   * Submits `job` (registered in the worker under the same name) with `input`; durable when it
   * resolves. Rejects with INVALID_ARGUMENT (`invalid_job_input` when the input does not encode
   * here or fails `parse.input` in the worker, `unregistered_job`, `invalid_spec`),
   * INPUT_MISMATCH, CLOSED, STORE_*, and STORE_UNAVAILABLE (`leader_changed`) when a forwarded
   * submission's leader went away unanswered (give the job an idempotency key to resubmit safely).
   * @example
   * const handle = await client.jobs.submit(resizeImage, { url, width: 640 });
   * localStorage.setItem('resize', handle.id);
   * const thumbnail = await handle.result();
   */
  submit<I, O, E>(job: Job<I, O, E>, input: I, options?: JobSubmitOptions): Promise<RemoteJobHandle<O, E>>;
  /** A handle on a job submitted earlier (also by a page before a reload), typed by `job`; no I/O. */
  handle<I, O, E>(job: Job<I, O, E>, id: string): RemoteJobHandle<O, E>;
  /** Cancels a pending or running job; false for an unknown or ended one. */
  cancel(id: string): Promise<boolean>;
}

/** The job operations the client needs (routed to the leader). */
export type JobCalls = Pick<RuntimeOperations, 'jobSubmit' | 'jobWait' | 'jobFetch' | 'jobCancel'>;

function decodeOutcome<O, E>(job: Job<unknown, O, E>, id: string, outcome: WireJobOutcome): JobResult<O, E> {
  const decode = <T>(bytes: Uint8Array, parse: ((v: unknown) => T) | undefined, what: string): T => {
    try {
      const value = job.codec.decode(bytes);
      return parse ? parse(value) : (value as T);
    } catch (e) {
      throw new CorruptDataError(`job ${what} does not decode or parse on the page. jobId=${id} job=${job.name}`, { reason: 'undecodable_record', runId: id }, e);
    }
  };
  if (outcome.ok) return { ok: true, value: decode(outcome.output, job.parse.output, 'output') };
  const error = outcome.error === undefined ? undefined : decode(outcome.error, job.parse.error, 'error');
  return { ok: false, error: new JobFailedError<E>({ jobId: id, jobName: job.name, reason: outcome.reason, message: outcome.message, ...(error === undefined ? {} : { error }) }) };
}

function createHandle<I, O, E>(calls: JobCalls, job: Job<I, O, E>, id: string, newlySubmitted: boolean): RemoteJobHandle<O, E> {
  const anyJob = job as unknown as Job<unknown, O, E>;
  return {
    id,
    jobName: job.name,
    newlySubmitted,
    async fetchResult() {
      const outcome = await calls.jobFetch(job.name, id);
      return outcome === null ? null : decodeOutcome(anyJob, id, outcome);
    },
    async result(options: JobResultOptions = {}) {
      const outcome = await awaitInChunks(() => calls.jobWait(job.name, id, WAIT_CHUNK_MS), options.signal, `the job. jobId=${id}`, { jobId: id });
      const result = decodeOutcome(anyJob, id, outcome);
      if (result.ok) return result.value;
      throw result.error;
    },
    cancel: () => calls.jobCancel(id),
  };
}

/** `client.jobs` over the routed job operations. */
export function createJobsClient(calls: JobCalls): JobsClient {
  return {
    async submit(job, input, options) {
      if (typeof job !== 'object' || job === null || typeof job.name !== 'string' || typeof job.codec?.encode !== 'function') {
        throw new InvalidArgumentError('submit takes a job from defineJob', { reason: 'unregistered_job' });
      }
      let encoded: Uint8Array;
      try {
        encoded = job.codec.encode(input);
      } catch (e) {
        const err = new InvalidArgumentError(`job input does not encode: ${e instanceof Error ? e.message : String(e)}. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
        Object.defineProperty(err, 'cause', { value: e, configurable: true, writable: true });
        throw err;
      }
      const { id, newlySubmitted } = await calls.jobSubmit(job.name, encoded, options);
      return createHandle(calls, job, id, newlySubmitted);
    },
    handle: (job, id) => createHandle(calls, job, id, false),
    cancel: (id) => calls.jobCancel(id),
  };
}
