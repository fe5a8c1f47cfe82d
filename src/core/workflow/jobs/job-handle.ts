/**
 * `JobHandle`: a submitted job, typed by its output and error payload. The handle is not itself
 * awaitable (no `then`): `submit` is async, and a thenable handle would be flattened by the
 * `await` of `submit` itself, so the caller could never hold it. Await `handle.result()`.
 */
import { CorruptDataError, NotFoundError, TaqubaError } from '../../errors.js';
import type { Queue } from '../../queue/index.js';
import type { WorkflowRuntime } from '../runtime.js';
import type { RunStatus } from '../registry.js';
import type { AnyJob } from './job.js';
import { JobFailedError } from './job-errors.js';
import { readOutcome, type OutcomeRecord } from './job-records.js';

/** A stored outcome: the output, or the job's failure. */
export type JobResult<O, E> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: JobFailedError<E> };

/** Options of `JobHandle.result`. */
export interface JobResultOptions {
  /** Stops waiting (rejects with CANCELLED); the job itself goes on. */
  readonly signal?: AbortSignal;
}

/**
 * @internal The typed result of a stored outcome record (also for the cluster's job handles).
 * Throws CORRUPT_DATA when a stored value fails the job's codec or `parse`.
 */
export function jobResultOf<O, E>(job: AnyJob, id: string, record: OutcomeRecord): JobResult<O, E> {
  const decode = <T>(bytes: Uint8Array, parse: ((v: unknown) => unknown) | undefined, what: string): T => {
    try {
      const value = job.codec.decode(bytes);
      return (parse ? parse(value) : value) as T;
    } catch (e) {
      throw new CorruptDataError(`stored job ${what} does not decode or parse. jobId=${id} job=${job.name}`, { reason: 'undecodable_record', runId: id }, e);
    }
  };
  if (record.ok) return { ok: true, value: decode<O>(record.output, job.parse.output, 'output') };
  const error = record.error === undefined ? undefined : decode<E>(record.error, job.parse.error, 'error');
  return { ok: false, error: new JobFailedError<E>({ jobId: id, jobName: job.name, reason: record.reason, message: record.message, ...(error === undefined ? {} : { error }) }) };
}

/** How long one wait on the queue job lasts before the handle looks again. */
const WAIT_CHUNK_MS = 3_600_000;

export class JobHandle<O, E = never> {
  /** @internal */
  constructor(
    private readonly runtime: WorkflowRuntime,
    private readonly queue: Queue,
    private readonly job: AnyJob,
    /** The job id (= its run id). */
    readonly id: string,
    /**
     * False when this submission was collapsed onto an earlier one with the same idempotency key
     * (in flight or finished); always true without a key. False for `runner.handle(id)`.
     */
    readonly newlySubmitted: boolean,
    private queueJobId: string | undefined,
  ) {}

  /** The job's name. */
  get jobName(): string {
    return this.job.name;
  }

  /**
   * The stored outcome, or null while the job is pending or running (or when it left none, or
   * retention swept it). Reads storage, so it works for a handle from `runner.handle(id)` after a
   * restart. Rejects with CORRUPT_DATA (undecodable record, or a stored value that fails
   * `parse.output`/`parse.error`), CLOSED or store errors.
   */
  async fetchResult(): Promise<JobResult<O, E> | null> {
    const record = await readOutcome(this.runtime.memoStore.newRunMemo(this.id));
    return record === null ? null : jobResultOf<O, E>(this.job, this.id, record);
  }

  /**
   * Waits for the job and resolves with its output. Rejects with JOB_FAILED (`JobFailedError`) for
   * the job's own failure, NOT_FOUND when there is neither a run nor a stored outcome under this
   * id (never submitted, or swept by retention), CANCELLED when `options.signal` aborts, and the
   * infrastructure codes (CLOSED, FENCED, CORRUPT_DATA, STORE_*) otherwise. Waiting happens in
   * this process: the runner executing the job must share this handle's queue.
   * @example
   * const handle = await runner.submit(fetchPage, { url });
   * try { console.log(await handle.result()); } catch (e) { if (isTaqubaError(e, 'JOB_FAILED')) ... }
   */
  async result(options: JobResultOptions = {}): Promise<O> {
    const signal = options.signal;
    const unwrap = (r: JobResult<O, E>): O => {
      if (r.ok) return r.value;
      throw r.error;
    };
    for (;;) {
      if (signal?.aborted) throw new TaqubaError('CANCELLED', `stopped waiting for the job. jobId=${this.id}`, { details: { jobId: this.id } });
      const stored = await this.fetchResult();
      if (stored) return unwrap(stored);
      let jobId = this.queueJobId;
      if (jobId === undefined) {
        jobId = (await this.runtime.getRun(this.id))?.jobId;
        if (jobId === undefined) {
          // No active run: its outcome (if any) was written before the run terminated.
          const late = await this.fetchResult();
          if (late) return unwrap(late);
          throw new NotFoundError(`no job and no stored outcome under this id. jobId=${this.id}`, { jobId: this.id, reason: 'job_not_found' });
        }
        this.queueJobId = jobId;
      }
      const waited = await this.queue.waitForCompletion(jobId, WAIT_CHUNK_MS, signal);
      if (waited.type === 'timed_out') continue;
      const after = await this.fetchResult();
      if (after) return unwrap(after);
      if (waited.type === 'not_found') {
        // The queue job is gone (done jobs are not kept): look the run up once more.
        this.queueJobId = undefined;
        if ((await this.runtime.getRun(this.id)) === null) throw new NotFoundError(`no job and no stored outcome under this id. jobId=${this.id}`, { jobId: this.id, reason: 'job_not_found' });
        continue;
      }
      const record = waited.job;
      if (record?.status === 'dead') {
        throw new JobFailedError<E>({ jobId: this.id, jobName: this.job.name, reason: 'dead_lettered', message: record.lastError ?? 'the job was dead-lettered' });
      }
      throw new JobFailedError<E>({ jobId: this.id, jobName: this.job.name, reason: 'no_outcome', message: 'the job ended without recording an outcome' });
    }
  }

  /** The job's run status (pending, running, cancelling), or null once it ended. See `WorkflowRuntime.readStatus`. */
  status(): Promise<RunStatus | null> {
    return this.runtime.readStatus(this.id);
  }
}
