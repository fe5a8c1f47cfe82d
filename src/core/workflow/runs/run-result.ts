/**
 * `WorkflowRuntime.result`: the outcome of a run, awaited while it is active.
 *
 * Loop:
 * 1. Read the run's durable state (durable-run.ts).
 * 2. Active: wait for its current step job to leave the queue (the queue's in-process completion
 *    wait, which misses no transition), then read again: the run advanced to a new job, or ended.
 * 3. Dead step (dead-lettered outside a worker): the run fails at the next reconciliation pass;
 *    read again after a poll interval. So too for a run waiting for a concurrency slot (no job yet).
 * 4. Not active: the finished-run record answers; a newer moved-run record (a hand-off) ⇒ NOT_FOUND
 *    (reason `run_moved`); none ⇒ NOT_FOUND.
 * Active comes first, so an id submitted again is awaited anew rather than answered with the
 * record of its earlier run.
 */
import { InvalidArgumentError, NotFoundError, TaqubaError } from '../../errors.js';
import { numberRule } from '../../options.js';
import { show } from '../../show.js';
import type { RuntimeContext } from '../context.js';
import { readDurableRun } from './durable-run.js';
import { finishedRunRetention, type FinishedRun } from '../history/finished-runs.js';
import { movedAway, readRunEnding } from '../archive/moved-runs.js';
import { validateRunId } from '../validation.js';

/** Options of `WorkflowRuntime.result`. */
export interface RunResultOptions {
  /** Give up after this many ms (runtime clock) with TIMEOUT; the run goes on. Default: wait as long as it takes. */
  readonly timeoutMs?: number;
  /** Stop waiting (CANCELLED) when it aborts; the run goes on. */
  readonly signal?: AbortSignal;
}

const OPTION_NAMES: ReadonlySet<string> = new Set(['timeoutMs', 'signal']);
/** One completion wait; the loop then reads the run again (as the job handle does). */
const WAIT_CHUNK_MS = 3_600_000;

function checkOptions(options: unknown): RunResultOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError(`result options must be an object. options=${show(options)}`, { reason: 'invalid_options' });
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) throw new InvalidArgumentError(`unknown result option. option=${JSON.stringify(key)} known=timeoutMs,signal`, { reason: 'invalid_options', option: key });
  }
  const { timeoutMs, signal } = options as RunResultOptions;
  if (timeoutMs !== undefined) {
    const rule = numberRule(timeoutMs);
    if (rule !== undefined) throw new InvalidArgumentError(`timeoutMs ${rule} (a duration in milliseconds). timeoutMs=${show(timeoutMs)}`, { reason: 'invalid_options', option: 'timeoutMs' });
  }
  if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function')) {
    throw new InvalidArgumentError(`signal must be an AbortSignal. signal=${show(signal)}`, { reason: 'invalid_options', option: 'signal' });
  }
  return options as RunResultOptions;
}

/**
 * The finished run `runId` of the runtime of `ctx`, once it has ended. See `WorkflowRuntime.result`
 * for the contract. `pollIntervalMs`: how often a run whose step is dead (awaiting reconciliation)
 * is read again.
 */
export async function awaitRunResult(ctx: RuntimeContext, runId: string, options: RunResultOptions | undefined, pollIntervalMs: number): Promise<FinishedRun> {
  validateRunId(runId);
  const { timeoutMs, signal } = checkOptions(options);
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (timeoutMs !== undefined) ctx.clock.sleep(timeoutMs, stop.signal).then(() => stop.abort(), () => undefined);
  const stopped = (): TaqubaError =>
    signal?.aborted
      ? new TaqubaError('CANCELLED', `stopped waiting for the run's result. runId=${runId}`, { details: { runId } })
      : new TaqubaError('TIMEOUT', `the run did not end within the timeout. runId=${runId} timeoutMs=${timeoutMs}`, { details: { runId, timeoutMs: timeoutMs ?? null } });
  try {
    if (signal?.aborted) throw stopped();
    for (;;) {
      if (stop.signal.aborted) throw stopped();
      const run = await readDurableRun(ctx.queue, runId, ctx.queueName);
      if (run.type === 'moved') continue;
      if (run.type === 'active') {
        // The wait ends early (as timed out) when `stop` aborts; the loop head then says why. It
        // only hears an abort that comes after it started: one during the read above is checked here.
        if (stop.signal.aborted) throw stopped();
        await ctx.queue.waitForCompletion(run.job.id, WAIT_CHUNK_MS, stop.signal);
        continue;
      }
      // A run waiting for a concurrency slot has no job to wait on yet: read again after a while.
      if (run.type === 'dead' || run.type === 'queued') {
        await ctx.clock.sleep(pollIntervalMs, stop.signal).catch(() => undefined);
        continue;
      }
      const ending = await readRunEnding(ctx.queue, ctx.queueName, runId);
      if (ending?.type === 'moved') throw movedAway(ending.moved);
      if (ending) return ending.run;
      throw notKept(runId, finishedRunRetention(ctx));
    }
  } finally {
    stop.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

function notKept(runId: string, retentionMs: number): NotFoundError {
  const why =
    retentionMs > 0
      ? `never submitted to this runtime, or it ended more than outcomeRetentionMs=${retentionMs} ago and its record was swept`
      : 'never submitted to this runtime, or it ended (this runtime keeps no finished runs: outcomeRetentionMs=0)';
  return new NotFoundError(`no active run and no finished-run record under this id (${why}). runId=${runId}`, { runId, reason: 'run_not_found' });
}
