/** Basic flow and submission, as a reusable suite over any store factory. */
import { describe, expect, it } from 'vitest';
import { MAX_KV_VALUE_SIZE } from '../../../src/core/queue/index.js';
import { NoopTerminalHook, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, eventually, makeHarness, QUEUE, RecordingHook, s, type StoreFactory } from './harness.js';

const echo = async (step: Step) => StepOutcome.succeed(step.payload);

export function defineWorkflowBasicsSuite(name: string, factory: StoreFactory): void {
  describe(`workflow basics (${name})`, () => {
    describe('flow', () => {
      it('a single step succeeds: the hook gets the result at final step 0 and status is null afterwards', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(echo, hook);
        const submitted = await runtime.submit({ input: b('hello') });
        expect(submitted.newlySubmitted).toBe(true);
        const outcome = await hook.first();
        expect(outcome).toMatchObject({ runId: submitted.runId, status: 'succeeded', error: null, finalStep: 0 });
        expect(s(outcome.result!)).toBe('hello');
        expect(runtime.status(submitted.runId)).toBeNull();
        expect(await h.queue.kvGet(b(`workflow/runs/${submitted.runId}`))).toBeUndefined();
        expect(await h.queue.kvGet(b(`workflow/steps/${submitted.runId}`))).toBeUndefined();
      });

      it('chains continue outcomes through steps 0..2 with each payload as the next input', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const seen: string[] = [];
        const { runtime } = h.start(async (step) => {
          seen.push(`${step.stepNumber}:${s(step.payload)}`);
          return step.stepNumber < 2 ? StepOutcome.continueNow(b(`${s(step.payload)}+`)) : StepOutcome.succeed(step.payload);
        }, hook);
        await runtime.submit({ input: b('x') });
        const outcome = await hook.first();
        expect(outcome.finalStep).toBe(2);
        expect(s(outcome.result!)).toBe('x++');
        expect(seen).toEqual(['0:x', '1:x+', '2:x++']);
      });

      it('continueAfter holds the next step scheduled until the clock passes the delay', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async (step) => (step.stepNumber === 0 ? StepOutcome.continueAfter(b('later'), 10_000) : StepOutcome.succeed(step.payload)), hook);
        const { runId } = await runtime.submit({});
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        expect(runtime.status(runId)).toMatchObject({ state: 'pending', currentStep: 1 });
        await h.advance(9_999);
        // The step is not due: it is still scheduled (nothing promoted it), so nothing can run it.
        expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, pending: 0, claimed: 0 });
        expect(hook.outcomes).toHaveLength(0);
        await h.advance(1);
        expect((await hook.first()).finalStep).toBe(1);
      });

      it('extends the lease through step.lease (the queue sees the new expiry)', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        let observed: number | undefined;
        let wanted = 0;
        const { runtime } = h.start(async (step) => {
          step.lease.ensureAtLeast(120_000);
          wanted = h.clock.now() + 120_000;
          observed = h.queue.leaseExpiry(QUEUE, step.jobId);
          return StepOutcome.succeed(new Uint8Array(0));
        }, hook);
        await runtime.submit({});
        await hook.first();
        expect(observed).toBeGreaterThanOrEqual(wanted);
      });

      it('gives the step the attempt limit of the run (maxAttemptsPerStep) and of the runtime default', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const seen: [number, number][] = [];
        const { runtime } = h.start(async (step) => {
          seen.push([step.attempt, step.maxAttempts]);
          return step.stepNumber === 0 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload);
        }, hook, { stepMaxAttempts: 4 });
        await runtime.submit({ maxAttemptsPerStep: 7 });
        await hook.waitFor(1);
        await runtime.submit({});
        await hook.waitFor(2);
        expect(seen).toEqual([
          [1, 7],
          [1, 7],
          [1, 4],
          [1, 4],
        ]);
      });

      it('keeps step 0 scheduled until runAt', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(echo, hook);
        await runtime.submit({ runAt: h.clock.now() + 5_000 });
        expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, pending: 0 });
        await h.advance(4_999);
        // The step is not due: it is still scheduled (nothing promoted it), so nothing can run it.
        expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, pending: 0, claimed: 0 });
        expect(hook.outcomes).toHaveLength(0);
        await h.advance(1);
        await hook.first();
      });

      it('threads user headers to every step and the hook; reserved headers never reach either', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const stepHeaders: Record<string, string>[] = [];
        const { runtime } = h.start(async (step) => {
          stepHeaders.push({ ...step.headers });
          return step.stepNumber === 0 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload);
        }, hook);
        await runtime.submit({ headers: { trace_id: 't-1', tenant: 'acme' } });
        const outcome = await hook.first();
        expect(outcome.headers).toEqual({ trace_id: 't-1', tenant: 'acme' });
        expect(stepHeaders).toEqual([outcome.headers, outcome.headers]);
      });

      it('resumes at the next step after a restart (the new runtime never runs step 0)', async () => {
        const h = await makeHarness(factory);
        const { runtime } = h.start(async (step) => StepOutcome.continueAfter(b(`after-${step.stepNumber}`), 10_000), new NoopTerminalHook());
        const { runId } = await runtime.submit({ runId: 'restart-1', input: b('start') });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        await h.restart();
        const hook = new RecordingHook();
        const steps: number[] = [];
        const b2 = h.start(async (step) => {
          steps.push(step.stepNumber);
          return StepOutcome.succeed(step.payload);
        }, hook);
        expect(b2.runtime.status(runId)).toBeNull(); // not seen by this process yet
        await h.advance(10_000);
        const outcome = await hook.first();
        expect(steps).toEqual([1]);
        expect(outcome).toMatchObject({ runId, finalStep: 1 });
        expect(s(outcome.result!)).toBe('after-0');
      });
    });

    describe('submission', () => {
      it('answers an in-process duplicate with the same job; a different input is INPUT_MISMATCH', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(echo, new NoopTerminalHook());
        const first = await runtime.submit({ runId: 'dup-1', input: b('a') });
        const again = await runtime.submit({ runId: 'dup-1', input: b('a') });
        expect(again).toEqual({ runId: 'dup-1', newlySubmitted: false, jobId: first.jobId });
        await expect(runtime.submit({ runId: 'dup-1', input: b('b') })).rejects.toMatchObject({ code: 'INPUT_MISMATCH', name: 'InputMismatchError' });
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 1 });
      });

      it('answers a duplicate known only from the durable record with the current step job', async () => {
        const h = await makeHarness(factory);
        const a = h.start(async (step) => (step.stepNumber === 0 ? StepOutcome.continueAfter(step.payload, 60_000) : StepOutcome.succeed(step.payload)), new NoopTerminalHook());
        const first = await a.runtime.submit({ runId: 'durable-dup', input: b('in') });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        const scheduled = (await h.queue.listJobs(QUEUE, 'scheduled')).jobs[0];
        // A second runtime on the same queue has an empty registry.
        const other = h.runtime(echo, new NoopTerminalHook());
        const dup = await other.submit({ runId: 'durable-dup', input: b('in') });
        expect(dup).toEqual({ runId: 'durable-dup', newlySubmitted: false, jobId: scheduled.id });
        expect(dup.jobId).not.toBe(first.jobId);
        await expect(other.submit({ runId: 'durable-dup', input: b('other') })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
      });

      it('stays idempotent across a restart; a different input is still a mismatch', async () => {
        const h = await makeHarness(factory);
        const first = await h.runtime(echo, new NoopTerminalHook()).submit({ runId: 'restart-dup', input: b('same') });
        await h.restart();
        const runtime = h.runtime(echo, new NoopTerminalHook());
        expect(await runtime.submit({ runId: 'restart-dup', input: b('same') })).toEqual({ runId: 'restart-dup', newlySubmitted: false, jobId: first.jobId });
        await expect(runtime.submit({ runId: 'restart-dup', input: b('changed') })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
      });

      it('rejects reserved headers and reserved or oversized KV writes before writing anything', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(echo, new NoopTerminalHook());
        await expect(runtime.submit({ headers: { 'workflow.step': '3' } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'reserved_header' } });
        await expect(runtime.submit({ kvWrites: [['workflow/runs/x', b('1')]] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'reserved_kv_key' } });
        await expect(runtime.submit({ kvWrites: [['app/big', new Uint8Array(MAX_KV_VALUE_SIZE + 1)]] })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: { reason: 'kv_value_too_large' },
        });
        await expect(runtime.submit({ priority: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, scheduled: 0 });
      });

      it('applies kvWrites with a new submission only (a duplicate drops its writes)', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(echo, new NoopTerminalHook());
        await runtime.submit({ runId: 'kv-1', kvWrites: new Map([['app/status', b('received')]]) });
        expect(s((await h.queue.kvGet(b('app/status')))!)).toBe('received');
        await runtime.submit({ runId: 'kv-1', kvWrites: [['app/status', b('overwritten')], ['app/other', b('x')]] });
        expect(s((await h.queue.kvGet(b('app/status')))!)).toBe('received');
        expect(await h.queue.kvGet(b('app/other'))).toBeUndefined();
      });

      it('rejects invalid run ids and accepts one of 128 characters', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(echo, new NoopTerminalHook());
        for (const runId of ['', 'run/1', 'run 1', 'run:1', 'x'.repeat(129)]) {
          await expect(runtime.submit({ runId }), runId).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });
        }
        expect((await runtime.submit({ runId: 'y'.repeat(128) })).newlySubmitted).toBe(true);
      });

      it('draws a time-ordered run id when none is given, and releases per-run-id locks afterwards', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(echo, new NoopTerminalHook());
        const results = await Promise.all([runtime.submit({}), runtime.submit({}), runtime.submit({ runId: 'same' }), runtime.submit({ runId: 'same' })]);
        expect(results[0].runId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(results[0].runId < results[1].runId).toBe(true);
        expect(results.filter((r) => r.runId === 'same' && r.newlySubmitted)).toHaveLength(1);
        expect(runtime.submitLocksInUse).toBe(0);
      });

      it('starts a new run under a released id once the previous run terminated', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(echo, hook);
        expect((await runtime.submit({ runId: 'reuse', input: b('one') })).newlySubmitted).toBe(true);
        await hook.waitFor(1);
        expect((await runtime.submit({ runId: 'reuse', input: b('two') })).newlySubmitted).toBe(true);
        const outcomes = await hook.waitFor(2);
        expect(outcomes.map((o) => s(o.result!))).toEqual(['one', 'two']);
      });
    });
  });
}
