/**
 * A new run's submission under flow control: debounce alone opens or joins its key's window;
 * otherwise the rate limit (if any) sets the start time, then the concurrency limit (if any)
 * admits or queues the run, and everything decided commits with the run. Locks are taken in that
 * order (rate, then concurrency), and an ending takes only concurrency and debounce locks, so no
 * two holders wait on each other.
 */
import type { RuntimeContext } from '../context.js';
import type { SubmitOutcome } from '../runs/submit.js';
import { submitWithConcurrency } from './concurrency.js';
import { submitDebounced } from './debounce.js';
import type { FlowControl } from './flow-options.js';
import { enqueueNewRun, type Admission, type NewRun } from './new-run.js';
import { withRateLimit } from './rate-limit.js';

export function submitWithFlow(ctx: RuntimeContext, run: NewRun, flow: FlowControl): Promise<SubmitOutcome> {
  if (flow.debounce !== undefined) return submitDebounced(ctx, run, flow.debounce);
  const concurrency = flow.concurrency;
  const admit = (admission: Admission): Promise<SubmitOutcome> => (concurrency === undefined ? enqueueNewRun(ctx, run, admission) : submitWithConcurrency(ctx, run, concurrency, admission));
  return flow.rateLimit === undefined ? admit({}) : withRateLimit(ctx, flow.rateLimit, admit);
}
