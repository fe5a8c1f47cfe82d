/**
 * `ctx.step`: values of every codec type come back the same on the first execution and on a
 * replay; a value the codec cannot store (or too large) is INVALID_ARGUMENT thrown into the
 * workflow; retries follow the backoff (MockClock); `timeoutMs` aborts the attempt's signal and
 * counts as a failure; out of attempts `StepFailedError` is thrown into the workflow (caught for a
 * compensation, the same on replay without calling the step again) or fails the run.
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../../src/core/errors.js';
import { MAX_KV_VALUE_SIZE } from '../../../../src/core/queue/index.js';
import { defineWorkflow, RunFailedError, StepFailedError, type StepAttempt } from '../../../../src/core/workflow/index.js';
import { Counter, eventually, fnWorld, reasonOf, rejection, resultOf, sleeping, START_MS, type HeldPuts, type StoreFactory } from './fn-harness.js';

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

/** A value with every type the value codec carries. */
function everyType(): Record<string, unknown> {
  return {
    nil: null,
    missing: undefined,
    yes: true,
    int: 42,
    float: -1.5,
    negativeZero: -0,
    text: 'héllo ✓',
    list: [1, 'two', undefined, null, [3]],
    nested: { a: { b: { c: [new Date(5)] } } },
    date: new Date(1_700_000_123_456),
    invalidDate: new Date(NaN),
    big: 12345678901234567890n,
    negativeBig: -5n,
    map: new Map<unknown, unknown>([
      ['k', 1],
      [2, new Set(['x'])],
    ]),
    set: new Set([1, 'a', 3n]),
    bytes: new Uint8Array([1, 2, 3]),
    int16: new Int16Array([-1, 300]),
    float64: new Float64Array([0.25, Infinity]),
    bigU64: new BigUint64Array([2n ** 63n]),
    buffer: new Uint8Array([9, 8]).buffer,
    empty: {},
  };
}

