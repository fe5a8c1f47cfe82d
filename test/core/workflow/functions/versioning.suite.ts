/**
 * Versioning by keeping old definitions registered: a run started on v1 finishes on v1's code
 * after a restart that registers v1 and v2, while new starts of v2 run v2. A run whose version is
 * not registered any more is retried as a transient error (not failed at once) and finishes once
 * the definition is back.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '../../../../src/core/workflow/index.js';
import { Counter, fnWorld, resultOf, runState, sleeping, type StoreFactory } from './fn-harness.js';

function versions(calls: Counter) {
  const v1 = defineWorkflow({
    name: 'order',
    async run(ctx, id: string) {
      const a = await ctx.step('reserve', () => (calls.hit('v1 reserve'), `r-${id}`));
      await ctx.sleep(1000);
      const b = await ctx.step('ship', () => (calls.hit('v1 ship'), `shipped ${a}`));
      return { version: ctx.version, b };
    },
  });
  const v2 = defineWorkflow({
    name: 'order',
    version: 2,
    async run(ctx, id: string) {
      const a = await ctx.step('reserve-v2', () => (calls.hit('v2 reserve'), `r2-${id}`));
      const c = await ctx.step('notify', () => (calls.hit('v2 notify'), 'notified'));
      await ctx.sleep(1000);
      const b = await ctx.step('ship', () => (calls.hit('v2 ship'), `shipped ${a} ${c}`));
      return { version: ctx.version, b };
    },
  });
  return { v1, v2 };
}

export function defineVersioningSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: versioning (${name})`, () => {
    it('a run started on v1 finishes on v1 after a restart with v1 and v2 registered; new starts of v2 run v2', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const { v1, v2 } = versions(calls);
      const first = w.start([v1]);
      await first.start(v1, 'a', { runId: 'old' });
      await sleeping(first, 'old');
      await w.restart();
      const second = w.start([v1, v2]);
      const fresh = await second.start(v2, 'b', { runId: 'new' });
      await sleeping(second, 'new');
      await w.advance(1000);
      expect(await resultOf(second.workflowRun(v1, 'old'))).toEqual({ version: 1, b: 'shipped r-a' });
      expect(await resultOf(fresh)).toEqual({ version: 2, b: 'shipped r2-b notified' });
      expect(calls.all()).toEqual({ 'v1 reserve': 1, 'v1 ship': 1, 'v2 notify': 1, 'v2 reserve': 1, 'v2 ship': 1 });
    });

    it('a run whose version is not registered is retried as a transient error, and finishes once the definition is back', async () => {
      const w = await fnWorld(factory, { defaultQueueConfig: { retryBackoffBaseMs: 60_000, maxAttempts: 10 } });
      const calls = new Counter();
      const { v1, v2 } = versions(calls);
      const first = w.start([v1]);
      await first.start(v1, 'a', { runId: 'orphan' });
      await sleeping(first, 'orphan');
      await w.restart();
      // A deployment that dropped v1.
      const second = w.start([v2]);
      await w.advance(1000);
      const retrying = await runState(second, 'orphan', (d) => d.state === 'scheduled' && d.waitingFor?.type === 'timer' && d.waitingFor.reason === 'retry', 'the step to back off');
      expect(retrying.lastError).toMatch(/workflow order@1 is not registered on this runtime \(registered: order@2\)/);
      expect(retrying.attempts).toBe(1);
      await w.advance(60_000);
      await runState(second, 'orphan', (d) => d.attempts === 2 && d.waitingFor?.type === 'timer', 'the second try to back off');
      expect(await second.getRun('orphan')).toMatchObject({ state: 'scheduled', currentStep: 1 });
      // v1 is deployed again.
      await w.restart();
      const third = w.start([v1, v2]);
      await w.advance(120_000);
      expect(await resultOf(third.workflowRun(v1, 'orphan'))).toEqual({ version: 1, b: 'shipped r-a' });
      expect(calls.all()).toEqual({ 'v1 reserve': 1, 'v1 ship': 1 });
    });

    // The runtime's in-process registry keeps a step that failed with a transient error as
    // `running` while it backs off (steps/step-processor.ts retryOrFail nacks without telling the
    // registry), so status/readStatus say `running` where the store (getRun) says `scheduled`.
    // Not a workflow-function bug, and outside the files this suite's fixes may touch.
    it('readStatus of a run whose step backs off after a transient error is pending', async () => {
      const w = await fnWorld(factory, { defaultQueueConfig: { retryBackoffBaseMs: 60_000 } });
      const wf = defineWorkflow({
        name: 'flaky-infra',
        async run() {
          throw new Error('unused');
        },
      });
      const other = defineWorkflow({ name: 'other', run: async () => 1 });
      const first = w.runtime([wf]);
      await first.start(wf, undefined, { runId: 'b' });
      // Only `other` is deployed: the run's step fails with a transient error and backs off.
      const runtime = w.start([other]);
      await runState(runtime, 'b', (d) => d.waitingFor?.type === 'timer' && d.waitingFor.reason === 'retry', 'the step to back off');
      expect(await runtime.readStatus('b')).toMatchObject({ state: 'pending' });
    });
  });
}
