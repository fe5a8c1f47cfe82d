/**
 * Dead-step reconciliation. Every path of the worker that dead-letters a step also terminates its
 * run in the same transaction. Two dead-letters happen outside the worker: the reaper's (a lease
 * expired on the last attempt) and the queue's recovery at open (a step interrupted for the
 * `maxInterruptions`-th time). Their runs are left with a record and a pointer naming the dead job; this repairs them.
 *
 * Pass: stream the dead jobs of the runtime's queue; skip notifications and jobs that are not
 * valid steps; for a step job that the run's pointer still names, commit the termination
 * effects (failed, with the job's last error) in one transaction with no job transition, and drop
 * the registry entry. The pointer check (not just "a record exists") keeps a later run submitted
 * under the same id safe from an earlier run's dead step.
 * Schedule: one pass at start, then one per poll interval whenever the queue's dead count changed
 * since the last successful pass.
 */
import type { JobRecord } from '../../queue/index.js';
import type { RuntimeContext } from '../context.js';
import { HEADER_TERMINAL, RECONCILED_FALLBACK_ERROR } from '../constants.js';
import { runRecordKey, stepPointerKey } from '../keys.js';
import { decodeStepPointer } from '../records.js';
import { parseStepJob, userHeaders } from '../steps/step-headers.js';
import { commitEnding, terminationEffects } from './termination.js';
import { factsOfRunRecord } from '../history/finished-runs.js';
import { flowHeadersOf } from '../flow/flow-locks.js';

const PAGE = 100;

async function reconcileJob(ctx: RuntimeContext, job: JobRecord): Promise<boolean> {
  if (job.headers[HEADER_TERMINAL] !== undefined) return false;
  const parsed = parseStepJob(job);
  if ('invalid' in parsed) return false;
  const pointerBytes = await ctx.queue.kvGet(stepPointerKey(parsed.runId));
  if (pointerBytes === undefined) return false;
  let pointerJob: string;
  try {
    pointerJob = decodeStepPointer(pointerBytes).jobId;
  } catch (e) {
    ctx.warn(`undecodable step pointer; reconciliation skips the run. runId=${parsed.runId}`, e);
    return false;
  }
  if (pointerJob !== job.id) return false;
  const record = await ctx.queue.kvGet(runRecordKey(parsed.runId));
  if (record === undefined) return false;
  const effects = terminationEffects(
    ctx,
    { runId: parsed.runId, status: 'failed', result: null, error: job.lastError ?? RECONCILED_FALLBACK_ERROR, headers: userHeaders(job.headers), finalStep: parsed.step },
    { priority: job.priority, maxAttempts: job.maxAttempts },
    factsOfRunRecord(record, job.id),
  );
  // Nothing else rewrites a pointer whose job is dead (no worker holds it; a submission of the
  // same id sees the record and stays a duplicate), so the check above still holds here.
  await commitEnding(ctx, parsed.runId, effects, () => ctx.queue.commitEffects(effects), flowHeadersOf(job.headers));
  ctx.registry.remove(parsed.runId);
  return true;
}

/** One pass. Returns the number of runs it terminated. */
export async function reconcileDeadSteps(ctx: RuntimeContext): Promise<number> {
  let after: string | undefined;
  let repaired = 0;
  for (;;) {
    const jobs = await ctx.queue.deadJobs(ctx.queueName, after, PAGE);
    for (const job of jobs) if (await reconcileJob(ctx, job)) repaired++;
    if (jobs.length < PAGE) return repaired;
    after = jobs[jobs.length - 1].id;
  }
}

export async function runReconcileLoop(ctx: RuntimeContext, pollIntervalMs: number, stop: AbortSignal): Promise<void> {
  let seenDead: number | undefined;
  while (!stop.aborted) {
    try {
      const dead = (await ctx.queue.stats(ctx.queueName)).dead;
      if (dead !== seenDead) {
        await reconcileDeadSteps(ctx);
        seenDead = dead;
      }
    } catch (e) {
      if (stop.aborted) return;
      ctx.warn('dead-step reconciliation failed', e);
    }
    try {
      await ctx.clock.sleep(pollIntervalMs, stop);
    } catch {
      return;
    }
  }
}
