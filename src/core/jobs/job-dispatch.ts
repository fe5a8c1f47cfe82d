/**
 * The single step of a job run.
 * 1. Decode the envelope (not one → permanent, recorded as `invalid_input`).
 * 2. An outcome record for this input already exists (an earlier delivery wrote it and was cut
 *    off before its settlement committed): settle with it without running the job again, so an
 *    outcome a caller may already have read never changes.
 * 3. Find the job by name (`unregistered_job`), decode and parse the input (`invalid_input`).
 * 4. Run it. `ctx.fail(e)` → record `job_error` with the encoded payload; the run fails through
 *    `StepOutcome.fail` (an expected outcome: no retry, no dead letter, no error log). Another
 *    throw → classified by `StepError.from`; recorded (`error`) when permanent or on the last
 *    attempt, then rethrown so the queue retries or dead-letters.
 * 5. Parse and encode the output (`invalid_output`), write the success record (durable before
 *    the step succeeds; a failed write is a transient retry), succeed.
 * Failure records are best-effort: a failed write is logged and the step still fails.
 */
import { equalBytes } from '../bytes.js';
import { sha256 } from '../hash.js';
import { StepOutcome } from '../workflow/steps/outcome.js';
import { StepError } from '../workflow/steps/step-error.js';
import type { Step } from '../workflow/steps/step.js';
import type { AnyJob, JobContext } from './job.js';
import type { JobFailureReason } from './job-errors.js';
import type { RunnerState } from './job-state.js';
import { decodeEnvelope, readOutcome, writeOutcome } from './job-records.js';

const FAILURE = Symbol('taquba-workflow.job-failure');
const JOB_ERROR_MESSAGE = 'the job failed with its own error';

interface JobFailure {
  readonly [FAILURE]: true;
  readonly payload: unknown;
}

function isJobFailure(e: unknown): e is JobFailure {
  return typeof e === 'object' && e !== null && (e as Partial<JobFailure>)[FAILURE] === true;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message || e.name : String(e);
}

export async function runJobStep(jobs: ReadonlyMap<string, AnyJob>, state: RunnerState, step: Step, warn: (m: string, e?: unknown) => void): Promise<StepOutcome> {
  const inputHash = await sha256(step.payload);
  const record = async (reason: JobFailureReason, text: string, error?: Uint8Array): Promise<void> => {
    try {
      await writeOutcome(step.runMemo, { inputHash, ok: false, reason, message: text, error });
    } catch (e) {
      warn(`recording a job failure failed. jobId=${step.runId}`, e);
    }
  };
  const fail = async (reason: JobFailureReason, text: string): Promise<never> => {
    await record(reason, text);
    throw StepError.permanent(text);
  };

  const existing = await readOutcome(step.runMemo).catch(() => null);
  if (existing && equalBytes(existing.inputHash, inputHash)) {
    if (existing.ok) return StepOutcome.succeed(existing.output);
    if (existing.reason === 'job_error') return StepOutcome.fail(existing.message);
    throw StepError.permanent(existing.message);
  }
  const envelope = decodeEnvelope(step.payload);
  if (!envelope) return fail('invalid_input', 'the run input is not a job envelope');
  const job = jobs.get(envelope.name);
  if (!job) return fail('unregistered_job', `no job registered under the name ${JSON.stringify(envelope.name)}`);
  let input: unknown;
  try {
    input = job.codec.decode(envelope.input);
    if (job.parse.input) input = job.parse.input(input);
  } catch (e) {
    return fail('invalid_input', `input does not decode or parse: ${message(e)}`);
  }

  const ctx: JobContext<unknown> = {
    id: step.runId,
    name: job.name,
    attempt: step.attempt,
    maxAttempts: step.maxAttempts,
    signal: step.signal,
    lease: step.lease,
    memo: step.memo,
    kv: step.kv,
    effects: step.effects,
    headers: step.headers,
    state: (key) => state.get(key, job.name),
    tryState: (key) => state.tryGet(key),
    fail(payload: unknown): never {
      throw { [FAILURE]: true, payload } satisfies JobFailure;
    },
  };
  let output: unknown;
  try {
    output = await job.run(input, ctx);
  } catch (e) {
    if (isJobFailure(e)) {
      let bytes: Uint8Array;
      try {
        bytes = job.codec.encode(e.payload);
      } catch (encodeError) {
        return fail('error', `the job's error payload cannot be encoded: ${message(encodeError)}`);
      }
      // Written before the step settles, like a success record.
      await writeOutcome(step.runMemo, { inputHash, ok: false, reason: 'job_error', message: JOB_ERROR_MESSAGE, error: bytes });
      return StepOutcome.fail(JOB_ERROR_MESSAGE);
    }
    const stepError = StepError.from(e);
    if (stepError.isPermanent || step.attempt >= step.maxAttempts) return fail('error', stepError.message);
    throw stepError;
  }
  let outputBytes: Uint8Array;
  try {
    outputBytes = job.codec.encode(job.parse.output ? job.parse.output(output) : output);
  } catch (e) {
    return fail('invalid_output', `output does not parse or encode: ${message(e)}`);
  }
  await writeOutcome(step.runMemo, { inputHash, ok: true, output: outputBytes });
  return StepOutcome.succeed(outputBytes);
}
