/**
 * One delivery of a step job, from claim to settlement.
 *
 * Delivery protocol:
 * 1. A notification job goes to the terminal hook instead (notification.ts).
 * 2. Parse the reserved headers; a job that is not a valid step is dead-lettered as is (no run to
 *    terminate; reconciliation skips it too).
 * 3. Registry: the run is running this step here (creates the entry after a restart).
 * 4. Resolve the step's signal (signals.ts); a failure retries the step.
 * 5. A cancel requested before this delivery (claim signal pre-fired, or the registry flag from
 *    a cancel that landed while the previous step settled): settle cancelled without running.
 * 6. Replay on: a stored outcome for (run, step, payload) is used instead of the runner.
 * 7. Otherwise run the runner; seal the effects handle when it returns.
 * 8. Replay on, outcome fresh and not cancelled: store it before settling.
 * 9. Settle, by precedence: the runner's own `cancel` (reason and effects kept); an external
 *    cancel (outcome or error discarded, no retry, cancelled with error null); `continue`
 *    (advance); `succeed` / `fail` (terminate, acked); a permanent error (dead-letter, failed); a
 *    transient error (retry; on the last attempt the dead-lettering nack fails the run).
 *    Caller effects and signal deletes ride only the acknowledging settlements.
 * The registry changes before each settlement commits (an advance moves it to the next step, a
 * termination removes it), so a cancel racing the commit targets the right job or finds none.
 *
 * Logging (after the settlement committed, so a line reports what happened): a retry at warn
 * (run id, step, attempt, error, next delay), a dead-lettered step at error (run id, step,
 * reason), both with the stack when the runner threw something other than a `StepError`; run
 * outcomes at info; step outcomes at debug.
 */
import { utf8 } from '../../bytes.js';
import { errorFields } from '../../logger.js';
import type { Claim, EnqueueOptions } from '../../queue/index.js';
import { retryBackoffMs } from '../../queue/transitions/retry-backoff.js';
import type { HandlerSlot } from '../../queue/workers/handler-slots.js';
import type { RuntimeContext } from '../context.js';
import { HEADER_SIGNAL_DELIVERED, HEADER_SIGNAL_WAIT, HEADER_TERMINAL } from '../constants.js';
import { DeliveredStep } from './delivered-step.js';
import { mergeKv, NO_KV_EFFECTS, type StagedKvEffects } from './effects-handle.js';
import { signalBufferKey, signalDeliveredKey, signalWaitKey, stepPointerKey } from '../keys.js';
import { processNotification } from '../runs/notification.js';
import { validateOutcome, type StepOutcome } from './outcome.js';
import { encodeStepPointer } from '../records.js';
import { lookupReplay, replayedOutcome, writeReplay, type ReplayRecord } from './replay.js';
import { NO_SIGNAL, planRegistration, resolveSignal, waitsForSignal, type ResolvedSignal } from '../runs/signals.js';
import { StepError } from './step-error.js';
import { parseStepJob, stepJobHeaders, userHeaders } from './step-headers.js';
import { commitEnding, terminationEffects, type EffectsBuilder } from '../runs/termination.js';
import { endingFactsRead } from '../history/finished-runs.js';
import { flowHeadersOf, type FlowHeaders } from '../flow/flow-locks.js';
import type { RunOutcome, TerminalStatus } from '../runs/terminal-hook.js';

/** The parsed delivery every settlement helper needs. */
interface Delivery {
  readonly ctx: RuntimeContext;
  readonly claim: Claim;
  readonly runId: string;
  readonly step: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The run's flow headers (flow/flow-locks.ts): carried to the next step, released at the ending. */
  readonly flow: FlowHeaders | undefined;
}

