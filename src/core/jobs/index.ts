/**
 * Typed jobs: a typed async function run as a single-step workflow run whose outcome an awaiting
 * caller gets back, also after a restart (`defineJob`, `JobRunner`, `JobHandle`).
 *
 * Errors: the job's own failure is JOB_FAILED (`JobFailedError`, `details.reason`); submission
 * rejects with INVALID_ARGUMENT (`unregistered_job`, `invalid_job_input`, `invalid_spec`),
 * INPUT_MISMATCH; waiting with NOT_FOUND, CANCELLED, TIMEOUT; runner state with INVALID_ARGUMENT
 * (`invalid_state_key`, `duplicate_state`) and, read in a job, INVALID_CONFIG (`missing_state`);
 * and the runtime's CLOSED / FENCED / CORRUPT_DATA / STORE_* for infrastructure failures.
 */
export { defineJob, type AnyJob, type Job, type JobCodec, type JobContext, type JobDefinition, type JobParse } from './job.js';
export { JobFailedError, type JobFailureReason } from './job-errors.js';
export { JobHandle, type JobResult, type JobResultOptions } from './job-handle.js';
export { JobRunner, type JobRunnerOptions, type JobSubmitOptions } from './job-runner.js';
export { defineState, provideState, type StateEntry, type StateKey } from './job-state.js';
export { payloadIdempotencyKey } from './payload-key.js';
