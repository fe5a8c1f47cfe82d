/**
 * Waiting for a job to reach a terminal state, in process. The waiter registers for the
 * completion broadcast BEFORE each lookup so a transition racing the lookup is never missed.
 * Transient transitions (retry, reap requeue, promotion, cancel request) do not wake it.
 */
import type { JobRecord } from '../records/job-record.js';
import type { QueueContext } from '../queue-context.js';
import { validateDuration, validateLookupId } from '../records/validation.js';

/**
 * `completed`: the job is done or dead (its record), or left the queue (null: acked without
 * retention, or cancelled). `not_found`: unknown at the first look.
 */
export type WaitOutcome = { readonly type: 'completed'; readonly job: JobRecord | null } | { readonly type: 'timed_out' } | { readonly type: 'not_found' };

export async function waitForCompletion(
  ctx: QueueContext,
  lookup: (id: string) => Promise<JobRecord | undefined>,
  id: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WaitOutcome> {
  validateLookupId(id);
  validateDuration(timeoutMs, 'timeoutMs');
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = ctx.clock.sleep(timeoutMs, stop.signal).then(
    () => 'timeout' as const,
    () => 'aborted' as const,
  );
  try {
    for (let first = true; ; first = false) {
      const registration = ctx.completion.register();
      const job = await lookup(id);
      if (job === undefined) {
        registration.dispose();
        return first ? { type: 'not_found' } : { type: 'completed', job: null };
      }
      if (job.status === 'done' || job.status === 'dead') {
        registration.dispose();
        return { type: 'completed', job };
      }
      const woke = await Promise.race([registration.fired.then(() => 'fired' as const), timer]);
      registration.dispose();
      if (woke !== 'fired') return { type: 'timed_out' };
    }
  } finally {
    stop.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}