/**
 * Processes one claimed job of the runtime's queue. `handled` is called once the runner (or hook)
 * returned, before the settlement commits. A next step the advance took in its ack (a run whose
 * next step is due at once; see `advance`) is passed to `resume` once that ack is durable, for
 * the worker loop to run in its next free slot (or processed here after this one without it).
 * `slot`, the loop's slot of this delivery, is handed to the runner with the step.
 * Never rejects: settlement failures are logged.
 */
export async function processDelivery(ctx: RuntimeContext, claim: Claim, handled?: () => void, stopping?: AbortSignal, resume?: (taken: Claim) => void, slot?: HandlerSlot): Promise<void> {
  let next: Claim | undefined = claim;
  while (next !== undefined) {
    const current: Claim = next;
    next = undefined;
    try {
      if (current.job.headers[HEADER_TERMINAL] !== undefined) await processNotification(ctx, current, handled);
      else next = await processStep(ctx, current, handled, stopping, slot);
    } catch (e) {
      // CLAIM_LOST (the lease expired and the job was requeued), CLOSED, store errors: the job stays
      // claimed or goes back to the queue; the next delivery redoes this one.
      ctx.warn(`settling a workflow job failed. id=${current.id}`, e);
    }
    if (next !== undefined && resume !== undefined) {
      resume(next);
      return;
    }
  }
}

/** One step delivery; returns the next step's claim when its advance took it. */
async function processStep(ctx: RuntimeContext, claim: Claim, handled: (() => void) | undefined, stopping: AbortSignal | undefined, slot: HandlerSlot | undefined): Promise<Claim | undefined> {
  const job = claim.job;
  const parsed = parseStepJob(job);
  if ('invalid' in parsed) {
    await ctx.queue.deadLetter(claim, parsed.invalid);
    ctx.log.error('dead-lettered a job that is not a valid step', { jobId: job.id, reason: parsed.invalid });
    return;
  }
  const d: Delivery = { ctx, claim, runId: parsed.runId, step: parsed.step, headers: userHeaders(job.headers), flow: flowHeadersOf(job.headers) };
  const entry = ctx.registry.running(d.runId, d.step, job.id, d.headers, claim);
  // A cancel that reached the job before this delivery registered (a persisted flag from an
  // earlier process, or a cancel found through the durable records in the claim's window):
  // `status` reports `cancelling` like for any other cancelled running step.
  if (claim.cancelRequested) entry.cancelRequested = true;

  let signal: ResolvedSignal = NO_SIGNAL;
  if (waitsForSignal(job)) {
    try {
      signal = await resolveSignal(ctx, job, d.runId, d.step);
    } catch (e) {
      await retryOrFail(d, `resolving the step's signal failed: ${StepError.from(e).message}`, NO_KV_EFFECTS, e);
      return;
    }
  }

  if (claim.cancelRequested || ctx.registry.isCancelRequested(d.runId)) {
    await terminate(d, 'cancelled', null, null, signal.deletes, NO_KV_EFFECTS);
    return;
  }

  let replayed: ReplayRecord | undefined;
  if (ctx.stepOutputReplay) {
    try {
      replayed = await lookupReplay(ctx, d.runId, d.step, job.payload);
    } catch (e) {
      await retryOrFail(d, `reading the step-output record failed: ${StepError.from(e).message}`, NO_KV_EFFECTS, e);
      return;
    }
  }

  let outcome: StepOutcome | undefined;
  let error: StepError | undefined;
  let thrown: unknown;
  let staged: StagedKvEffects = NO_KV_EFFECTS;
  let failureWrites: StagedKvEffects = NO_KV_EFFECTS;
  if (replayed) {
    outcome = replayedOutcome(replayed, ctx.clock.now());
    staged = replayed.effects;
  } else {
    // The claim's own signal (created only if the runner reads it): it fires when a cancel of
    // this job is requested (a step cannot abort a signal it was handed, so no child signal is
    // needed).
    const step = new DeliveredStep(ctx, d.runId, d.step, job.payload, d.headers, job.id, job.attempts, job.maxAttempts, job.interruptions, signal.payload, claim, claim.lease, stopping, slot);
    try {
      outcome = validateOutcome(await ctx.runner.runStep(step));
    } catch (e) {
      error = StepError.from(e);
      thrown = e;
    }
    const sealed = step.seal();
    handled?.();
    staged = sealed.staged;
    failureWrites = sealed.onFailure;
  }

  const externalCancel = claim.cancelRequested || ctx.registry.isCancelRequested(d.runId);
  if (outcome?.type === 'cancel') {
    if (!(await writeReplayOrFail(d, replayed, outcome, staged, externalCancel))) return;
    await terminate(d, 'cancelled', null, outcome.reason, signal.deletes, staged);
    return;
  }
  if (externalCancel) {
    await terminate(d, 'cancelled', null, null, signal.deletes, NO_KV_EFFECTS);
    return;
  }
  if (outcome) {
    ctx.log.debug('step finished', { runId: d.runId, step: d.step, attempt: job.attempts, outcome: outcome.type, replayed: replayed !== undefined });
    if (ctx.stepOutputReplay && !(await writeReplayOrFail(d, replayed, outcome, staged, false))) return;
    switch (outcome.type) {
      case 'continue':
        return advance(d, outcome, signal.deletes, staged, stopping?.aborted !== true);
      case 'succeed':
        await terminate(d, 'succeeded', outcome.result, null, signal.deletes, staged);
        return;
      case 'fail':
        await terminate(d, 'failed', null, outcome.reason, signal.deletes, staged);
        return;
    }
  }
  const err = error ?? StepError.permanent('step produced neither an outcome nor an error');
  if (err.isPermanent) await failRun(d, err.message, 'dead_letter', failureWrites, thrown);
  else await retryOrFail(d, err.message, failureWrites, thrown);
}

