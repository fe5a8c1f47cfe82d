/** Durable signals, as a reusable suite over any store factory. */
import { describe, expect, it } from 'vitest';
import { StepError, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, eventually, kvKeys, makeHarness, QUEUE, RecordingHook, s, type StoreFactory } from './harness.js';

const TIMEOUT = 60_000;

/** Step 0 waits on `key`; step 1 reports what it got (`timeout` when no signal arrived). */
function waiter(key: (step: Step) => string, seen: (string | null)[] = []) {
  return async (step: Step) => {
    if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, key(step), TIMEOUT);
    seen.push(step.signalPayload && s(step.signalPayload));
    return StepOutcome.succeed(step.signalPayload ?? b('timeout'));
  };
}

export function defineWorkflowSignalsSuite(name: string, factory: StoreFactory): void {
  describe(`workflow signals (${name})`, () => {
    it('a signal wakes a waiting run early; index and buffer are cleared', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'approval:1'), hook);
      const { runId } = await runtime.submit({});
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/approval:1'))) !== undefined);
      expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, claimed: 0 });
      expect(await runtime.signal('approval:1', b('yes'))).toBe('delivered');
      const outcome = await hook.first();
      expect(outcome).toMatchObject({ runId, status: 'succeeded', finalStep: 1 });
      expect(s(outcome.result!)).toBe('yes');
      expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
    });

    it('a wait survives a restart and is delivered afterwards', async () => {
      const h = await makeHarness(factory);
      const a = h.start(waiter(() => 'k-restart'), new RecordingHook());
      const { runId } = await a.runtime.submit({ runId: 'waits' });
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/k-restart'))) !== undefined);
      await h.restart();
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'k-restart'), hook);
      expect(await runtime.signal('k-restart', b('after restart'))).toBe('delivered');
      const outcome = await hook.first();
      expect(outcome.runId).toBe(runId);
      expect(s(outcome.result!)).toBe('after restart');
    });

    it('a wait that times out runs the next step with no signal and clears the index', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const seen: (string | null)[] = [];
      const { runtime } = h.start(waiter(() => 'k-timeout', seen), hook);
      await runtime.submit({});
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/k-timeout'))) !== undefined);
      await h.advance(TIMEOUT - 1);
      // The timeout is not due: the waiting step is still scheduled, so nothing can run it.
      expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, pending: 0, claimed: 0 });
      expect(hook.outcomes).toHaveLength(0);
      await h.advance(1);
      expect(s((await hook.first()).result!)).toBe('timeout');
      expect(seen).toEqual([null]);
      expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
    });

    it('a signal sent before the waiter is buffered and consumed at registration (no wait)', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'early'), hook);
      expect(await runtime.signal('early', b('first'))).toBe('buffered');
      expect(await runtime.signal('early', b('second'))).toBe('buffered'); // replaces the first
      await runtime.submit({});
      expect(s((await hook.first()).result!)).toBe('second');
      expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 0 });
      expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
    });

    it('clearSignal discards a buffered signal (true), then finds none (false)', async () => {
      const h = await makeHarness(factory);
      const runtime = h.runtime(waiter(() => 'c'), new RecordingHook());
      await runtime.signal('c', b('x'));
      expect(await runtime.clearSignal('c')).toBe(true);
      expect(await runtime.clearSignal('c')).toBe(false);
      await expect(runtime.signal('', b('x'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('a second waiter on a live key fails its own run; the first waiter keeps waiting', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'shared'), hook);
      const first = await runtime.submit({ runId: 'first' });
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/shared'))) !== undefined);
      const second = await runtime.submit({ runId: 'second' });
      const outcome = await hook.first();
      expect(outcome).toMatchObject({ runId: second.runId, status: 'failed', finalStep: 0 });
      expect(outcome.error).toContain('already registered');
      expect(await h.queue.getJob(second.jobId)).toMatchObject({ status: 'dead' });
      expect(await h.queue.kvGet(b('workflow/runs/second'))).toBeUndefined();
      expect(await h.queue.kvGet(b('workflow/runs/first'))).toBeDefined();
      expect(runtime.status(first.runId)).toMatchObject({ state: 'pending', currentStep: 1 });
      expect(await runtime.signal('shared', b('go'))).toBe('delivered');
      expect((await hook.waitFor(2))[1]).toMatchObject({ runId: 'first', status: 'succeeded' });
    });

    it('a signal that missed the wake (buffered while the wait was due) is delivered at the timeout', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'late'), hook);
      await runtime.submit({});
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/late'))) !== undefined);
      // The race this covers: the payload lands in the buffer after the waiter stopped being
      // wakeable. Put it there directly, as the losing side of that race would.
      await h.queue.kvPut(b('workflow/signal-buf/late'), b('raced'));
      await h.advance(TIMEOUT);
      expect(s((await hook.first()).result!)).toBe('raced');
      expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
    });

    it('a cancelled waiter leaves a stale index that the next signal cleans up (buffered)', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(waiter(() => 'gone'), hook);
      const { runId } = await runtime.submit({});
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/gone'))) !== undefined);
      expect(await runtime.cancel(runId)).toBe(true);
      expect((await hook.first()).status).toBe('cancelled');
      expect(await h.queue.kvGet(b('workflow/signal-wait/gone'))).toBeDefined();
      expect(await runtime.signal('gone', b('nobody'))).toBe('buffered');
      expect(await h.queue.kvGet(b('workflow/signal-wait/gone'))).toBeUndefined();
      expect(s((await h.queue.kvGet(b('workflow/signal-buf/gone')))!)).toBe('nobody');
    });

    it('a woken step sees the same signal on every redelivery', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const seen: (string | null)[] = [];
      const { runtime } = h.start(async (step) => {
        if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, 'redeliver', TIMEOUT);
        seen.push(step.signalPayload && s(step.signalPayload));
        if (step.attempt < 3) throw StepError.transient('again');
        return StepOutcome.succeed(step.signalPayload!);
      }, hook);
      await runtime.submit({ maxAttemptsPerStep: 3 });
      await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/redeliver'))) !== undefined);
      await runtime.signal('redeliver', b('stable'));
      await hook.first();
      expect(seen).toEqual(['stable', 'stable', 'stable']);
    });

    it('a buffered signal consumed at registration is seen on every redelivery and deleted with the ack', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const seen: (string | null)[] = [];
      const { runtime } = h.start(async (step) => {
        if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, 'pre', TIMEOUT);
        seen.push(step.signalPayload && s(step.signalPayload));
        if (step.attempt < 2) throw StepError.transient('again');
        return StepOutcome.succeed(step.signalPayload!);
      }, hook);
      await runtime.signal('pre', b('early bird'));
      await runtime.submit({ maxAttemptsPerStep: 3 });
      await hook.first();
      expect(seen).toEqual(['early bird', 'early bird']);
      expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
    });

    it('a waiting run holds no worker: other runs proceed with concurrency 1', async () => {
      const h = await makeHarness(factory);
      const hook = new RecordingHook();
      const { runtime } = h.start(async (step) => {
        if (step.runId.startsWith('wait') && step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, step.runId, TIMEOUT);
        return StepOutcome.succeed(step.payload);
      }, hook, { maxConcurrentSteps: 1 });
      await runtime.submit({ runId: 'wait-1' });
      await runtime.submit({ runId: 'wait-2' });
      await runtime.submit({ runId: 'free-1' });
      expect((await hook.first()).runId).toBe('free-1');
      expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 2, claimed: 0 });
    });
  });
}
