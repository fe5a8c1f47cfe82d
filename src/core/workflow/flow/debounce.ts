/**
 * Debounce per key: a burst of submissions with one key becomes one run, with the last
 * submission's input and headers, started `periodMs` after the last submission.
 *
 * State (keys.ts `debounce/{k}`): the open window's run and the scheduled step-0 job carrying its
 * input. Under the key's lock (flow-locks.ts):
 * - no window, or its run has ended: the submission opens one, a new run under its own id (or a
 *   fresh one) whose step 0 is scheduled `periodMs` from now, the window record in the same
 *   transaction;
 * - an open window whose step 0 still waits: the submission joins it. One transaction removes
 *   that job (only while it is still waiting: `Queue.removeWaitingWith`), enqueues a new step 0
 *   of the same run with this input, scheduled `periodMs` from now, and rewrites the run record
 *   (the new input's hash), the step pointer and the window. `submit` answers with the window's
 *   run id: that run carries this input, unless a later submission joins too;
 * - an open window whose step 0 was claimed: the run has started with the input it had, so the
 *   submission opens a new window.
 * The run's ending deletes the window record if it still names the run (every step job of a
 * debounced run carries the key, flow-locks.ts), so idle keys keep nothing.
 */
import { toHex } from '../../bytes.js';
import type { RuntimeContext } from '../context.js';
import { flowDebounceKey, runRecordKey, stepPointerKey } from '../keys.js';
import { decodeRunRecord, encodeRunRecord, encodeStepPointer } from '../records.js';
import type { EffectsBuilder } from '../runs/termination.js';
import type { SubmitOutcome } from '../runs/submit.js';
import type { Debounce } from './flow-options.js';
import { HEADER_DEBOUNCE_KEY, withFlowLock } from './flow-locks.js';
import { decodeDebounceWindow, encodeDebounceWindow, type DebounceWindow } from './flow-records.js';
import { enqueueNewRun, stepZeroRequest, type NewRun } from './new-run.js';

/** Submits `run` under debounce `d`: it opens the key's window, or joins the open one. */
export function submitDebounced(ctx: RuntimeContext, run: NewRun, d: Debounce): Promise<SubmitOutcome> {
  const windowKey = flowDebounceKey(ctx.queueName, d.key);
  return withFlowLock(ctx.queue, ctx.queueName, 'debounce', d.key, async () => {
    const startAt = ctx.clock.now() + d.periodMs;
    const reservedHeaders = { [HEADER_DEBOUNCE_KEY]: d.key };
    const bytes = await ctx.queue.kvGet(windowKey);
    if (bytes !== undefined) {
      const joined = await joinWindow(ctx, run, decodeDebounceWindow(bytes), windowKey, startAt, reservedHeaders);
      if (joined !== undefined) return joined;
    }
    return enqueueNewRun(ctx, run, { runAt: startAt, reservedHeaders, writes: [[windowKey, encodeDebounceWindow({ runId: run.runId, jobId: run.jobId })]] });
  });
}

/** The join of `window` by `run`; undefined when the window's run has started or ended. */
async function joinWindow(
  ctx: RuntimeContext,
  run: NewRun,
  window: DebounceWindow,
  windowKey: Uint8Array,
  startAt: number,
  reservedHeaders: Record<string, string>,
): Promise<SubmitOutcome | undefined> {
  const { runId } = window;
  const record = await ctx.queue.kvGet(runRecordKey(runId));
  if (record === undefined) return undefined;
  const jobId = ctx.queue.nextJobId();
  const outcome: SubmitOutcome = { runId, newlySubmitted: true, jobId };
  // Removed only while it waits: once claimed, the run has started with the input it had.
  const joined = await ctx.queue.removeWaitingWith(window.jobId, {
    enqueues: [stepZeroRequest(ctx.queueName, runId, jobId, run.input, { ...run.options, runAt: startAt }, run.headers, reservedHeaders)],
    kvWrites: [
      ...run.kvWrites,
      [runRecordKey(runId), encodeRunRecord({ runId, submittedAtMs: decodeRunRecord(record).submittedAtMs, inputHash: run.inputHash })],
      [stepPointerKey(runId), encodeStepPointer({ step: 0, jobId })],
      [windowKey, encodeDebounceWindow({ runId, jobId })],
      ...run.answer(outcome),
    ],
  });
  if (!joined) return undefined;
  // The registry follows the run to its new step 0 (a cancel or a duplicate check reads it).
  const entry = ctx.registry.get(runId);
  if (entry !== undefined && entry.currentJobId === window.jobId) {
    entry.currentJobId = jobId;
    entry.inputHash = toHex(run.inputHash);
    entry.headers = run.headers;
  }
  return outcome;
}

/**
 * Adds to `effects` the deletion of `key`'s window record when it names `runId` (the ending
 * run). Call under the key's lock, committing before releasing it.
 */
export async function addWindowClose(ctx: RuntimeContext, key: string, runId: string, effects: EffectsBuilder): Promise<void> {
  const windowKey = flowDebounceKey(ctx.queueName, key);
  const bytes = await ctx.queue.kvGet(windowKey);
  if (bytes !== undefined && decodeDebounceWindow(bytes).runId === runId) effects.kvDeletes.push(windowKey);
}
