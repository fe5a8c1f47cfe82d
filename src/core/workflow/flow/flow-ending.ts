/**
 * What the ending of a run with flow control commits besides its termination: the concurrency
 * slot handed on or freed (concurrency.ts) and its debounce window closed (debounce.ts), read
 * under the keys' locks and committed before they are released. Every ending path goes through
 * here (runs/termination.ts `commitEnding`), with the flow headers of the run's step job.
 */
import type { RuntimeContext } from '../context.js';
import type { EffectsBuilder } from '../runs/termination.js';
import { addSlotRelease } from './concurrency.js';
import { addWindowClose } from './debounce.js';
import { HEADER_CONCURRENCY_KEY, HEADER_DEBOUNCE_KEY, withFlowLock, type FlowHeaders } from './flow-locks.js';

/** Runs `commit` (which settles with `effects`) after adding the flow effects of the ending of `runId`, under its keys' locks. */
export function commitFlowEnding<T>(ctx: RuntimeContext, runId: string, flow: FlowHeaders, effects: EffectsBuilder, commit: () => Promise<T>): Promise<T> {
  const concurrency = flow[HEADER_CONCURRENCY_KEY];
  const debounce = flow[HEADER_DEBOUNCE_KEY];
  const closeWindow = (): Promise<T> =>
    debounce === undefined
      ? commit()
      : withFlowLock(ctx.queue, ctx.queueName, 'debounce', debounce, async () => {
          await addWindowClose(ctx, debounce, runId, effects);
          return commit();
        });
  if (concurrency === undefined) return closeWindow();
  return withFlowLock(ctx.queue, ctx.queueName, 'concurrency', concurrency, async () => {
    await addSlotRelease(ctx, concurrency, effects);
    return closeWindow();
  });
}
