/**
 * The runtime's worker loop: keeps up to `concurrency` steps (and notifications) running their
 * runner or hook, claiming batches sized to the free capacity. A job holds its slot while user
 * code runs; its settlement (a durable commit) then completes off the slot, so the loop keeps
 * claiming while a WAL put is in flight and one put carries the settlements of more than
 * `concurrency` jobs. Settlements in progress are capped at max(256, 32 × concurrency), so a stalled
 * store stops the loop instead of piling them up. Idle, the loop sleeps until the queue's next
 * insert wakeup or `pollIntervalMs`. On shutdown it stops claiming and waits until every job it
 * started is settled.
 */
import { HandlerSlots } from '../queue/index.js';
import type { RuntimeContext } from './context.js';
import { processDelivery } from './step-processor.js';

export async function runWorkerLoop(ctx: RuntimeContext, concurrency: number, pollIntervalMs: number, stop: AbortSignal): Promise<void> {
  const leaseMs = ctx.queue.queueConfig(ctx.queueName).leaseMs;
  const slots = new HandlerSlots(concurrency);
  stop.addEventListener('abort', slots.wakeLoop, { once: true });
  try {
    while (!stop.aborted) {
      const free = slots.free;
      if (free === 0) {
        await slots.sleep();
        continue;
      }
      const claims = await ctx.queue.claimBatch(ctx.queueName, free, leaseMs);
      if (claims.length > 0) {
        for (const claim of claims) slots.start((handled) => processDelivery(ctx, claim, handled));
        continue;
      }
      await ctx.queue.waitForJobsOn(ctx.queueName, pollIntervalMs, stop);
    }
  } finally {
    stop.removeEventListener('abort', slots.wakeLoop);
    await slots.drain();
  }
}
