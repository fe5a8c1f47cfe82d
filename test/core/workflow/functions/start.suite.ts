/**
 * Starting runs: idempotent `start` (same id and input: one execution; another input:
 * INPUT_MISMATCH; `runIdReuse: 'after-retention'`: a finished run answers `finished` and its
 * value), a run id reused after the run ended starts a fresh history. Bad input: definitions,
 * registrations, starts, inputs, ctx arguments and raw submissions give typed errors.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../../src/core/bytes.js';
import { isTaqubaError } from '../../../../src/core/errors.js';
import { defineWorkflow, StepOutcome, WorkflowRuntime, type WorkflowContext } from '../../../../src/core/workflow/index.js';
import { Counter, fnWorld, Gates, reasonOf, rejection, resultOf, sleeping, thrown, type StoreFactory } from './fn-harness.js';

class Money {
  constructor(readonly cents: number) {}
}

export function defineStartSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: start (${name})`, () => {
    it('the same run id and input while the run is active: newlySubmitted false, one execution; another input: INPUT_MISMATCH', async () => {
      const w = await fnWorld(factory);
      const gates = new Gates();
      const calls = new Counter();
      const wf = defineWorkflow({
        name: 'idem',
        async run(ctx, n: number) {
          return ctx.step('double', async () => {
            calls.hit('double');
            await gates.hold('inside');
            return n * 2;
          });
        },
      });
      gates.arm('inside');
      const runtime = w.start([wf]);
      const a = await runtime.start(wf, 21, { runId: 'same' });
      expect(a.newlySubmitted).toBe(true);
      await gates.reached('inside');
      const b = await runtime.start(wf, 21, { runId: 'same' });
      expect(b.newlySubmitted).toBe(false);
      expect(b.runId).toBe('same');
      const e = await rejection(runtime.start(wf, 22, { runId: 'same' }));
      expect(e).toMatchObject({ code: 'INPUT_MISMATCH' });
      gates.release('inside');
      expect(await resultOf(a)).toBe(42);
      expect(await resultOf(b)).toBe(42);
      expect(calls.get('double')).toBe(1);
    });

    it('kvWrites commit with the start, and are not applied again for the run already there', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'with-kv', run: async (ctx) => ctx.step('read', async () => 'ran') });
      const runtime = w.runtime([wf]);
      const first = await runtime.start(wf, undefined, { runId: 'kv', kvWrites: [['orders/kv', utf8('placed')]] });
      expect(first.newlySubmitted).toBe(true);
      expect(await w.queue.kvGet(utf8('orders/kv'))).toEqual(utf8('placed'));
      const again = await runtime.start(wf, undefined, { runId: 'kv', kvWrites: new Map([['orders/kv', utf8('changed')]]) });
      expect(again.newlySubmitted).toBe(false);
      expect(await w.queue.kvGet(utf8('orders/kv'))).toEqual(utf8('placed'));
      const e = await rejection(runtime.start(wf, undefined, { runId: 'reserved', kvWrites: [['workflow/x', utf8('no')]] }));
      expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'reserved_kv_key' } });
    });

    it("runIdReuse 'after-retention': a finished run's id answers finished and result() gives its value; nothing runs again", async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = defineWorkflow({
        name: 'kept',
        async run(ctx, s: string) {
          return ctx.step('upper', () => (calls.hit('upper'), s.toUpperCase()));
        },
      });
      const runtime = w.start([wf], { runIdReuse: 'after-retention' });
      expect(await resultOf(await runtime.start(wf, 'abc', { runId: 'k' }))).toBe('ABC');
      const again = await runtime.start(wf, 'abc', { runId: 'k' });
      expect(again.newlySubmitted).toBe(false);
      expect(again.finished).toBe('succeeded');
      expect(await resultOf(again)).toBe('ABC');
      await expect(runtime.start(wf, 'xyz', { runId: 'k' })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
      await w.stop();
      expect(calls.get('upper')).toBe(1);
    });

    it("runIdReuse 'after-retention' on a failed run: finished 'failed', result() rejects RUN_FAILED", async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'kept-failure',
        async run() {
          throw new RangeError('nope');
        },
      });
      const runtime = w.start([wf], { runIdReuse: 'after-retention' });
      await expect(resultOf(await runtime.start(wf, undefined, { runId: 'f' }))).rejects.toMatchObject({ code: 'RUN_FAILED', error: 'RangeError: nope' });
      const again = await runtime.start(wf, undefined, { runId: 'f' });
      expect(again).toMatchObject({ newlySubmitted: false, finished: 'failed' });
      await expect(resultOf(again)).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'failed', error: 'RangeError: nope' });
    });

    it('by default a finished run id starts a new run, with a history of its own', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = defineWorkflow({
        name: 'again',
        async run(ctx, n: number) {
          const v = await ctx.step('one', () => (calls.hit('one'), n));
          await ctx.sleep(1000);
          return v;
        },
      });
      const runtime = w.start([wf]);
      const first = await runtime.start(wf, 1, { runId: 'again' });
      await sleeping(runtime, 'again');
      await first.cancel();
      await expect(resultOf(first)).rejects.toMatchObject({ status: 'cancelled' });
      const second = await runtime.start(wf, 2, { runId: 'again' });
      expect(second.newlySubmitted).toBe(true);
      await sleeping(runtime, 'again');
      await w.advance(1000);
      // The new run ran its step (it did not replay the cancelled run's history).
      expect(await resultOf(second)).toBe(2);
      expect(calls.get('one')).toBe(2);
      const third = await runtime.start(wf, 3, { runId: 'again' });
      await sleeping(runtime, 'again');
      await w.advance(1000);
      expect(await resultOf(third)).toBe(3);
    });
  });

  describe(`workflow functions: handles (${name})`, () => {
    it('a value over the 64 KiB a finished run keeps: result() rejects NOT_FOUND result_not_kept; status says succeeded', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'big', run: async () => 'x'.repeat(70_000) });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'big' });
      const e = await rejection(resultOf(run));
      expect(e).toMatchObject({ code: 'NOT_FOUND', details: { reason: 'result_not_kept', runId: 'big' } });
      expect(await run.status()).toMatchObject({ state: 'succeeded' });
    });

    it('a handle of an unknown run: status() null, result() NOT_FOUND, cancel() false', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'h', run: async () => 1 });
      const runtime = w.start([wf]);
      const handle = runtime.workflowRun(wf, 'nobody');
      expect(await handle.status()).toBeNull();
      await expect(handle.result()).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await handle.cancel()).toBe(false);
      expect(thrown(() => runtime.workflowRun(wf, 'bad id!'))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    });
  });

  describe(`workflow functions: bad input (${name})`, () => {
    const ok = async (): Promise<number> => 1;

    it('defineWorkflow: INVALID_ARGUMENT (invalid_workflow) naming the field', () => {
      const bad: [unknown, string][] = [
        [null, 'definition'],
        ['greet', 'definition'],
        [{ run: ok }, 'name'],
        [{ name: '', run: ok }, 'name'],
        [{ name: 'has space', run: ok }, 'name'],
        [{ name: 'x'.repeat(101), run: ok }, 'name'],
        [{ name: 7, run: ok }, 'name'],
        [{ name: 'w', version: 0, run: ok }, 'version'],
        [{ name: 'w', version: 1.5, run: ok }, 'version'],
        [{ name: 'w', version: '2', run: ok }, 'version'],
        [{ name: 'w', version: -1, run: ok }, 'version'],
        [{ name: 'w' }, 'run'],
        [{ name: 'w', run: 'code' }, 'run'],
        [{ name: 'w', run: ok, steps: { retries: -1 } }, 'steps'],
        [{ name: 'w', run: ok, steps: { retries: 1.5 } }, 'steps'],
        [{ name: 'w', run: ok, steps: { timeoutMs: 0 } }, 'steps'],
        [{ name: 'w', run: ok, steps: { backoff: { factor: 0.5 } } }, 'steps'],
        [{ name: 'w', run: ok, steps: { backoff: 5 } }, 'steps'],
        [{ name: 'w', run: ok, steps: { retry: 3 } }, 'steps'],
        [{ name: 'w', run: ok, steps: 'fast' }, 'steps'],
      ];
      for (const [definition, field] of bad) {
        const e = thrown(() => defineWorkflow(definition as never));
        expect(e, JSON.stringify(definition)).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_workflow', field } });
      }
      // The rule broken is in the message, with the option of a step default.
      expect(thrown(() => defineWorkflow({ name: 'w', run: ok, steps: { retries: -1 } })).message).toMatch(/retries must not be negative/);
      expect(thrown(() => defineWorkflow({ name: 'w', run: ok, steps: { retry: 3 } as never })).message).toMatch(/did_you_mean=retries/);
      expect(defineWorkflow({ name: 'A-z_0.9', version: 3, run: ok, steps: { retries: 0, timeoutMs: 5, backoff: { initialMs: 0, factor: 1, maxMs: 0 } } })).toMatchObject({ name: 'A-z_0.9', version: 3 });
    });

    it('new WorkflowRuntime: an empty or wrong workflow list, or one name and version twice: INVALID_ARGUMENT', async () => {
      const w = await fnWorld(factory);
      const a = defineWorkflow({ name: 'a', run: ok });
      const a2 = defineWorkflow({ name: 'a', run: ok });
      for (const workflows of [[], 'a', [{ name: 'a', version: 1, run: ok }], [a, a2]]) {
        const e = thrown(() => new WorkflowRuntime(w.queue, w.store, { workflows } as never));
        expect(e, String(workflows)).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_workflow', field: 'workflows' } });
      }
      expect(thrown(() => new WorkflowRuntime(w.queue, w.store, { workflows: [a, a2] })).message).toContain('workflow a version 1 is registered twice');
      // Two versions of one name are fine.
      expect(() => new WorkflowRuntime(w.queue, w.store, { workflows: [a, defineWorkflow({ name: 'a', version: 2, run: ok })] })).not.toThrow();
    });

    it('start of a workflow not registered: INVALID_ARGUMENT unknown_workflow naming the registered ones', async () => {
      const w = await fnWorld(factory);
      const a = defineWorkflow({ name: 'a', run: ok });
      const b = defineWorkflow({ name: 'b', run: ok });
      const a2 = defineWorkflow({ name: 'a', version: 2, run: ok });
      const runtime = w.runtime([a, a2]);
      const e = await rejection(runtime.start(b, undefined));
      expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow', workflow: 'b@1' } });
      expect(e.message).toContain('workflow b@1 is not registered on this runtime (registered: a@1, a@2)');
      // Another definition object of a registered name and version is not the registered one.
      const lookalike = defineWorkflow({ name: 'a', run: ok });
      await expect(runtime.start(lookalike, undefined)).rejects.toMatchObject({ details: { reason: 'unknown_workflow' } });
      expect(thrown(() => runtime.workflowRun(b, 'r'))).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
      await expect(runtime.start(null as never, undefined)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
    });

    it('start on a StepRunner runtime: INVALID_ARGUMENT', async () => {
      const w = await fnWorld(factory);
      const runtime = new WorkflowRuntime(w.queue, w.store, async () => StepOutcome.succeed(utf8('x')), undefined, { logger: false });
      const e = await rejection(runtime.start(defineWorkflow({ name: 'a', run: ok }), undefined));
      expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
      expect(e.message).toContain('start needs a runtime built with { workflows: [...] }');
    });

    it('an input the codec cannot store: INVALID_ARGUMENT unstorable_input; a bad run id or option: INVALID_ARGUMENT', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'inputs', run: async (_ctx, input: unknown) => input });
      const runtime = w.runtime([wf]);
      for (const input of [new Money(5), () => 1, { s: Symbol('x') }, [1, , 3]]) {
        const e = await rejection(runtime.start(wf, input));
        expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unstorable_input', workflow: 'inputs' } });
      }
      await expect(runtime.start(wf, 1, { runId: 'not valid!' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(runtime.start(wf, 1, { priority: 'high' } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(await runtime.listRuns()).toMatchObject({ runs: [] });
    });

    it('bad ctx arguments are INVALID_ARGUMENT thrown into the workflow', async () => {
      const w = await fnWorld(factory);
      const attempts: [string, (ctx: WorkflowContext) => Promise<unknown>][] = [
        ['invalid_step_name', (ctx) => ctx.step('', () => 1)],
        ['invalid_step_name', (ctx) => ctx.step(5 as never, () => 1)],
        ['invalid_step', (ctx) => ctx.step('s', 'not a function' as never)],
        ['invalid_step_options', (ctx) => ctx.step('s', () => 1, { retries: -2 })],
        ['invalid_step_options', (ctx) => ctx.step('s', () => 1, { retry: 1 } as never)],
        ['invalid_sleep', (ctx) => ctx.sleep('soon' as never)],
        ['invalid_sleep', (ctx) => ctx.sleep(new Date(NaN))],
        ['invalid_sleep', (ctx) => ctx.sleep(Infinity)],
        ['invalid_sleep', (ctx) => ctx.sleep(NaN)],
        ['invalid_signal_name', (ctx) => ctx.waitForSignal('')],
        ['invalid_wait', (ctx) => ctx.waitForSignal('s', { timeoutMs: -1 })],
        ['invalid_wait', (ctx) => ctx.waitForSignal('s', { timeoutMs: Infinity })],
      ];
      const wf = defineWorkflow({
        name: 'misuse',
        async run(ctx) {
          const out: unknown[] = [];
          for (const [, call] of attempts) {
            try {
              await call(ctx);
              out.push('no error');
            } catch (e) {
              out.push(isTaqubaError(e) ? [e.code, reasonOf(e)] : String(e));
            }
          }
          return out;
        },
      });
      const runtime = w.start([wf]);
      const out = await resultOf(await runtime.start(wf, undefined, { runId: 'm' }));
      expect(out).toEqual(attempts.map(([reason]) => ['INVALID_ARGUMENT', reason]));
    });

    it('a workflow returning a value the codec cannot store fails the run', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'bad-output', run: async () => new Money(3) as unknown });
      const runtime = w.start([wf]);
      await expect(resultOf(await runtime.start(wf, undefined, { runId: 'o' }))).rejects.toMatchObject({
        code: 'RUN_FAILED',
        error: expect.stringMatching(/^INVALID_ARGUMENT: the workflow returned a value that cannot be stored: .*Money instance/),
      });
    });

    it('submit of raw bytes to a functions runtime: INVALID_ARGUMENT not_a_workflow_run, nothing submitted', async () => {
      const w = await fnWorld(factory);
      const runtime = w.start([defineWorkflow({ name: 'a', run: ok })]);
      const e = await rejection(runtime.submit({ runId: 'raw', input: utf8('hello') }));
      expect(e).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'not_a_workflow_run' } });
      expect(await runtime.listRuns()).toMatchObject({ runs: [] });
    });

    it('a raw run that reaches a functions runtime anyway (submitted through a StepRunner runtime on its queue) fails at once, without retries or a dead step', async () => {
      const w = await fnWorld(factory, { defaultQueueConfig: { retryBackoffBaseMs: 60_000 } });
      const plain = new WorkflowRuntime(w.queue, w.store, async () => StepOutcome.succeed(utf8('x')), undefined, { logger: false });
      await plain.submit({ runId: 'raw', input: utf8('hello') });
      const runtime = w.start([defineWorkflow({ name: 'a', run: ok })]);
      const outcome = await runtime.result('raw');
      expect(outcome).toMatchObject({ status: 'failed', attempts: 1 });
      expect(outcome.error).toMatch(/^INVALID_ARGUMENT: run raw was not started by runtime\.start: its input is not a workflow function's/);
      expect(await runtime.listDeadSteps()).toEqual([]);
    });
  });
}
