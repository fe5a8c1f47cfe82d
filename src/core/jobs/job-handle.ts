/**
 * `JobHandle`: a submitted job, typed by its output and error payload. The handle is not itself
 * awaitable (no `then`): `submit` is async, and a thenable handle would be flattened by the
 * `await` of `submit` itself, so the caller could never hold it. Await `handle.result()`.
 */
import { CorruptDataError, NotFoundError, TaqubaError } from '../errors.js';
import { isFinishedRun, type FinishedRun } from '../workflow/history/finished-runs.js';
import type { Queue } from '../queue/index.js';
import type { WorkflowRuntime } from '../workflow/runtime.js';
import type { RunStatus } from '../workflow/registry.js';
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

/**
 * The answer for a job whose run ended without a stored job outcome, or undefined when there is
 * none to give. The job's own record is written before its step settles, so a cancelled or
 * failed run without one ended from outside the job: a cancel, or a dead-letter outside the
 * worker (reconciled as failed). A succeeded run always had one: retention swept it (the memo
 * and finished-run sweeps do not run in step), so it is answered as swept.
 */
export function endedWithoutRecord<E>(job: AnyJob, id: string, run: FinishedRun): JobFailedError<E> | undefined {
  if (run.status === 'cancelled') return new JobFailedError<E>({ jobId: id, jobName: job.name, reason: 'cancelled', message: run.error ?? 'the job was cancelled' });
  if (run.status === 'failed') return new JobFailedError<E>({ jobId: id, jobName: job.name, reason: 'dead_lettered', message: run.error ?? 'the job was dead-lettered' });
  return undefined;
}

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
  ) {}

  /** The job's name. */
  get jobName(): string {
    return this.job.name;
  }

  /**
   * The stored outcome, or null while the job is pending or running (or once retention swept
   * it). A job cancelled, or dead-lettered outside the worker, has no output but a finished run:
   * it answers `{ ok: false }` with reason `cancelled` or `dead_lettered`, as `result()` does.
   * Reads storage, so it works for a handle from `runner.handle(id)` after a restart. Rejects
   * with CORRUPT_DATA (undecodable record, or a stored value that fails
   * `parse.output`/`parse.error`), CLOSED or store errors.
   */
  async fetchResult(): Promise<JobResult<O, E> | null> {
    const stored = await this.readStoredResult();
    if (stored) return stored;
    const run = await this.runtime.getRun(this.id, { includeFinished: true });
    if (!isFinishedRun(run)) return null;
    // The run may have ended (with its record) between the two reads.
    const late = await this.readStoredResult();
    if (late) return late;
    const error = endedWithoutRecord<E>(this.job, this.id, run);
    return error ? { ok: false, error } : null;
  }

  private async readStoredResult(): Promise<JobResult<O, E> | null> {
    const record = await readOutcome(this.runtime.memoStore.newRunMemo(this.id));
    return record === null ? null : jobResultOf<O, E>(this.job, this.id, record);
  }

  /**
   * Waits for the job and resolves with its output. Rejects with JOB_FAILED (`JobFailedError`) for
   * the job's own failure and for a job that was cancelled (reason `cancelled`, the same whether
   * the call was waiting when the cancel landed or came after it), NOT_FOUND when there is
   * neither a run nor a stored outcome under this id (never submitted, or swept by retention),
   * CANCELLED when `options.signal` aborts, and the infrastructure codes (CLOSED, FENCED,
   * CORRUPT_DATA, STORE_*) otherwise. Waiting happens in this process: the runner executing the
   * job must share this handle's queue.
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
      const stored = await this.readStoredResult();
      if (stored) return unwrap(stored);
      // Active first: an id submitted again after it ended is awaited anew.
      const run = await this.runtime.getRun(this.id, { includeFinished: true });
      if (run === null || isFinishedRun(run)) {
        // No active run: its outcome (if any) was written before the run ended.
        const late = await this.readStoredResult();
        if (late) return unwrap(late);
        const failure = run && endedWithoutRecord<E>(this.job, this.id, run);
        if (failure) throw failure;
        throw new NotFoundError(`no job and no stored outcome under this id (never submitted, or swept after the runner's retention). jobId=${this.id}`, { jobId: this.id, reason: 'job_not_found' });
      }
      if (run.state === 'dead') {
        // Dead-lettered outside the worker (reconciliation fails the run later, with this error).
        throw new JobFailedError<E>({ jobId: this.id, jobName: this.job.name, reason: 'dead_lettered', message: run.lastError ?? 'the job was dead-lettered' });
      }
      // Ends as timed out when `signal` aborts later; the loop head then says so. An abort during
      // the reads above would not wake it: checked first.
      if (signal?.aborted) continue;
      await this.queue.waitForCompletion(run.jobId, WAIT_CHUNK_MS, signal);
    }
  }

  /** The job's run status (pending, running, cancelling), or null once it ended. See `WorkflowRuntime.readStatus`. */
  status(): Promise<RunStatus | null> {
    return this.runtime.readStatus(this.id);
  }
}