export function defineStepsSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: steps (${name})`, () => {
    it('returns every codec type as is, on the first execution and on a replay after a sleep', async () => {
      const w = await fnWorld(factory);
      const seen: unknown[] = [];
      const calls = new Counter();
      const wf = defineWorkflow({
        name: 'types',
        async run(ctx) {
          const scalar = await ctx.step('undefined', () => undefined);
          const value = await ctx.step('every', () => {
            calls.hit('every');
            return everyType();
          });
          seen.push(value, scalar);
          await ctx.sleep(1000);
          return value;
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'types' });
      await sleeping(runtime, 'types');
      await w.advance(1000);
      const out = await resultOf(run);
      const expected = everyType();
      expect(out).toStrictEqual(expected);
      expect(seen).toHaveLength(4);
      // First execution (the stored copy, not the object the step returned) and replay alike.
      expect(seen[0]).toStrictEqual(expected);
      expect(seen[2]).toStrictEqual(expected);
      expect(seen[1]).toBeUndefined();
      expect(seen[3]).toBeUndefined();
      expect(Object.is((seen[2] as { negativeZero: number }).negativeZero, -0)).toBe(true);
      expect('missing' in (seen[2] as object)).toBe(true);
      expect(calls.get('every')).toBe(1);
    });

    it('refuses a value the codec cannot store: INVALID_ARGUMENT unstorable_step_value thrown into the workflow', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'unstorable',
        async run(ctx) {
          const caught: unknown[] = [];
          for (const [step, make] of [
            ['instance', () => new Point(1, 2)],
            ['function', () => () => 1],
            ['nested', () => ({ deep: [Symbol('s')] })],
          ] as const) {
            try {
              await ctx.step(step, make as () => unknown, { retries: 0 });
            } catch (e) {
              caught.push({ code: isTaqubaError(e) ? e.code : String(e), reason: reasonOf(e), step: (e as { details: { step: string } }).details.step, message: (e as Error).message });
            }
          }
          return caught;
        },
      });
      const runtime = w.start([wf]);
      const out = (await resultOf(await runtime.start(wf, undefined, { runId: 'u' }))) as { code: string; reason: string; step: string; message: string }[];
      expect(out.map((e) => [e.code, e.reason, e.step])).toEqual([
        ['INVALID_ARGUMENT', 'unstorable_step_value', 'instance'],
        ['INVALID_ARGUMENT', 'unstorable_step_value', 'function'],
        ['INVALID_ARGUMENT', 'unstorable_step_value', 'nested'],
      ]);
      expect(out[0]!.message).toMatch(/Point instance cannot be stored/);
      expect(out[1]!.message).toMatch(/function cannot be stored/);
    });

    it('an uncaught unstorable value fails the run: result() rejects RUN_FAILED with the error text', async () => {
      const w = await fnWorld(factory);
      let calls = 0;
      const wf = defineWorkflow({
        name: 'unstorable-uncaught',
        async run(ctx) {
          await ctx.step('instance', () => {
            calls++;
            return new Point(1, 2);
          });
          return 'unreachable';
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'uu' });
      const e = await rejection(resultOf(run));
      expect(e).toBeInstanceOf(RunFailedError);
      expect(e.code).toBe('RUN_FAILED');
      expect((e as unknown as RunFailedError).status).toBe('failed');
      expect((e as unknown as RunFailedError).error).toMatch(/^INVALID_ARGUMENT: step "instance" returned a value that cannot be stored/);
      // A codec refusal is not retried: retrying cannot make the value storable.
      expect(calls).toBe(1);
      expect(await run.status()).toMatchObject({ state: 'failed' });
    });

    it('refuses a value over the size cap (step_value_too_large), and stores one just under it', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'sizes',
        async run(ctx) {
          const fits = await ctx.step('fits', () => 'a'.repeat(MAX_KV_VALUE_SIZE - 2048));
          let reason: unknown;
          try {
            await ctx.step('huge', () => 'b'.repeat(MAX_KV_VALUE_SIZE));
          } catch (e) {
            reason = [isTaqubaError(e) ? e.code : e, reasonOf(e)];
          }
          await ctx.sleep(10);
          return { fits: fits.length, reason };
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'sz' });
      await sleeping(runtime, 'sz');
      await w.advance(10);
      expect(await resultOf(run)).toEqual({ fits: MAX_KV_VALUE_SIZE - 2048, reason: ['INVALID_ARGUMENT', 'step_value_too_large'] });
    });

    it('retries a throwing step with its backoff (MockClock) and passes the attempt number', async () => {
      const w = await fnWorld(factory);
      const at: { attempt: number; now: number }[] = [];
      const wf = defineWorkflow({
        name: 'retries',
        steps: { retries: 5, backoff: { initialMs: 1000, factor: 3, maxMs: 5000 } },
        async run(ctx) {
          return ctx.step(
            'flaky',
            ({ attempt }) => {
              at.push({ attempt, now: w.clock.now() });
              if (attempt < 4) throw new Error(`boom ${attempt}`);
              return attempt;
            },
            { retries: 3 },
          );
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'r' });
      const t0 = w.clock.now();
      await eventually(() => at.length === 1);
      await w.advance(1000);
      await eventually(() => at.length === 2);
      await w.advance(3000);
      await eventually(() => at.length === 3);
      // 9000 capped at maxMs 5000.
      await w.advance(5000);
      expect(await resultOf(run)).toBe(4);
      expect(at).toEqual([
        { attempt: 1, now: t0 },
        { attempt: 2, now: t0 + 1000 },
        { attempt: 3, now: t0 + 4000 },
        { attempt: 4, now: t0 + 9000 },
      ]);
    });

    it('timeoutMs aborts the attempt signal and counts as a failed attempt', async () => {
      const w = await fnWorld(factory);
      const signals: AbortSignal[] = [];
      const abortedOnReturn: boolean[] = [];
      const wf = defineWorkflow({
        name: 'timeouts',
        async run(ctx) {
          return ctx.step(
            'slow',
            ({ signal, attempt }: StepAttempt) => {
              signals.push(signal);
              if (attempt === 2) {
                abortedOnReturn.push(signal.aborted);
                return 'second';
              }
              return new Promise<string>(() => undefined);
            },
            { timeoutMs: 5000, retries: 1, backoff: { initialMs: 100 } },
          );
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 't' });
      await eventually(() => signals.length === 1);
      expect(signals[0]!.aborted).toBe(false);
      await w.advance(4999);
      expect(signals[0]!.aborted).toBe(false);
      await w.advance(1);
      await eventually(() => signals[0]!.aborted);
      expect(signals[0]!.reason).toMatchObject({ code: 'TIMEOUT' });
      await w.advance(100);
      expect(await resultOf(run)).toBe('second');
      expect(signals).toHaveLength(2);
      // The second attempt's signal was live while it ran (it is aborted once the attempt is over).
      expect(abortedOnReturn).toEqual([false]);
    });

    it('out of attempts: StepFailedError (STEP_FAILED) is caught for a compensation, and the same on replay without calling the step again', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const caught: unknown[] = [];
      const wf = defineWorkflow({
        name: 'compensate',
        async run(ctx, order: string) {
          const reserved = await ctx.step('reserve', () => {
            calls.hit('reserve');
            return `held ${order}`;
          });
          try {
            await ctx.step(
              'charge',
              ({ attempt }) => {
                calls.hit('charge');
                throw new TypeError(`card declined ${attempt}`);
              },
              { retries: 1, backoff: { initialMs: 10 } },
            );
            return 'charged';
          } catch (e) {
            caught.push(e);
            if (!(e instanceof StepFailedError)) throw e;
            await ctx.step('release', () => {
              calls.hit('release');
              return reserved;
            });
            await ctx.sleep(1000);
            return `compensated: ${e.message}`;
          }
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, 'o-1', { runId: 'c' });
      await eventually(() => calls.get('charge') === 1);
      await w.advance(10);
      await sleeping(runtime, 'c');
      await w.advance(1000);
      const out = await resultOf(run);
      expect(out).toBe('compensated: step "charge" failed after 2 attempts: TypeError: card declined 2');
      expect(calls.all()).toEqual({ charge: 2, release: 1, reserve: 1 });
      // The error the replay threw is the same typed error.
      expect(caught).toHaveLength(2);
      for (const e of caught) {
        expect(e).toBeInstanceOf(StepFailedError);
        expect(e).toMatchObject({ code: 'STEP_FAILED', stepName: 'charge', attempts: 2, lastError: 'TypeError: card declined 2' });
      }
    });

    it('an uncaught StepFailedError fails the run: result() rejects RUN_FAILED with the error text', async () => {
      const w = await fnWorld(factory);
      let calls = 0;
      const wf = defineWorkflow({
        name: 'uncaught',
        steps: { retries: 0 },
        async run(ctx) {
          await ctx.step('explode', () => {
            calls++;
            throw new Error('kaboom');
          });
          return 'no';
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'x' });
      const e = (await rejection(resultOf(run))) as unknown as RunFailedError;
      expect(e).toBeInstanceOf(RunFailedError);
      expect(e).toMatchObject({ code: 'RUN_FAILED', runId: 'x', status: 'failed', error: 'STEP_FAILED: step "explode" failed after 1 attempt: Error: kaboom' });
      expect(e.message).toContain('kaboom');
      expect(calls).toBe(1);
    });

    it('a delivery waiting for its step to be durable lends its worker slot: another run steps meanwhile, attempts never overlap', async () => {
      const w = await fnWorld(factory);
      const started: string[] = [];
      let running = 0;
      let most = 0;
      let held: HeldPuts | undefined;
      const wf = defineWorkflow({
        name: 'lends-slot',
        async run(ctx, id: string) {
          const value = await ctx.step('work', async () => {
            running++;
            most = Math.max(most, running);
            started.push(id);
            // The first attempt's value cannot become durable until the test says so.
            held ??= w.holdPuts();
            await Promise.resolve();
            running--;
            return id;
          });
          return `${value}!`;
        },
      });
      const submitter = w.runtime([wf]);
      await submitter.start(wf, 'a', { runId: 'a' });
      await submitter.start(wf, 'b', { runId: 'b' });
      // One slot: without lending it, the second run could not start while the first waits.
      const worker = w.start([wf], { maxConcurrentSteps: 1 });
      try {
        await eventually(() => started.length === 2, 10_000, 'the second run stepping while the first one\'s value is held');
      } finally {
        held?.release();
      }
      expect(await resultOf(worker.workflowRun(wf, 'a'))).toBe('a!');
      expect(await resultOf(worker.workflowRun(wf, 'b'))).toBe('b!');
      expect(most).toBe(1);
    });

    it('so does a delivery waiting for its recorded now() to be durable before the step that may use it', async () => {
      const w = await fnWorld(factory);
      const began: string[] = [];
      let held: HeldPuts | undefined;
      const wf = defineWorkflow({
        name: 'lends-slot-now',
        async run(ctx, id: string) {
          began.push(id);
          // The first run's recorded time cannot become durable until the test says so.
          held ??= w.holdPuts();
          const at = ctx.now();
          return ctx.step('work', () => `${id}@${at}`);
        },
      });
      const submitter = w.runtime([wf]);
      await submitter.start(wf, 'a', { runId: 'a' });
      await submitter.start(wf, 'b', { runId: 'b' });
      const worker = w.start([wf], { maxConcurrentSteps: 1 });
      try {
        await eventually(() => began.length === 2, 10_000, 'the second run starting while the first one\'s time is held');
      } finally {
        held?.release();
      }
      expect(await resultOf(worker.workflowRun(wf, 'a'))).toBe(`a@${START_MS}`);
      expect(await resultOf(worker.workflowRun(wf, 'b'))).toBe(`b@${START_MS}`);
    });
  });
}