/** Log fields of a failure: its stack too when the thrown value is not a `StepError` (an unexpected throw). */
function failureFields(message: string, cause: unknown): { error: string; stack?: string } {
  const fields = cause === undefined ? { error: message } : errorFields(cause, !(cause instanceof StepError));
  return { ...fields, error: message };
}

/**
 * Step 8. Returns false when the record could not be stored and the step was settled as a
 * failure instead (permanent store error: the run fails; transient: the step retries).
 */
async function writeReplayOrFail(d: Delivery, replayed: ReplayRecord | undefined, outcome: StepOutcome, staged: StagedKvEffects, externalCancel: boolean): Promise<boolean> {
  if (!d.ctx.stepOutputReplay || replayed || externalCancel) return true;
  try {
    await writeReplay(d.ctx, d.runId, d.step, d.claim.job.payload, outcome, staged);
    return true;
  } catch (e) {
    const err = StepError.from(e);
    const message = `storing the step-output record failed: ${err.message}`;
    if (err.isPermanent) await failRun(d, message, 'dead_letter', NO_KV_EFFECTS, e);
    else await retryOrFail(d, message, NO_KV_EFFECTS, e);
    return false;
  }
}

function outcomeOf(d: Delivery, status: TerminalStatus, result: Uint8Array | null, error: string | null): RunOutcome {
  return { runId: d.runId, status, result, error, headers: d.headers, finalStep: d.step };
}

/** Commits the ending of `d`'s run through `settle` (the settlement carrying `effects`), its flow keys released with it. */
async function endRun(d: Delivery, effects: EffectsBuilder, settle: () => Promise<unknown>): Promise<void> {
  await commitEnding(
    d.ctx,
    d.runId,
    effects,
    async () => {
      d.ctx.registry.terminated(d.runId, d.claim);
      await settle();
    },
    d.flow,
  );
}

