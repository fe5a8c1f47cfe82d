/**
 * `JobHandle`: a submitted job, typed by its output and error payload, over the host that holds
 * the job (`JobOutcomeSource`): a `JobRunner` (waits on its queue), a cluster (polls the store),
 * the page client (the job operations routed to the leading tab). The host fetches and waits for
 * outcomes as bytes; the handle decodes them and answers the same way on every host.
 *
 * The handle is not itself awaitable (no `then`): `submit` is async, and a thenable handle would be
 * flattened by the `await` of `submit` itself, so the caller could never hold it. Await
 * `handle.result()`.
 */
import { CorruptDataError, InvalidArgumentError, NotFoundError, TaqubaError } from '../errors.js';
import { checkOptions, optionNames } from '../options.js';
import { show } from '../show.js';
import type { FinishedRun } from '../workflow/history/finished-runs.js';
import type { RunStatus } from '../workflow/registry.js';
import type { AnyJob } from './job.js';
import { JobFailedError } from './job-errors.js';
import type { JobOutcome } from './job-records.js';

/** A stored outcome: the output, or the job's failure. */
export type JobResult<O, E> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: JobFailedError<E> };

/** Options of `JobHandle.result`. */
export interface JobResultOptions {
  /** Stops waiting (rejects with CANCELLED); the job itself goes on. */
  readonly signal?: AbortSignal;
  /**
   * Stops waiting after this many ms of real time (rejects with TIMEOUT); the job itself goes on.
   * 0..2147483647; 0 answers only an outcome already stored (on the page: TIMEOUT at once, use
   * `fetchResult` there). Default: no limit.
   */
  readonly timeoutMs?: number;
}

const RESULT_OPTIONS = optionNames<JobResultOptions>({ signal: true, timeoutMs: true });
/** Longest timer the platforms keep (larger delays fire at once). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** A handle's job as its host sees it. */
export interface JobRef {
  readonly id: string;
  readonly jobName: string;
  readonly newlySubmitted: boolean;
}

/** How a host reaches its jobs' outcomes; a `JobHandle` decodes what it answers. */
export interface JobOutcomeSource {
  /**
   * The job's outcome (for a run that ended without one, the failure that stands in for it, where
   * the host tells), or null while the job is pending or running, or once retention swept it.
   */
  fetch(job: JobRef): Promise<JobOutcome | null>;
  /**
   * Waits a while for the job's outcome, as `fetch` answers it. Null when the while passed, or
   * `signal` aborted, first: the handle then asks again or rejects with CANCELLED (the host may
   * reject so itself). `round` counts the earlier waits of the same `result()` call. NOT_FOUND
   * when there is neither a run nor a stored outcome under the id.
   */
  wait(job: JobRef, signal: AbortSignal | undefined, round: number): Promise<JobOutcome | null>;
  /** The job's run status while it is active, else null. */
  status(id: string): Promise<RunStatus | null>;
  /** Cancels a pending or running job; false for an unknown or ended one. */
  cancel(id: string): Promise<boolean>;
}

/**
 * The failure that stands in for a job whose run ended without a stored job outcome, or undefined
 * when there is none to give. The job's own record is written before its step settles, so a
 * cancelled or failed run without one ended from outside the job: a cancel, or a dead-letter
 * outside the worker (reconciled as failed). A succeeded run always had one: retention swept it
 * (the memo and finished-run sweeps do not run in step), so it is answered as swept.
 */
export function endedWithoutRecord(run: FinishedRun): JobOutcome | undefined {
  if (run.status === 'cancelled') return { ok: false, reason: 'cancelled', message: run.error ?? 'the job was cancelled' };
  if (run.status === 'failed') return { ok: false, reason: 'dead_lettered', message: run.error ?? 'the job was dead-lettered' };
  return undefined;
}

/** NOT_FOUND for an id with neither a run nor a stored outcome. */
export function jobNotFound(id: string): NotFoundError {
  return new NotFoundError(`no job and no stored outcome under this id (never submitted, or swept after the retention). jobId=${id}`, { jobId: id, reason: 'job_not_found' });
}

/** The typed result of an outcome. CORRUPT_DATA when a value fails the job's codec or `parse`. */
function decodeOutcome<O, E>(job: AnyJob, id: string, outcome: JobOutcome): JobResult<O, E> {
  const decode = <T>(bytes: Uint8Array, parse: ((v: unknown) => unknown) | undefined, what: string): T => {
    try {
      const value = job.codec.decode(bytes);
      return (parse ? parse(value) : value) as T;
    } catch (e) {
      throw new CorruptDataError(`job ${what} does not decode or parse. jobId=${id} job=${job.name}`, { reason: 'undecodable_record', runId: id }, e);
    }
  };
  if (outcome.ok) return { ok: true, value: decode<O>(outcome.output, job.parse.output, 'output') };
  const error = outcome.error === undefined ? undefined : decode<E>(outcome.error, job.parse.error, 'error');
  return { ok: false, error: new JobFailedError<E>({ jobId: id, jobName: job.name, reason: outcome.reason, message: outcome.message, ...(error === undefined ? {} : { error }) }) };
}

export class JobHandle<O, E = never> implements JobRef {
  /** @internal */
  constructor(
    private readonly source: JobOutcomeSource,
    private readonly job: AnyJob,
    /** The job id (= its run id): keep it to re-attach later (`runner.handle`, `cluster.jobHandle`, `client.jobs.handle`). */
    readonly id: string,
    /**
     * False when this submission was collapsed onto an earlier one with the same idempotency key
     * (in flight or finished); always true without a key. False for a handle re-attached by id.
     */
    readonly newlySubmitted: boolean,
  ) {}

