/**
 * A terminal-notification job: decode the committed `RunOutcome`, run the hook, acknowledge with
 * the effects the hook staged. Never touches the run registry (the run already terminated).
 * Undecodable payload ⇒ dead-letter. Hook error ⇒ `StepError.from` decides: permanent ⇒
 * dead-letter, transient ⇒ nack (the queue retries with backoff until the job's attempts run out).
 * Effects the queue rejects (an invalid staged enqueue) ⇒ dead-letter with the reason.
 */
import { isTaqubaError } from '../errors.js';
import type { Claim } from '../queue/index.js';
import type { RuntimeContext } from './context.js';
import { TerminalEffects } from './effects-handle.js';
import { decodeRunOutcome } from './records.js';
import { StepError } from './step-error.js';
import type { RunOutcome } from './terminal-hook.js';

export async function processNotification(ctx: RuntimeContext, claim: Claim, handled?: () => void): Promise<void> {
  let outcome: RunOutcome;
  try {
    outcome = decodeRunOutcome(claim.job.payload);
  } catch (e) {
    await ctx.queue.deadLetter(claim, `undecodable terminal notification: ${(e as Error).message}`);
    return;
  }
  const effects = new TerminalEffects();
  try {
    await ctx.hook.onTermination(outcome, effects);
  } catch (e) {
    effects.seal();
    handled?.();
    const err = StepError.from(e);
    if (err.isPermanent) await ctx.queue.deadLetter(claim, err.message);
    else await ctx.queue.nack(claim, err.message);
    return;
  }
  effects.seal();
  handled?.();
  try {
    await ctx.queue.ackWith(claim, effects.toSettlementEffects());
  } catch (e) {
    if (!isTaqubaError(e, 'INVALID_ARGUMENT')) throw e;
    await ctx.queue.deadLetter(claim, `terminal hook staged invalid effects: ${e.message}`);
  }
}