/** Ends the run with an acknowledging settlement (succeed, fail, cancel). */
async function terminate(d: Delivery, status: TerminalStatus, result: Uint8Array | null, error: string | null, signalDeletes: Uint8Array[], staged: StagedKvEffects): Promise<void> {
  const job = d.claim.job;
  await endingFactsRead(d.ctx, d.runId);
  const effects = terminationEffects(d.ctx, outcomeOf(d, status, result, error), { priority: job.priority, maxAttempts: job.maxAttempts }, { jobId: job.id });
  mergeKv(effects, staged);
  effects.kvDeletes.push(...signalDeletes);
  await endRun(d, effects, () => d.ctx.queue.ackWith(d.claim, effects));
  d.ctx.log.info(`run ${status}`, { runId: d.runId, step: d.step, ...(error === null ? {} : { reason: error }) });
}

/**
 * Ends the run as failed through a dead-letter (or the nack that dead-letters on the last
 * attempt). `cause` is what was thrown, for the log line.
 */
async function failRun(d: Delivery, message: string, via: 'dead_letter' | 'last_nack', failureWrites: StagedKvEffects = NO_KV_EFFECTS, cause?: unknown): Promise<void> {
  const job = d.claim.job;
  await endingFactsRead(d.ctx, d.runId);
  const effects = terminationEffects(d.ctx, outcomeOf(d, 'failed', null, message), { priority: job.priority, maxAttempts: job.maxAttempts }, { jobId: job.id });
  mergeKv(effects, failureWrites);
  await endRun(d, effects, () => (via === 'dead_letter' ? d.ctx.queue.deadLetterWith(d.claim, message, effects) : d.ctx.queue.nackWith(d.claim, message, effects)));
  const { error, ...rest } = failureFields(message, cause);
  d.ctx.log.error(via === 'dead_letter' ? 'step dead-lettered; run failed' : 'step out of attempts, dead-lettered; run failed', {
    runId: d.runId,
    step: d.step,
    attempt: job.attempts,
    maxAttempts: job.maxAttempts,
    reason: error,
    jobId: job.id,
    ...rest,
  });
}

/**
 * A transient failure: retry with the queue's backoff, or fail the run on the last attempt.
 * `cause` is what was thrown, for the log line.
 */
async function retryOrFail(d: Delivery, message: string, failureWrites: StagedKvEffects = NO_KV_EFFECTS, cause?: unknown): Promise<void> {
  const { ctx, claim } = d;
  const job = claim.job;
  if (job.attempts >= job.maxAttempts) {
    await failRun(d, message, 'last_nack', failureWrites, cause);
    return;
  }
  // Before the nack commits, as for an advance: a reader that sees the backoff finds the entry pending.
  ctx.registry.backingOff(d.runId, claim);
  await ctx.queue.nack(claim, message);
  const nextDelayMs = retryBackoffMs(ctx.queue.queueConfig(ctx.queueName), job.attempts);
  ctx.log.warn('step failed; retrying', { runId: d.runId, step: d.step, attempt: job.attempts, maxAttempts: job.maxAttempts, ...failureFields(message, cause), nextDelayMs, jobId: job.id });
}

/**
 * The settlement effects of an advance to step `next` (job `nextJobId`, payload `payload`),
 * before signal extras. `next.enqueue` false: the step's job continues in place as the next one
 * (`advance`), so it is not enqueued. The next step's job has no dedup key (unlike step 0's,
 * which makes submission idempotent): the advance commits in the ack of this step's claim, which
 * fails unless this delivery still holds the claimed record, so each step job enqueues its
 * successor at most once. A dedup key would cost a read, a write and a delete per step for nothing.
 */
