/**
 * `ctx.sleep`: a durable timer (MockClock). The run is pending and no step job is claimable before
 * the wake time; it survives a restart; `sleep(date)` wakes at the date; a date in the past does
 * not suspend; a sleeping run can be cancelled (its result rejects RUN_FAILED cancelled).
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow, RunFailedError, type Workflow } from '../../../../src/core/workflow/index.js';
import { Counter, eventually, fnWorld, rejection, resultOf, sleeping, START_MS, type StoreFactory } from './fn-harness.js';

function napper(calls: Counter, duration: (now: number) => number | Date): Workflow<void, { woke: number }> {
  return defineWorkflow({
    name: 'napper',
    async run(ctx) {
      await ctx.step('before', () => calls.hit('before'));
      await ctx.sleep(duration(ctx.now()));
      const woke = await ctx.step('after', () => {
        calls.hit('after');
        return ctx.now();
      });
      return { woke };
    },
  });
}

export function defineSleepSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: sleep (${name})`, () => {
    it('sleep(ms): pending until the wake time, no step job claimable before it', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = napper(calls, () => 60_000);
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 's' });
      const parked = await sleeping(runtime, 's');
      expect(parked.waitingFor).toEqual({ type: 'timer', at: START_MS + 60_000, reason: 'delay' });
      expect(parked.currentStep).toBe(1);
      expect(await run.status()).toMatchObject({ state: 'pending' });
      await w.clock.advance(59_999);
      // Nothing is due: no job becomes claimable, the run is still parked.
      expect(await w.queue.promoteScheduledNow()).toBe(0);
      expect(await w.queue.stats(runtime.queueName)).toMatchObject({ pending: 0, claimed: 0, scheduled: 1 });
      expect(await run.status()).toMatchObject({ state: 'pending' });
      expect(calls.get('after')).toBe(0);
      await w.advance(1);
      // ctx.now() in the step is the time recorded when it first ran (the wake time).
      expect(await resultOf(run)).toEqual({ woke: START_MS + 60_000 });
      expect(calls.all()).toEqual({ after: 1, before: 1 });
    });

    it('sleep(date) wakes at the date', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = napper(calls, (now) => new Date(now + 30_000));
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'd' });
      expect((await sleeping(runtime, 'd')).waitingFor).toMatchObject({ at: START_MS + 30_000 });
      await w.advance(30_000);
      expect(await resultOf(run)).toEqual({ woke: START_MS + 30_000 });
    });

    it('a date in the past or 0 ms does not suspend the run', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'no-nap',
        async run(ctx) {
          await ctx.sleep(new Date(0));
          await ctx.sleep(0);
          await ctx.sleep(-5);
          return ctx.step('done', () => 'awake');
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'n' });
      expect(await resultOf(run)).toBe('awake');
      expect(await runtime.getRun('n', { includeFinished: true })).toMatchObject({ finalStep: 0 });
    });

    it('a sleep survives a restart; the wake happens in the new process and nothing before it runs again', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = napper(calls, () => 3_600_000);
      const first = w.start([wf]);
      await first.start(wf, undefined, { runId: 'r' });
      await sleeping(first, 'r');
      await w.restart();
      await w.advance(3_600_000);
      const second = w.start([wf]);
      expect(await resultOf(second.workflowRun(wf, 'r'))).toEqual({ woke: START_MS + 3_600_000 });
      expect(calls.all()).toEqual({ after: 1, before: 1 });
    });

    it('handle.cancel() of a sleeping run: result() rejects RUN_FAILED cancelled, nothing more runs', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = napper(calls, () => 60_000);
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'c' });
      await sleeping(runtime, 'c');
      expect(await run.cancel()).toBe(true);
      const e = await rejection(resultOf(run));
      expect(e).toBeInstanceOf(RunFailedError);
      expect(e).toMatchObject({ code: 'RUN_FAILED', status: 'cancelled', error: null, runId: 'c' });
      expect(await run.status()).toMatchObject({ state: 'cancelled' });
      await w.advance(60_000);
      expect(await run.cancel()).toBe(false);
      await w.stop();
      expect(calls.get('after')).toBe(0);
    });

    it('cancelling a run inside a step aborts ctx.signal and the attempt signal; the run ends cancelled', async () => {
      const w = await fnWorld(factory);
      const seen: { ctx?: AbortSignal; attempt?: AbortSignal } = {};
      const wf = defineWorkflow({
        name: 'cancel-in-step',
        async run(ctx) {
          seen.ctx = ctx.signal;
          return ctx.step('wait-forever', ({ signal }) => {
            seen.attempt = signal;
            return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
          });
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'cs' });
      await eventually(() => seen.attempt !== undefined);
      expect(await run.cancel()).toBe(true);
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'cancelled' });
      expect(seen.ctx!.aborted).toBe(true);
      expect(seen.attempt!.aborted).toBe(true);
    });

    it('a cancel requested while a step that never reads its signal runs: no later step starts, the run ends cancelled', async () => {
      const w = await fnWorld(factory);
      const calls: string[] = [];
      let finish!: () => void;
      const first = new Promise<void>((resolve) => (finish = resolve));
      const wf = defineWorkflow({
        name: 'cancel-unread',
        async run(ctx) {
          await ctx.step('first', async () => {
            calls.push('first');
            await first;
            return 1;
          });
          return ctx.step('second', () => {
            calls.push('second');
            return 2;
          });
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'cu' });
      await eventually(() => calls.length === 1);
      expect(await run.cancel()).toBe(true);
      finish();
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'cancelled' });
      expect(calls).toEqual(['first']);
    });
  });
}
