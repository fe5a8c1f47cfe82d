/**
 * `client.jobs`: typed jobs from the page. The page passes the same `Job` definition the worker
 * registered; only its `name`, `codec` and `parse` are used here (inputs are encoded, outputs and
 * error payloads decoded and checked on the page), while `run` executes in the leader's worker.
 * A handle is the job plus its id, so a reloaded page re-attaches with `jobs.handle(job, id)`.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { JobHandle, type Job, type JobSubmitOptions } from '../core/jobs/index.js';
import type { JobOutcomeSource } from '../core/jobs/job-handle.js';
import { awaitInChunks, WAIT_CHUNK_MS } from './chunked-wait.js';
import type { RuntimeOperations } from './protocol.js';

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
  submit<I, O, E>(job: Job<I, O, E>, input: I, options?: JobSubmitOptions): Promise<JobHandle<O, E>>;
  /** A handle on a job submitted earlier (also by a page before a reload), typed by `job`; no I/O. */
  handle<I, O, E>(job: Job<I, O, E>, id: string): JobHandle<O, E>;
  /** Cancels a pending or running job; false for an unknown or ended one. */
  cancel(id: string): Promise<boolean>;
}

/** The job operations the client needs (routed to the leader). */
export type JobCalls = Pick<RuntimeOperations, 'jobSubmit' | 'jobWait' | 'jobFetch' | 'jobStatus' | 'jobCancel'>;

/** The page's `JobOutcomeSource`: the routed job operations, waiting in chunks so that a wait follows the leader from tab to tab. */
function routedJobOutcomes(calls: JobCalls): JobOutcomeSource {
  return {
    fetch: (job) => calls.jobFetch(job.jobName, job.id),
    wait: (job, signal) => awaitInChunks(() => calls.jobWait(job.jobName, job.id, WAIT_CHUNK_MS), signal, `the job. jobId=${job.id}`, { jobId: job.id }),
    status: (id) => calls.jobStatus(id),
    cancel: (id) => calls.jobCancel(id),
  };
}

/** `client.jobs` over the routed job operations. */
export function createJobsClient(calls: JobCalls): JobsClient {
  const outcomes = routedJobOutcomes(calls);
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
      return new JobHandle(outcomes, job, id, newlySubmitted);
    },
    handle: (job, id) => new JobHandle(outcomes, job, id, false),
    cancel: (id) => calls.jobCancel(id),
  };
}
