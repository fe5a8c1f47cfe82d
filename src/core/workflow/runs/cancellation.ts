/**
 * External cancellation and status of a run, from the registry when this process knows the run
 * and from the store when it does not.
 *
 * Scope decision. The reference (0.11, spec workflow.md §1.8 and §6.1 item 2) answers `cancel`
 * and `status` from the in-process registry only: after a restart, a run parked on a signal or
 * a timer is invisible until one of its steps is claimed here, and `cancel` returns false for it.
 * That is a gap, not a guarantee anyone relies on: the browser host (a new leader after a tab
 * takeover) and any restarted Node process must be able to cancel such runs. So `cancel` falls
 * back to the durable state (run record, step pointer, the pointer's job), as the spec's
 * post-0.11 direction does; `readStatus` does the same for status. The synchronous `status` stays
 * registry-only (it cannot do I/O).
 *
 * Cancel protocol:
 * 1. Registry entry (submitted here, or a step claimed here): set its cancel flag, then
 *    `cancelWith(current job, termination effects)`. `removed`: the termination committed with
 *    the removal; `requested`: the running step sees its signal fire and settles cancelled;
 *    `not_found`: a settlement raced the cancel, and the flag cancels the next step claimed here.
 * 2. No entry: read the durable state (durable-run.ts). No record ⇒ false (unknown or
 *    terminated). Dead step job ⇒ false (the run has failed; reconciliation records it). Step
 *    job on another queue name ⇒ false (another runtime on the same queue handle owns the run;
 *    its cancel, notification and hook are that runtime's). A mixed read ⇒ read again.
 * 3. An active job: `cancelWith(job, termination effects)` with the job's user headers and the
 *    pointer's step. `removed` ⇒ true, the termination (marker, record and pointer deletes,
 *    notification) committed with the removal, exactly as in 1. `requested` ⇒ true: the job was
 *    claimed after the read (here: the queue requeues foreign claims at open), its claim signal
 *    fires and the persisted flag survives redelivery; the registry entry of that delivery, if it
 *    exists yet, is flagged so `status` shows `cancelling`. `not_found` ⇒ the job settled after
 *    the read: start again at 1 (the run advanced, so the next job is the target, or it
 *    terminated, so the answer is false).
 * Step 3 sets no registry flag before the commit: the queue's own cancel flag and the claim
 * signal cover every claim of the job, and a run whose job moved on is retried from step 1.
 */
import type { RuntimeContext } from '../context.js';
import type { CommandRecord } from '../commands/ledger.js';
import { DURABLE_READ_ATTEMPTS, inconsistent, readDurableRun, type DurableRun } from './durable-run.js';
import type { RegistryEntry, RunStatus } from '../registry.js';
import { userHeaders } from '../steps/step-headers.js';
import { commitEnding, terminationEffects } from './termination.js';
import { endingFactsRead, factsOfRunRecord } from '../history/finished-runs.js';
import { stepPointerKey } from '../keys.js';
import { decodeStepPointer } from '../records.js';
import { addWithdrawal } from '../flow/concurrency.js';
import { flowHeadersOf, withFlowLock } from '../flow/flow-locks.js';

/** Protocol step 1. */
async function cancelRegistered(ctx: RuntimeContext, runId: string, entry: RegistryEntry, record: CommandRecord | undefined): Promise<boolean> {
  entry.cancelRequested = true;
  await endingFactsRead(ctx, runId);
  const jobId = entry.currentJobId;
  // The run's flow keys are on its step jobs (a slot or a window to release with the ending).
  const flow = flowHeadersOf((await ctx.queue.getJob(jobId))?.headers);
  const effects = terminationEffects(ctx, { runId, status: 'cancelled', result: null, error: null, headers: entry.headers, finalStep: entry.currentStep });
  const { outcome } = await commitEnding(ctx, runId, effects, () => ctx.queue.cancelWith(jobId, effects, record?.writes(true)), flow);
  // No job: the run may wait for a concurrency slot, which its job is not enqueued before.
  if (outcome === 'removed' || (outcome === 'not_found' && (await cancelIfQueued(ctx, runId, record)))) ctx.registry.removeIf(runId, entry);
  return true;
}

