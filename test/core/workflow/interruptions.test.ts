/**
 * Issue #13: a step whose delivery is interrupted (the process exits, crashes or the tab
 * reloads) is not a failed attempt. `step.attempt` counts only failed tries (+1) and
 * `step.interruptions` counts the interrupted deliveries; a step that is interrupted every time
 * still ends its run, once the queue's `maxInterruptions` is reached.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { NoopTerminalHook, StepError, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, makeHarness, QUEUE, RecordingHook } from './harness.js';

const memory = () => new MemoryObjectStore();

describe('interrupted step deliveries (issue #13)', () => {
  it('a step interrupted 10 times (maxAttemptsPerStep 2) then completing: the run succeeds, attempt stays 1', async () => {
    const h = await makeHarness(memory);
    const seen: Array<[attempt: number, interruptions: number]> = [];
    let entered = deferred();
    const never = deferred();
    const runner = async (step: Step): Promise<StepOutcome> => {
      seen.push([step.attempt, step.interruptions]);
      entered.resolve();
      if (seen.length <= 10) await never.promise;
      return StepOutcome.succeed(b('done'));
    };
    const hook = new RecordingHook();
    const first = h.start(runner, new NoopTerminalHook());
    const { runId, jobId } = await first.runtime.submit({ maxAttemptsPerStep: 2 });
    for (let i = 0; i < 10; i++) {
      await entered.promise;
      entered = deferred();
      await h.crashRestart();
      h.start(runner, i === 9 ? hook : new NoopTerminalHook());
    }
    expect(await hook.first()).toMatchObject({ runId, status: 'succeeded', finalStep: 0 });
    expect(seen).toEqual(Array.from({ length: 11 }, (_, i) => [1, i]));
    expect((await h.queue.stats(QUEUE)).dead).toBe(0);
    expect(await h.queue.getJob(jobId)).toBeUndefined();
    never.resolve();
  });

  it('attempt counts failed tries only; interruptions count apart', async () => {
    const h = await makeHarness(memory);
    const seen: Array<[attempt: number, interruptions: number]> = [];
    const never = deferred();
    const runner = async (step: Step): Promise<StepOutcome> => {
      seen.push([step.attempt, step.interruptions]);
      if (seen.length === 1) throw StepError.transient('rate limited');
      if (seen.length === 2) await never.promise;
      return StepOutcome.succeed(b('done'));
    };
    const hook = new RecordingHook();
    const first = h.start(runner, new NoopTerminalHook());
    const { runId } = await first.runtime.submit({ maxAttemptsPerStep: 2 });
    // The retry (zero backoff) runs and blocks; crash during it.
    await eventually(() => seen.length >= 2);
    await h.crashRestart();
    h.start(runner, hook);
    // The interrupted try was the last one (attempt 2 of 2) and it is run again as attempt 2.
    expect(await hook.first()).toMatchObject({ runId, status: 'succeeded' });
    expect(seen).toEqual([
      [1, 0],
      [2, 0],
      [2, 1],
    ]);
    never.resolve();
  });

  it('a step interrupted maxInterruptions times fails its run with a reason that says so', async () => {
    const h = await makeHarness(memory, { defaultQueueConfig: { retryBackoffBaseMs: 0, maxInterruptions: 3 } });
    let entered = deferred();
    const never = deferred();
    const poison = async (): Promise<StepOutcome> => {
      entered.resolve();
      await never.promise;
      return StepOutcome.succeed(b('unreachable'));
    };
    const first = h.start(poison, new NoopTerminalHook());
    const { runId, jobId } = await first.runtime.submit({ maxAttemptsPerStep: 5, headers: { origin: 'poison' } });
    for (let i = 0; i < 3; i++) {
      await entered.promise;
      entered = deferred();
      await h.crashRestart();
      if (i < 2) h.start(poison, new NoopTerminalHook());
    }
    const reason = 'interrupted 3 times (process exit, crash or abandoned delivery)';
    expect(await h.queue.getJob(jobId)).toMatchObject({ status: 'dead', lastError: reason, attempts: 0, interruptions: 3 });
    const hook = new RecordingHook();
    h.start(poison, hook);
    expect(await hook.first()).toMatchObject({ runId, status: 'failed', error: reason, finalStep: 0, headers: { origin: 'poison' } });
    never.resolve();
  });
});
