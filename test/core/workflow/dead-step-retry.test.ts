/**
 * `runtime.retryDeadStep`: a step dead-lettered outside a worker (its run still active) resumes
 * the run; a dead notification calls the hook again; a step whose run failed with it revives the
 * run, unless the id was submitted again since (CONFLICT, `run_resubmitted`); a job that is not
 * dead, or on another queue, is NOT_FOUND.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { StepError, StepOutcome, WorkflowRuntime, type RunOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, eventually, s } from './harness.js';

describe('retryDeadStep', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
  });

  async function setup() {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'retry', { logger: false, queueConfigs: { 'workflow-steps': { maxAttempts: 1 } } });
    cleanup.push(() => queue.close());
    const outcomes: RunOutcome[] = [];
    let hookDown = true;
    let fixed = false;
    const runner = async (step: Step): Promise<StepOutcome> => {
      if (step.runId === 'fatal' && !fixed) throw StepError.permanent('bad input');
      if (s(step.payload) === 'bad') throw StepError.permanent('bad input');
      return StepOutcome.succeed(b(`done ${step.runId}`));
    };
    const hook = {
      async onTermination(outcome: RunOutcome): Promise<void> {
        if (hookDown) throw new Error('receiver down');
        outcomes.push(outcome);
      },
    };
    const runtime = new WorkflowRuntime(queue, store, runner, hook, { logger: false, pollIntervalMs: 20 });
    return { queue, runtime, outcomes, hookUp: () => (hookDown = false), fix: () => (fixed = true) };
  }

  it('resumes a run whose step was dead-lettered outside a worker, and redelivers a dead notification', async () => {
    const { queue, runtime, outcomes, hookUp } = await setup();
    await runtime.submit({ runId: 'orphan', input: b('x') });
    // Dead-lettered by hand, as the reaper does when a lease expires on the last attempt: the
    // run's record and pointer still name the job (no worker ran, no reconciliation yet).
    const claim = (await queue.claimNext('workflow-steps'))!;
    await queue.deadLetter(claim, 'lease expired');
    expect((await runtime.getRun('orphan'))?.state).toBe('dead');

    expect(await runtime.retryDeadStep(claim.id)).toBe('step');
    expect((await runtime.getRun('orphan'))?.state).toBe('pending');
    await expect(runtime.retryDeadStep(claim.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const worker = runtime.spawn();
    cleanup.push(() => worker.shutdown());
    // The step succeeds; the hook is down, so the notification (one attempt) goes dead.
    const notification = (await eventually(async () => (await runtime.listDeadSteps()).find((d) => d.notification && d.runId === 'orphan')))!;
    expect(outcomes).toEqual([]);
    hookUp();
    expect(await runtime.retryDeadStep(notification.jobId)).toBe('notification');
    await eventually(() => outcomes.length === 1);
    expect(outcomes[0]).toMatchObject({ runId: 'orphan', status: 'succeeded' });
    expect(s(outcomes[0].result!)).toBe('done orphan');
  });

  it('revives a run that failed with its step; refuses when the id was submitted again, and jobs that are not dead steps of this runtime', async () => {
    const { queue, runtime, outcomes, hookUp, fix } = await setup();
    hookUp();
    const worker = runtime.spawn();
    await runtime.submit({ runId: 'fatal', input: b('x') });
    const dead = (await eventually(async () => (await runtime.listDeadSteps()).find((d) => d.runId === 'fatal' && !d.notification)))!;
    await eventually(() => outcomes.some((o) => o.runId === 'fatal'));
    expect(outcomes.find((o) => o.runId === 'fatal')).toMatchObject({ status: 'failed' });
    expect(await runtime.getRun('fatal')).toBeNull();

    fix();
    expect(await runtime.retryDeadStep(dead.jobId)).toBe('revived');
    await expect(runtime.retryDeadStep(dead.jobId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    // Its hook hears the new ending; the run is gone from the active list again after it.
    await eventually(() => outcomes.filter((o) => o.runId === 'fatal').length === 2);
    expect(outcomes.filter((o) => o.runId === 'fatal').map((o) => o.status)).toEqual(['failed', 'succeeded']);
    expect(s(outcomes.at(-1)!.result!)).toBe('done fatal');
    expect(await runtime.getRun('fatal')).toBeNull();

    // The id is submitted again while the failed step is dead: retrying that step would fork it.
    await runtime.submit({ runId: 'again', input: b('bad') });
    const deadAgain = (await eventually(async () => (await runtime.listDeadSteps()).find((d) => d.runId === 'again' && !d.notification)))!;
    await worker.shutdown();
    await runtime.submit({ runId: 'again', input: b('good') });
    await expect(runtime.retryDeadStep(deadAgain.jobId)).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'run_resubmitted', runId: 'again' } });
    expect((await runtime.listDeadSteps()).map((d) => d.jobId)).toContain(deadAgain.jobId);
    expect((await runtime.getRun('again'))?.jobId).not.toBe(deadAgain.jobId);

    const other = await queue.enqueue('elsewhere', b('p'));
    const claim = (await queue.claimNext('elsewhere'))!;
    await queue.deadLetter(claim, 'nope');
    await expect(runtime.retryDeadStep(other)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(runtime.retryDeadStep('01NOSUCHJOB0000000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
