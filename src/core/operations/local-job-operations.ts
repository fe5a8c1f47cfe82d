/**
 * The serving side of the job operations: the host's `JobRunner` (runtime-host.ts) with the jobs
 * it registered. Inputs arrive and outcomes leave as the bytes of each job's codec, so the caller
 * decodes them with the same `Job` definition (whose `run` stays here). Waiting is chunked
 * (bounded-wait.ts).
 */
import { InvalidArgumentError } from '../errors.js';
import type { Clock } from '../clock.js';
import { JobFailedError, type JobResult, type JobRunner, type JobSubmitOptions } from '../jobs/index.js';
import type { AnyJob } from '../jobs/job.js';
import type { RunStatus } from '../workflow/index.js';
import { show } from '../show.js';
import { waitAtMost } from './bounded-wait.js';
import type { JobSubmission, WireJobOutcome } from './operations.js';

export class LocalJobOperations {
  private readonly jobs = new Map<string, AnyJob>();
  private readonly stopping = new AbortController();
  private readonly clock: Clock;

  /** Registers `jobs` with `runner`. Throws INVALID_ARGUMENT (`invalid_job`, `duplicate_job`) for bad jobs. */
  constructor(
    private readonly runner: JobRunner,
    jobs: readonly AnyJob[],
  ) {
    this.clock = runner.runtime.clock;
    for (const job of jobs) {
      runner.register(job);
      this.jobs.set(job.name, job);
    }
  }

  /** Answers every wait (null) at once from now on, so a stopping host is not held up by waits. */
  stop(): void {
    this.stopping.abort();
  }

  async jobSubmit(name: string, input: Uint8Array, options?: JobSubmitOptions): Promise<JobSubmission> {
    const job = this.job(name);
    if (!(input instanceof Uint8Array)) throw new InvalidArgumentError(`job input must be the bytes of the job's codec. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
    let decoded: unknown;
    try {
      decoded = job.codec.decode(input);
    } catch (e) {
      const err = new InvalidArgumentError(`job input does not decode. job=${job.name}`, { reason: 'invalid_job_input', job: job.name });
      Object.defineProperty(err, 'cause', { value: e, configurable: true, writable: true });
      throw err;
    }
    const handle = await this.runner.submit(job, decoded, options);
    return { id: handle.id, newlySubmitted: handle.newlySubmitted };
  }

  /** Waits `waitMs` of the runner's clock at most (bounded-wait.ts). */
  async jobWait(name: string, id: string, waitMs: number): Promise<WireJobOutcome | null> {
    const job = this.job(name);
    const handle = this.runner.handle(job, id);
    return waitAtMost(this.clock, waitMs, this.stopping.signal, async (signal) => {
      try {
        return this.wire(job, { ok: true, value: await handle.result({ signal }) });
      } catch (e) {
        if (e instanceof JobFailedError) return this.wire(job, { ok: false, error: e });
        throw e;
      }
    });
  }

  async jobFetch(name: string, id: string): Promise<WireJobOutcome | null> {
    const job = this.job(name);
    const result = await this.runner.handle(job, id).fetchResult();
    return result === null ? null : this.wire(job, result);
  }

  jobStatus(id: string): Promise<RunStatus | null> {
    return this.runner.runtime.readStatus(id);
  }

  jobCancel(id: string): Promise<boolean> {
    return this.runner.cancel(id);
  }

  /** The registered job of `name`. INVALID_ARGUMENT (`unregistered_job`) otherwise. */
  private job(name: string): AnyJob {
    const job = typeof name === 'string' ? this.jobs.get(name) : undefined;
    if (job === undefined) throw noJobsError(name);
    return job;
  }

  /** An outcome as codec bytes (values were decoded and parsed on the way out of the store; encoding them again gives the stored form). */
  private wire(job: AnyJob, result: JobResult<unknown, unknown>): WireJobOutcome {
    if (result.ok) return { ok: true, output: job.codec.encode(result.value) };
    const failure = result.error;
    const message = typeof failure.details['message'] === 'string' ? failure.details['message'] : failure.message;
    return {
      ok: false,
      reason: failure.reason,
      message,
      ...(failure.error === undefined ? {} : { error: job.codec.encode(failure.error) }),
    };
  }
}

/** Stands in when the host registered no jobs: every job call is INVALID_ARGUMENT (`unregistered_job`). */
export function noJobsError(name: unknown): InvalidArgumentError {
  return new InvalidArgumentError(`no job of this name is registered with this host. job=${show(name)}`, { reason: 'unregistered_job', job: typeof name === 'string' ? name : null });
}