function advanceEffects(
  d: Delivery,
  next: { readonly step: number; readonly jobId: string; readonly payload: Uint8Array; readonly headers: Record<string, string>; readonly enqueue: boolean },
  runAt: number | undefined,
  signalDeletes: Uint8Array[],
  staged: StagedKvEffects,
): EffectsBuilder {
  const job = d.claim.job;
  // The pointer names the run's job. A job continued in place keeps its id and carries its step
  // in its headers, so the pointer stays as it is (readers take the step from the job).
  const effects: EffectsBuilder = {
    enqueues: [],
    kvWrites: next.enqueue ? [[stepPointerKey(d.runId), encodeStepPointer({ step: next.step, jobId: next.jobId })]] : [],
    kvDeletes: [],
  };
  if (next.enqueue) {
    const options: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = { idOverride: next.jobId, headers: next.headers, priority: job.priority, maxAttempts: job.maxAttempts };
    if (runAt !== undefined) options.runAt = runAt;
    effects.enqueues.push({ queue: d.ctx.queueName, payload: next.payload, options });
  }
  mergeKv(effects, staged);
  for (const k of signalDeletes) effects.kvDeletes.push(k);
  return effects;
}

/** The headers of step `step`'s job: the run's user and flow headers, and `extra`. */
function nextStepHeaders(d: Delivery, step: number, extra: Record<string, string> | undefined): Record<string, string> {
  return stepJobHeaders(d.headers, d.runId, step, d.flow === undefined ? extra : { ...d.flow, ...extra });
}

/**
 * `continue`: ack this step and start the next one in one transaction. A next step due at once
 * continues in place when the queue allows it (`take`, unless this runtime is stopping; the queue
 * decides: nothing of higher priority waits, ...): this step's job becomes the next step's, still
 * claimed here, and is returned once the ack is durable, so a run goes on without its next step
 * being enqueued or claimed, and never before what its step stored is durable. Otherwise the next
 * step is a new job, enqueued.
 */
async function advance(d: Delivery, outcome: Extract<StepOutcome, { type: 'continue' }>, signalDeletes: Uint8Array[], staged: StagedKvEffects, take: boolean): Promise<Claim | undefined> {
  const { ctx, claim, runId } = d;
  const step = d.step + 1;
  const payload = outcome.payload;
  const when = outcome.when;
  if (when.type !== 'onSignal') {
    const runAt = when.type === 'after' && when.delayMs > 0 ? ctx.clock.now() + when.delayMs : undefined;
    const inPlace = take && runAt === undefined && ctx.queue.mayContinueInPlace(claim, payload);
    const next = { step, jobId: inPlace ? claim.id : ctx.queue.nextJobId(), payload, headers: nextStepHeaders(d, step, undefined), enqueue: !inPlace };
    const effects = advanceEffects(d, next, runAt, signalDeletes, staged);
    ctx.registry.advanced(runId, step, next.jobId, claim);
    if (inPlace) return ctx.queue.ackContinuing(claim, next, effects);
    await ctx.queue.ackWith(claim, effects);
    return undefined;
  }
  const key = when.correlationKey;
  // Held until the settlement committed: a signal for this key waits and then sees the index.
  await ctx.signalLocks.run(key, async () => {
    const plan = await planRegistration(ctx, key);
    if (plan.type === 'duplicate_waiter') {
      await failRun(d, `a waiter is already registered for correlation key \`${key}\``, 'dead_letter');
      return;
    }
    const jobId = ctx.queue.nextJobId();
    let effects: EffectsBuilder;
    if (plan.type === 'buffered') {
      effects = advanceEffects(d, { step, jobId, payload, headers: nextStepHeaders(d, step, { [HEADER_SIGNAL_DELIVERED]: '1' }), enqueue: true }, undefined, signalDeletes, staged);
      effects.kvWrites.push([signalDeliveredKey(runId, step), plan.payload]);
      effects.kvDeletes.push(signalBufferKey(key));
    } else {
      effects = advanceEffects(d, { step, jobId, payload, headers: nextStepHeaders(d, step, { [HEADER_SIGNAL_WAIT]: key }), enqueue: true }, ctx.clock.now() + when.timeoutMs, signalDeletes, staged);
      effects.kvWrites.push([signalWaitKey(key), utf8(jobId)]);
    }
    ctx.registry.advanced(runId, step, jobId, claim);
    await ctx.queue.ackWith(claim, effects);
  });
  return undefined;
}
