/**
 * The job's own failure, as the awaiting caller sees it: `JobFailedError` (code JOB_FAILED), kept
 * apart from infrastructure errors (CLOSED, FENCED, STORE_*, NOT_FOUND, ...), which reject the
 * same calls with their own codes. `details.reason` says how the job failed:
 * - `job_error`: `run` called `ctx.fail(error)`; `error` holds that payload, decoded and typed;
 * - `error`: `run` threw (out of attempts, or a permanent error); `message` is the thrown message;
 * - `unregistered_job`: the runner that executed it has no job of that name;
 * - `invalid_input`: the stored input did not decode or failed `parse.input`;
 * - `invalid_output`: the output could not be encoded or failed `parse.output`;
 * - `dead_lettered`: no outcome was recorded and the queue job is dead (e.g. interrupted too often);
 * - `cancelled`: the job was cancelled (`JobRunner.cancel`); `message` is the reason;
 * - `no_outcome`: the run ended without an outcome for another reason (a runner without
 *   finished-run records; kept for the cluster's job handles, which still answer so for a cancel).
 */
import { TaqubaError } from '../errors.js';

export type JobFailureReason = 'job_error' | 'error' | 'unregistered_job' | 'invalid_input' | 'invalid_output' | 'dead_lettered' | 'cancelled' | 'no_outcome';

export class JobFailedError<E = unknown> extends TaqubaError {
  /** The payload of `ctx.fail` (reason `job_error`); undefined otherwise. */
  readonly error: E | undefined;
  readonly reason: JobFailureReason;
  readonly jobId: string;
  readonly jobName: string;

  constructor(init: { jobId: string; jobName: string; reason: JobFailureReason; message: string; error?: E }) {
    super('JOB_FAILED', `job failed: ${init.message}. jobId=${init.jobId} job=${init.jobName} reason=${init.reason}`, {
      details: { jobId: init.jobId, jobName: init.jobName, reason: init.reason, message: init.message },
    });
    this.name = 'JobFailedError';
    this.error = init.error;
    this.reason = init.reason;
    this.jobId = init.jobId;
    this.jobName = init.jobName;
  }
}
