/**
 * A terminal-notification job: decode the committed `RunOutcome`, run the hook, acknowledge with
 * the effects the hook staged. Never touches the run registry (the run already terminated).
 * Undecodable payload ⇒ dead-letter. Hook error ⇒ `StepError.from` decides: permanent ⇒
 * dead-letter, transient ⇒ nack (the queue retries with backoff until the job's attempts run out).
 * Effects the queue rejects (an invalid staged enqueue) ⇒ dead-letter with the reason.
 */
import { isTaqubaError } from '../../errors.js';
import { errorFields } from '../../logger.js';
import type { Claim } from '../../queue/index.js';
import { retryBackoffMs } from '../../queue/transitions/retry-backoff.js';
import type { RuntimeContext } from '../context.js';
import { TerminalEffects } from '../steps/effects-handle.js';
import { decodeRunOutcome } from '../records.js';
import { StepError } from '../steps/step-error.js';
import type { RunOutcome } from './terminal-hook.js';

export async function processNotification(ctx: RuntimeContext, claim: Claim, handled?: () => void): Promise<void> {
  let outcome: RunOutcome;
  try {
    outcome = decodeRunOutcome(claim.job.payload);
  } catch (e) {
    const reason = `undecodable terminal notification: ${(e as Error).message}`;
    await ctx.queue.deadLetter(claim, reason);
    ctx.log.error('terminal notification dead-lettered', { jobId: claim.id, reason });
    return;
  }
  const effects = new TerminalEffects();
  try {
    await ctx.hook.onTermination(outcome, effects);
  } catch (e) {
    effects.seal();
    handled?.();
    const err = StepError.from(e);
    const job = claim.job;
    const fields = { runId: outcome.runId, status: outcome.status, attempt: job.attempts, maxAttempts: job.maxAttempts, ...errorFields(e, !(e instanceof StepError)) };
    if (err.isPermanent) {
      await ctx.queue.deadLetter(claim, err.message);
      ctx.log.error('terminal hook failed; notification dead-lettered', { ...fields, error: err.message, jobId: claim.id });
      return;
    }
    const nack = await ctx.queue.nack(claim, err.message);
    if (nack.type === 'dead_lettered') ctx.log.error('terminal hook failed; out of attempts, notification dead-lettered', { ...fields, error: err.message, jobId: claim.id });
    else ctx.log.warn('terminal hook failed; retrying', { ...fields, error: err.message, nextDelayMs: retryBackoffMs(ctx.queue.queueConfig(ctx.queueName), job.attempts), jobId: claim.id });
    return;
  }
  effects.seal();
  handled?.();
  try {
    await ctx.queue.ackWith(claim, effects.toSettlementEffects());
  } catch (e) {
    if (!isTaqubaError(e, 'INVALID_ARGUMENT')) throw e;
    const reason = `terminal hook staged invalid effects: ${e.message}`;
    await ctx.queue.deadLetter(claim, reason);
    ctx.log.error('terminal notification dead-lettered', { runId: outcome.runId, reason, jobId: claim.id });
  }
}