/** Cancels the run if it waits for a concurrency slot; false when it does not. */
async function cancelIfQueued(ctx: RuntimeContext, runId: string, record: CommandRecord | undefined): Promise<boolean> {
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    const run = await readDurableRun(ctx.queue, runId, ctx.queueName);
    if (run.type === 'moved') continue;
    if (run.type !== 'queued') return false;
    if (await cancelQueued(ctx, run, record)) return true;
  }
  return false;
}

/**
 * Cancels run `run`, waiting for a slot: its termination commits with its entry's deletion, under
 * the key's lock, if the pointer still marks it waiting at that place. False when it was admitted
 * (or ended) since the read: read it again.
 */
async function cancelQueued(ctx: RuntimeContext, run: Extract<DurableRun, { type: 'queued' }>, record: CommandRecord | undefined): Promise<boolean> {
  const runId = run.run.runId;
  const effects = terminationEffects(ctx, { runId, status: 'cancelled', result: null, error: null, headers: run.run.headers, finalStep: 0 }, {}, factsOfRunRecord(run.record, run.jobId));
  return commitEnding(ctx, runId, effects, () =>
    withFlowLock(ctx.queue, ctx.queueName, 'concurrency', run.key, async () => {
      const pointer = await ctx.queue.kvGet(stepPointerKey(runId));
      const queued = pointer === undefined ? undefined : decodeStepPointer(pointer).queued;
      if (queued?.key !== run.key || queued.seq !== run.seq) return false;
      await addWithdrawal(ctx, run.key, run.seq, run.run, effects);
      await ctx.queue.commitEffects({ ...effects, kvWrites: [...effects.kvWrites, ...(record?.writes(true) ?? [])] });
      ctx.registry.remove(runId);
      return true;
    }),
  );
}

/**
 * `WorkflowRuntime.cancel` after the run id was validated. `record`: the command being applied,
 * whose answer commits with the cancel's removal or flag (commands/ledger.ts).
 */
export async function cancelRun(ctx: RuntimeContext, runId: string, record?: CommandRecord): Promise<boolean> {
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    const entry = ctx.registry.get(runId);
    if (entry) return cancelRegistered(ctx, runId, entry, record);
    const run = await readDurableRun(ctx.queue, runId, ctx.queueName);
    if (run.type === 'absent' || run.type === 'dead' || run.type === 'foreign') return false;
    if (run.type === 'moved') continue;
    if (run.type === 'queued') {
      if (await cancelQueued(ctx, run, record)) return true;
      continue;
    }
    // A claim here may have registered the run while we read: the registry path knows more
    // (the delivery) and keeps the `cancelling` overlay, so take it.
    const registered = ctx.registry.get(runId);
    if (registered) return cancelRegistered(ctx, runId, registered, record);
    const { job, step } = run;
    const effects = terminationEffects(ctx, { runId, status: 'cancelled', result: null, error: null, headers: userHeaders(job.headers), finalStep: step }, {}, factsOfRunRecord(run.record, job.id));
    const { outcome } = await commitEnding(ctx, runId, effects, () => ctx.queue.cancelWith(job.id, effects, record?.writes(true)), flowHeadersOf(job.headers));
    if (outcome === 'removed') return true;
    if (outcome === 'requested') {
      const live = ctx.registry.get(runId);
      if (live?.currentJobId === job.id) live.cancelRequested = true;
      return true;
    }
  }
  throw inconsistent(runId);
}

/** `WorkflowRuntime.readStatus` after the run id was validated. */
export async function readRunStatus(ctx: RuntimeContext, runId: string): Promise<RunStatus | null> {
  for (let attempt = 1; attempt <= DURABLE_READ_ATTEMPTS; attempt++) {
    // The registry is at least as fresh as the store for runs it knows (it moves before each
    // settlement commits) and alone knows a cancel requested of a step not yet claimed.
    const live = ctx.registry.status(runId);
    if (live) return live;
    const run = await readDurableRun(ctx.queue, runId, ctx.queueName);
    if (run.type === 'absent' || run.type === 'dead' || run.type === 'foreign') return null;
    if (run.type === 'moved') continue;
    if (run.type === 'queued') return { runId, state: 'pending', currentStep: 0 };
    const { job, step } = run;
    if (job.status !== 'claimed') return { runId, state: 'pending', currentStep: step };
    return { runId, state: job.cancelRequested ? 'cancelling' : 'running', currentStep: step };
  }
  throw inconsistent(runId);
}