  /** The job's name. */
  get jobName(): string {
    return this.job.name;
  }

  /**
   * The stored outcome, or null while the job is pending or running (or once retention swept it).
   * Reads storage (on the page, the leader's), so it works for a handle re-attached by id after a
   * restart or a reload. A job cancelled, or dead-lettered outside the worker, has no output but a
   * finished run: a runner's and a page's handle answer `{ ok: false }` with reason `cancelled` or
   * `dead_lettered`, as `result()` does; a cluster's handle answers null. Rejects with
   * CORRUPT_DATA (an undecodable record, or a stored value that fails the job's codec,
   * `parse.output` or `parse.error`), CLOSED or STORE_*; on the page also INVALID_ARGUMENT
   * (`unregistered_job` in the worker).
   */
  async fetchResult(): Promise<JobResult<O, E> | null> {
    const outcome = await this.source.fetch(this);
    return outcome === null ? null : decodeOutcome<O, E>(this.job, this.id, outcome);
  }

  /**
   * Waits for the job and resolves with its output. Rejects with JOB_FAILED (`JobFailedError`, its
   * `error` the typed payload of `ctx.fail`) for the job's own failure and for a job that was
   * cancelled (reason `cancelled`, the same whether the call was waiting when the cancel landed or
   * came after it) or dead-lettered outside the worker (`dead_lettered`); on a cluster also
   * `no_outcome` for a job this handle submitted whose run ended without any record of how.
   * NOT_FOUND when there is neither a run nor a stored outcome under this id (never submitted, or
   * swept by retention), CANCELLED when `options.signal` aborts and TIMEOUT when
   * `options.timeoutMs` passes first (the job goes on either way; INVALID_ARGUMENT, reason
   * `invalid_spec`, for bad options), CORRUPT_DATA as `fetchResult`, and the infrastructure codes
   * (CLOSED, FENCED, STORE_*) otherwise.
   *
   * Where it waits: a runner's handle in this process (the runner executing the job must share its
   * queue); a cluster's on any member, polling the store (backing off to 1 s); a page's on
   * whichever tab leads, across leader changes.
   * @example
   * const handle = await runner.submit(fetchPage, { url });
   * try { console.log(await handle.result()); } catch (e) { if (isTaqubaError(e, 'JOB_FAILED')) ... }
   */
  async result(options: JobResultOptions = {}): Promise<O> {
    checkOptions(options, RESULT_OPTIONS, 'job result', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
    const signal = options.signal;
    const deadline = options.timeoutMs === undefined ? undefined : new JoinDeadline(this.id, options.timeoutMs, signal);
    try {
      for (let round = 0; ; round++) {
        if (signal?.aborted) throw new TaqubaError('CANCELLED', `stopped waiting for the job. jobId=${this.id}`, { details: { jobId: this.id } });
        if (deadline?.passed && round > 0) throw deadline.error();
        let outcome: JobOutcome | null;
        try {
          outcome = await this.source.wait(this, deadline?.signal ?? signal, round);
        } catch (e) {
          // A host may reject with CANCELLED itself when the signal it got aborts: the deadline's.
          throw deadline?.passed && !signal?.aborted && isCancelled(e) ? deadline.error() : e;
        }
        if (outcome === null) continue;
        const result = decodeOutcome<O, E>(this.job, this.id, outcome);
        if (result.ok) return result.value;
        throw result.error;
      }
    } finally {
      deadline?.dispose();
    }
  }

  /** The job's run status (pending, running, cancelling), or null once it ended. See `WorkflowRuntime.readStatus`. */
  status(): Promise<RunStatus | null> {
    return this.source.status(this.id);
  }

  /**
   * Cancels a pending or running job: its `ctx.signal` fires, and `result()` rejects with
   * JOB_FAILED, reason `cancelled`. False for a job that is unknown or ended. Rejects as the host's
   * cancel does (`JobRunner.cancel`, `Cluster.cancelJob`, `client.jobs.cancel`).
   */
  cancel(): Promise<boolean> {
    return this.source.cancel(this.id);
  }
}

function isCancelled(e: unknown): boolean {
  return e instanceof TaqubaError && e.code === 'CANCELLED';
}

/**
 * A `result()` wait with a time limit: a signal for the host's wait that aborts when the caller's
 * signal does or the time passes. Real time (a timer), like the reference's `join_timeout`: the
 * handle has no clock, and a caller's patience is not queue time.
 */
class JoinDeadline {
  private readonly controller = new AbortController();
  private readonly timer: unknown;
  private readonly forward: () => void;
  passed = false;

  constructor(
    private readonly jobId: string,
    private readonly timeoutMs: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_TIMEOUT_MS) {
      throw new InvalidArgumentError(`timeoutMs must be a number of ms in 0..${MAX_TIMEOUT_MS}. timeoutMs=${show(timeoutMs)}`, { reason: 'invalid_spec', option: 'timeoutMs' });
    }
    this.forward = () => this.controller.abort();
    if (outer?.aborted) this.controller.abort();
    outer?.addEventListener('abort', this.forward, { once: true });
    const expire = (): void => {
      this.passed = true;
      this.controller.abort();
    };
    // 0: already passed, so the first wait only looks; later rounds give up.
    if (timeoutMs === 0) expire();
    this.timer = timeoutMs === 0 ? undefined : setTimeout(expire, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  error(): TaqubaError {
    return new TaqubaError('TIMEOUT', `no outcome within the time limit; the job goes on. jobId=${this.jobId} timeoutMs=${this.timeoutMs}`, {
      details: { jobId: this.jobId, timeoutMs: this.timeoutMs },
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.forward);
  }
}
