/**
 * Determinism is checked: a replay that asks for another operation (step name, kind, order) than
 * the history recorded at that position fails the run with NON_DETERMINISTIC naming both, even if
 * the workflow catches the error. The code change is simulated by registering a different
 * definition under the same name and version in the next "process" (a reopened queue).
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow, NonDeterminismError, RunFailedError, type WorkflowContext } from '../../../../src/core/workflow/index.js';
import { Counter, fnWorld, rejection, resultOf, sleeping, type StoreFactory } from './fn-harness.js';

/** A run of `before` that sleeps after its first steps, resumed after a restart by `after`. */
async function changeUnderRun(factory: StoreFactory, before: (ctx: WorkflowContext) => Promise<unknown>, after: (ctx: WorkflowContext) => Promise<unknown>): Promise<RunFailedError> {
  const w = await fnWorld(factory);
  const v1 = defineWorkflow({ name: 'changing', run: before });
  const first = w.start([v1]);
  await first.start(v1, undefined, { runId: 'd' });
  await sleeping(first, 'd');
  await w.restart();
  const changed = defineWorkflow({ name: 'changing', run: after });
  const second = w.start([changed]);
  await w.advance(1000);
  const e = await rejection(resultOf(second.workflowRun(changed, 'd')));
  expect(e).toBeInstanceOf(RunFailedError);
  expect(await w.historyKeys()).toEqual([]);
  return e as unknown as RunFailedError;
}

export function defineDeterminismSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: determinism (${name})`, () => {
    it('another step name at a recorded position: NON_DETERMINISTIC naming the recorded and the requested step; nothing more runs', async () => {
      const calls = new Counter();
      const step = (ctx: WorkflowContext, n: string): Promise<string> => ctx.step(n, () => (calls.hit(n), n));
      const e = await changeUnderRun(
        factory,
        async (ctx) => {
          await step(ctx, 'a');
          await step(ctx, 'b');
          await ctx.sleep(1000);
          return step(ctx, 'c');
        },
        async (ctx) => {
          await step(ctx, 'a');
          await step(ctx, 'renamed');
          await ctx.sleep(1000);
          return step(ctx, 'c');
        },
      );
      expect(e).toMatchObject({ code: 'RUN_FAILED', status: 'failed' });
      expect(e.error).toMatch(/^NON_DETERMINISTIC: workflow replay diverged from the run's history at operation 1: recorded step "b", requested step "renamed"\. runId=d/);
      expect(calls.all()).toEqual({ a: 1, b: 1 });
    });

    it('another kind at a recorded position (a sleep where a step was): NON_DETERMINISTIC', async () => {
      const e = await changeUnderRun(
        factory,
        async (ctx) => {
          await ctx.step('a', () => 1);
          await ctx.sleep(1000);
          return 'v1';
        },
        async (ctx) => {
          await ctx.sleep(1000);
          return 'v2';
        },
      );
      expect(e.error).toContain('at operation 0: recorded step "a", requested sleep');
    });

    it('parallel steps requested in another order: NON_DETERMINISTIC', async () => {
      const e = await changeUnderRun(
        factory,
        async (ctx) => {
          await Promise.all([ctx.step('x', () => 1), ctx.step('y', () => 2)]);
          await ctx.sleep(1000);
          return 'v1';
        },
        async (ctx) => {
          await Promise.all([ctx.step('y', () => 2), ctx.step('x', () => 1)]);
          await ctx.sleep(1000);
          return 'v2';
        },
      );
      expect(e.error).toContain('recorded step "x", requested step "y"');
    });

    it('a workflow that catches the NonDeterminismError still fails', async () => {
      const caught: unknown[] = [];
      const e = await changeUnderRun(
        factory,
        async (ctx) => {
          await ctx.step('a', () => 1);
          await ctx.sleep(1000);
          return 'v1';
        },
        async (ctx) => {
          try {
            await ctx.step('other', () => 1);
          } catch (err) {
            caught.push(err);
          }
          return 'swallowed';
        },
      );
      expect(caught).toHaveLength(1);
      expect(caught[0]).toBeInstanceOf(NonDeterminismError);
      expect(caught[0]).toMatchObject({ code: 'NON_DETERMINISTIC', details: { position: 0, recorded: 'step "a"', requested: 'step "other"' } });
      expect(e.error).toMatch(/^NON_DETERMINISTIC/);
    });

    it('now() where a uuid() was recorded: NON_DETERMINISTIC thrown at the call', async () => {
      const e = await changeUnderRun(
        factory,
        async (ctx) => {
          ctx.uuid();
          await ctx.sleep(1000);
          return 'v1';
        },
        async (ctx) => {
          ctx.now();
          await ctx.sleep(1000);
          return 'v2';
        },
      );
      expect(e.error).toContain('recorded uuid, requested now');
    });

    it('a ctx.step called inside another step runs the first time, and fails the run NON_DETERMINISTIC on the replay (the outer step is not run again)', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'nested',
        async run(ctx) {
          const outer = await ctx.step('outer', async () => (await ctx.step('inner', () => 1)) + 1);
          await ctx.sleep(1000);
          return outer;
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'nest' });
      await sleeping(runtime, 'nest');
      await w.advance(1000);
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', error: expect.stringContaining('recorded step "inner", requested sleep') });
    });
  });
}
