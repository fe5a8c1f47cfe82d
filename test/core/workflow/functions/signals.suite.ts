/**
 * `ctx.waitForSignal`: a signal sent before the wait is kept for it; one sent while it waits
 * wakes it; after the timeout the wait answers `{ timedOut: true }`; a signal for a run that has
 * ended or not started is answered `run-not-active` and kept for no later run; two waits of one name in sequence each get their
 * own signal; a second wait while one is pending is INVALID_ARGUMENT `concurrent_wait`; a raw
 * text payload (the CLI's) arrives as a string; a wait survives a restart.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../../src/core/bytes.js';
import { functionSignalKey } from '../../../../src/core/workflow/functions/signal-key.js';
import { defineWorkflow, type SignalResult } from '../../../../src/core/workflow/index.js';
import { signalBufferKey } from '../../../../src/core/workflow/keys.js';
import { Counter, deferred, fnWorld, Gates, reasonOf, resultOf, runState, waitingForSignal, type StoreFactory } from './fn-harness.js';

function approval(gates: Gates, calls: Counter, timeoutMs?: number) {
  return defineWorkflow({
    name: 'approval',
    async run(ctx, draft: string) {
      const text = await ctx.step('draft', () => (calls.hit('draft'), draft.toUpperCase()));
      await gates.hold('before wait');
      const answer = await ctx.waitForSignal<{ ok: boolean; by: string }>('approve', timeoutMs === undefined ? {} : { timeoutMs });
      const sent = await ctx.step('send', () => (calls.hit('send'), answer.timedOut ? 'expired' : answer.value.ok ? `sent ${text}` : 'rejected'));
      return { answer, sent };
    },
  });
}

export function defineSignalsSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: signals (${name})`, () => {
    it('a signal sent before the wait is kept for it', async () => {
      const w = await fnWorld(factory);
      const gates = new Gates();
      const calls = new Counter();
      const wf = approval(gates, calls, 60_000);
      gates.arm('before wait');
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, 'hi', { runId: 'a' });
      await gates.reached('before wait');
      expect(await runtime.signal('a', 'approve', { ok: true, by: 'ann' })).toBe('buffered');
      gates.release('before wait');
      expect(await resultOf(run)).toEqual({ answer: { timedOut: false, value: { ok: true, by: 'ann' } }, sent: 'sent HI' });
      expect(calls.all()).toEqual({ draft: 1, send: 1 });
    });

    it('a signal sent while the run waits wakes it', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = approval(new Gates(), calls, 60_000);
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, 'hi', { runId: 'b' });
      const parked = await waitingForSignal(runtime, 'b');
      expect(parked.waitingFor).toMatchObject({ type: 'signal', correlationKey: functionSignalKey('b', 'approve'), timeoutAt: w.clock.now() + 60_000 });
      expect(await run.status()).toMatchObject({ state: 'pending' });
      expect(await runtime.signal('b', 'approve', { ok: false, by: 'bob' })).toBe('delivered');
      expect(await resultOf(run)).toEqual({ answer: { timedOut: false, value: { ok: false, by: 'bob' } }, sent: 'rejected' });
      expect(calls.all()).toEqual({ draft: 1, send: 1 });
    });

    it('after the timeout the wait answers { timedOut: true }; a late signal is answered run-not-active and the finished run is untouched', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = approval(new Gates(), calls, 5000);
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, 'hi', { runId: 'c' });
      await waitingForSignal(runtime, 'c');
      await w.advance(4999);
      expect((await runtime.getRun('c'))?.state).toBe('waiting-for-signal');
      await w.advance(1);
      const out = await resultOf(run);
      expect(out).toEqual({ answer: { timedOut: true }, sent: 'expired' });
      expect(await runtime.signal('c', 'approve', { ok: true, by: 'late' })).toBe('run-not-active');
      expect(await resultOf(run)).toEqual(out);
      expect(await run.status()).toMatchObject({ state: 'succeeded' });
      expect(await runtime.listRuns()).toMatchObject({ runs: [] });
      expect(calls.all()).toEqual({ draft: 1, send: 1 });
    });

    it('two waits of one name in sequence each get their own signal', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'twice',
        async run(ctx) {
          const one = await ctx.waitForSignal<number>('next');
          const two = await ctx.waitForSignal<number>('next');
          return [one, two];
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 't' });
      const first = await waitingForSignal(runtime, 't');
      expect(await runtime.signal('t', 'next', 1)).toBe('delivered');
      await waitingForSignal(runtime, 't').then(async function again(d): Promise<unknown> {
        // The second wait is a later underlying step.
        return d.currentStep > first.currentStep ? d : waitingForSignal(runtime, 't').then(again);
      });
      expect(await runtime.signal('t', 'next', 2)).toBe('delivered');
      expect(await resultOf(run)).toEqual([
        { timedOut: false, value: 1 },
        { timedOut: false, value: 2 },
      ]);
    });

    it('a second wait begun while one is pending: INVALID_ARGUMENT concurrent_wait, and the run fails', async () => {
      const w = await fnWorld(factory);
      const caught: unknown[] = [];
      const wf = defineWorkflow({
        name: 'both',
        async run(ctx) {
          const a = ctx.waitForSignal<string>('a');
          const b = ctx.waitForSignal<string>('b').catch((e: unknown) => {
            caught.push(e);
            return null;
          });
          return [await b, await a];
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'cw' });
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'failed', error: expect.stringMatching(/^INVALID_ARGUMENT: a run waits for one signal at a time: "a" is still awaited when "b" is/) });
      expect(caught).toHaveLength(1);
      expect(caught[0]).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'concurrent_wait', signal: 'b' } });
      expect(reasonOf(caught[0])).toBe('concurrent_wait');
    });

    it('a second wait after a step while the first is pending: concurrent_wait', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'both-later',
        async run(ctx) {
          const a = ctx.waitForSignal<string>('a');
          await ctx.step('between', () => 1);
          await ctx.waitForSignal('b');
          return a;
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'cw2' });
      await expect(resultOf(run)).rejects.toMatchObject({ code: 'RUN_FAILED', error: expect.stringContaining('"a" is still awaited when "b" is') });
    });

    it('a wait after another one was answered is fine', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'after-answer',
        async run(ctx) {
          const a = await ctx.waitForSignal<string>('a', { timeoutMs: 100 });
          const b = await ctx.waitForSignal<string>('b');
          return [a, b];
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'aa' });
      await waitingForSignal(runtime, 'aa');
      await w.advance(100);
      await runState(runtime, 'aa', (d) => d.state === 'waiting-for-signal' && d.currentStep === 2, 'the second wait');
      await runtime.signal('aa', 'b', 'B');
      expect(await resultOf(run)).toEqual([{ timedOut: true }, { timedOut: false, value: 'B' }]);
    });

    it('a raw text payload sent to the correlation key arrives as the string; bytes that are not text arrive as bytes', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'raw',
        async run(ctx) {
          const text = await ctx.waitForSignal<string>('text');
          const bytes = await ctx.waitForSignal<Uint8Array>('bytes');
          return [text, bytes];
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'raw' });
      expect(await runtime.signal(functionSignalKey('raw', 'text'), utf8('yes'))).toBe('buffered');
      expect(await runtime.signal(functionSignalKey('raw', 'bytes'), new Uint8Array([0xff, 0xfe]))).toBe('buffered');
      const [text, bytes] = (await resultOf(run)) as [SignalResult<string>, SignalResult<Uint8Array>];
      expect(text).toEqual({ timedOut: false, value: 'yes' });
      expect(bytes).toEqual({ timedOut: false, value: new Uint8Array([0xff, 0xfe]) });
    });

    it('signal values of every codec type arrive as sent; an unstorable one is refused with INVALID_ARGUMENT', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'typed-signal',
        async run(ctx) {
          return ctx.waitForSignal('v');
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'v' });
      await expect(runtime.signal('v', 'v', () => 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unstorable_signal_value' } });
      const value = { m: new Map([[1n, new Set([new Date(3)])]]), u: undefined, f: new Float32Array([1.5]) };
      await runtime.signal('v', 'v', value);
      expect(await resultOf(run)).toStrictEqual({ timedOut: false, value });
    });

    // Like start and cancel: a bad value or run id is a rejection, not a synchronous throw.
    it('signal(runId, name, unstorable) rejects rather than throwing synchronously', async () => {
      const w = await fnWorld(factory);
      const runtime = w.runtime([defineWorkflow({ name: 'x', run: async () => 1 })]);
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = runtime.signal('v', 'v', () => 1))).not.toThrow();
      await expect(promise).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('a wait survives a restart: the signal sent to the new process wakes it, nothing before it runs again', async () => {
      const w = await fnWorld(factory);
      const calls = new Counter();
      const wf = approval(new Gates(), calls);
      const first = w.start([wf]);
      await first.start(wf, 'hi', { runId: 'r' });
      await waitingForSignal(first, 'r');
      await w.restart();
      const second = w.start([wf]);
      expect(await second.signal('r', 'approve', { ok: true, by: 'cli' })).toBe('delivered');
      expect(await resultOf(second.workflowRun(wf, 'r'))).toEqual({ answer: { timedOut: false, value: { ok: true, by: 'cli' } }, sent: 'sent HI' });
      expect(calls.all()).toEqual({ draft: 1, send: 1 });
    });

    // A signal is kept only for an active run: one sent after the run ended would otherwise wait
    // under `<runId>#<name>` for a new run under the same id (the default runIdReuse 'after-finish').
    it('a signal sent after a run ended is not kept for a new run under the same id', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'reused',
        async run(ctx, n: number) {
          return { n, answer: await ctx.waitForSignal<string>('go', { timeoutMs: 1000 }) };
        },
      });
      const runtime = w.start([wf]);
      const first = await runtime.start(wf, 1, { runId: 'reused' });
      await waitingForSignal(runtime, 'reused');
      await w.advance(1000);
      expect(await resultOf(first)).toEqual({ n: 1, answer: { timedOut: true } });
      expect(await runtime.signal('reused', 'go', 'for the first run')).toBe('run-not-active');
      const second = await runtime.start(wf, 2, { runId: 'reused' });
      // The new run waits for its own signal (it does not end at once with the stale one).
      const first2 = await Promise.race([resultOf(second), waitingForSignal(runtime, 'reused').then(() => 'waiting')]);
      expect(first2).toBe('waiting');
      expect(await runtime.signal('reused', 'go', 'for the second run')).toBe('delivered');
      expect(await resultOf(second)).toEqual({ n: 2, answer: { timedOut: false, value: 'for the second run' } });
    });

    it('a signal sent while the run\'s ending commits waits for it: not kept, not left for a later run', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({ name: 'quick', run: async () => 'done' });
      // Hold the ending's settlement: the ending has read what it deletes (no buffered signal yet).
      const ackReached = deferred();
      const ackRelease = deferred();
      const ack = w.queue.ackWith.bind(w.queue);
      w.queue.ackWith = async (claim, effects) => {
        ackReached.resolve();
        await ackRelease.promise;
        return ack(claim, effects);
      };
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'racy' });
      await ackReached.promise;
      const sent = runtime.signal('racy', 'go', 'while ending');
      await new Promise((resolve) => setTimeout(resolve, 20));
      ackRelease.resolve();
      expect(await sent).toBe('run-not-active');
      expect(await resultOf(run)).toBe('done');
      expect(await w.queue.kvGet(signalBufferKey(functionSignalKey('racy', 'go')))).toBeUndefined();
    });

    it('a signal for a run id with no run yet is not kept: start first, then signal (before the wait is fine)', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'early',
        async run(ctx) {
          return ctx.waitForSignal<string>('go');
        },
      });
      const runtime = w.start([wf]);
      expect(await runtime.signal('early', 'go', 'too early')).toBe('run-not-active');
      expect(await runtime.signal(functionSignalKey('early', 'go'), utf8('too early'))).toBe('run-not-active');
      const run = await runtime.start(wf, undefined, { runId: 'early' });
      await waitingForSignal(runtime, 'early');
      expect(await runtime.signal('early', 'go', 'now')).toBe('delivered');
      expect(await resultOf(run)).toEqual({ timedOut: false, value: 'now' });
    });

    it('a sleep and a wait at once: the sleep waking first does not end the wait', async () => {
      const w = await fnWorld(factory);
      const wf = defineWorkflow({
        name: 'race',
        async run(ctx) {
          const slept = ctx.sleep(1000).then(() => 'slept');
          const answer = ctx.waitForSignal<string>('s', { timeoutMs: 10_000 });
          return Promise.all([slept, answer]);
        },
      });
      const runtime = w.start([wf]);
      const run = await runtime.start(wf, undefined, { runId: 'sw' });
      await waitingForSignal(runtime, 'sw');
      await w.advance(1000);
      const again = await waitingForSignal(runtime, 'sw');
      expect(again.currentStep).toBe(2);
      await runtime.signal('sw', 's', 'hello');
      expect(await resultOf(run)).toEqual(['slept', { timedOut: false, value: 'hello' }]);
    });
  });
}
