/**
 * The runtime's worker loop: keeps up to `concurrency` jobs of the runtime's queue in flight
 * (steps and notifications alike), claiming batches sized to the free capacity. Idle, it sleeps
 * until the queue's next insert wakeup or `pollIntervalMs`, whichever comes first. On shutdown it
 * stops claiming and waits for every in-flight delivery to settle.
 */
import type { RuntimeContext } from './context.js';
import { processDelivery } from './step-processor.js';

export async function runWorkerLoop(ctx: RuntimeContext, concurrency: number, pollIntervalMs: number, stop: AbortSignal): Promise<void> {
  const leaseMs = ctx.queue.queueConfig(ctx.queueName).leaseMs;
  const inFlight = new Set<Promise<void>>();
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
    if (stop.aborted) resolve();
  });
  stop.addEventListener('abort', onAbort, { once: true });
  try {
    while (!stop.aborted) {
      const free = concurrency - inFlight.size;
      if (free === 0) {
        await Promise.race([...inFlight, aborted]);
        continue;
      }
      const claims = await ctx.queue.claimBatch(ctx.queueName, free, leaseMs);
      if (claims.length > 0) {
        for (const claim of claims) {
          const task: Promise<void> = processDelivery(ctx, claim).finally(() => inFlight.delete(task));
          inFlight.add(task);
        }
        continue;
      }
      await ctx.queue.waitForJobsOn(ctx.queueName, pollIntervalMs, stop);
    }
  } finally {
    stop.removeEventListener('abort', onAbort);
    await Promise.allSettled([...inFlight]);
  }
}
