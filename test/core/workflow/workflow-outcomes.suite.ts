/** Outcomes, failures and external cancellation, as a reusable suite over any store factory. */
import { describe, expect, it } from 'vitest';
import { decodeRecord } from '../../../src/core/codec.js';
import { NoopTerminalHook, StepError, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, kvKeys, makeHarness, QUEUE, RecordingHook, s, type StoreFactory } from './harness.js';

export function defineWorkflowOutcomesSuite(name: string, factory: StoreFactory): void {
  describe(`workflow outcomes and cancellation (${name})`, () => {
    describe('outcomes and failures', () => {
      it('a permanent error dead-letters the step and fails the run with the message', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        let calls = 0;
        const { runtime } = h.start(async () => {
          calls++;
          throw StepError.permanent('bad input');
        }, hook);
        const { runId, jobId } = await runtime.submit({ maxAttemptsPerStep: 5 });
        expect(await hook.first()).toMatchObject({ runId, status: 'failed', error: 'bad input', finalStep: 0, result: null });
        expect(calls).toBe(1);
        expect(await h.queue.getJob(jobId)).toMatchObject({ status: 'dead', lastError: 'bad input' });
        expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeUndefined();
      });

      it('a library error with a permanent code counts as permanent; a plain error as transient', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const calls: Record<string, number> = {};
        const { runtime } = h.start(async (step) => {
          calls[step.runId] = (calls[step.runId] ?? 0) + 1;
          if (step.runId === 'lib') step.effects.put('workflow/nope', b('x'));
          throw new Error('flaky');
        }, hook);
        await runtime.submit({ runId: 'lib', maxAttemptsPerStep: 3 });
        await runtime.submit({ runId: 'plain', maxAttemptsPerStep: 3 });
        const outcomes = await hook.waitFor(2);
        expect(calls).toEqual({ lib: 1, plain: 3 });
        expect(outcomes.find((o) => o.runId === 'lib')!.error).toContain('reserved prefix');
        expect(outcomes.find((o) => o.runId === 'plain')!.error).toBe('flaky');
      });

      it('fail terminates the run without a dead-letter', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async () => StepOutcome.fail('not eligible'), hook);
        await runtime.submit({});
        expect(await hook.first()).toMatchObject({ status: 'failed', error: 'not eligible' });
        expect((await h.queue.stats(QUEUE)).dead).toBe(0);
      });

      it('a runner cancel terminates the run cancelled with its reason, without a dead-letter', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async () => StepOutcome.cancel('user gave up'), hook);
        await runtime.submit({});
        expect(await hook.first()).toMatchObject({ status: 'cancelled', error: 'user gave up' });
        expect((await h.queue.stats(QUEUE)).dead).toBe(0);
      });

      for (const attempts of [1, 3]) {
        it(`retries a transient error exactly ${attempts} time(s), then fails once with one marker`, async () => {
          const h = await makeHarness(factory);
          const hook = new RecordingHook();
          let calls = 0;
          const { runtime } = h.start(async () => {
            calls++;
            throw StepError.transient(`attempt ${calls} failed`);
          }, hook, { memoRetentionMs: 60_000 });
          const { runId, jobId } = await runtime.submit({ maxAttemptsPerStep: attempts });
          expect(await hook.first()).toMatchObject({ status: 'failed', error: `attempt ${attempts} failed` });
          await h.stopRuntimes(); // in-flight work finished: the counts below are final
          expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
          expect(calls).toBe(attempts);
          expect(hook.calls).toBe(1);
          expect(await h.queue.getJob(jobId)).toMatchObject({ status: 'dead', attempts });
          expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeUndefined();
          expect(await kvKeys(h.queue, 'workflow/terminals/')).toHaveLength(1);
        });
      }

      it('a memo written by attempt 1 is read back by attempt 2', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const reads: (string | null)[] = [];
        const { runtime } = h.start(async (step) => {
          const cached = await step.memo.get('draft');
          reads.push(cached && s(cached));
          if (step.attempt === 1) {
            await step.memo.put('draft', b('expensive'));
            throw StepError.transient('crashed after the call');
          }
          return StepOutcome.succeed(cached!);
        }, hook);
        await runtime.submit({ maxAttemptsPerStep: 2 });
        expect(s((await hook.first()).result!)).toBe('expensive');
        expect(reads).toEqual([null, 'expensive']);
      });

      // Issue #12: a bit-flipped memo entry decoded to a different value without any error.
      it('a memo entry corrupted between attempts is recomputed; the logger names the object and the new value is stored', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const warnings: string[] = [];
        let computes = 0;
        let damaged = '';
        const { runtime } = h.start(async (step) => {
          const value = await step.memo.memoized('draft', () => `draft ${++computes}`);
          if (step.attempt === 1) {
            // Damage the entry as a bad disk would: the last value byte, '1' -> '3', which the
            // unframed layout decoded as "draft 3".
            for await (const info of h.store.list('workflow-memo/memos/')) damaged = info.key;
            const bad = (await h.store.get(damaged))!.data.slice();
            bad[bad.length - 5] ^= 0x02;
            await h.store.put(damaged, bad);
            throw StepError.transient('crashed after the call');
          }
          return StepOutcome.succeed(b(value));
        }, hook, { logger: { warn: (message) => void warnings.push(message) } });
        const { runId } = await runtime.submit({ maxAttemptsPerStep: 2 });
        expect(s((await hook.first()).result!)).toBe('draft 2');
        expect(computes).toBe(2);
        expect(damaged).not.toBe('');
        expect(warnings.filter((w) => w.includes('memo entry is corrupt') && w.includes(`object=${damaged}`))).toHaveLength(1);
        const stored = await runtime.memoStore.newMemo(runId, 0).get('draft');
        expect(decodeRecord(stored!)).toBe('draft 2');
      });

      it('a malformed outcome fails the run permanently', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async () => ({ type: 'succeed', result: 'not bytes' }) as never, hook);
        await runtime.submit({ maxAttemptsPerStep: 3 });
        const outcome = await hook.first();
        expect(outcome.status).toBe('failed');
        expect(outcome.error).toContain('result must be a Uint8Array');
      });
    });

    describe('cancellation', () => {
      it('cancelling a pending step removes it and commits the termination with the removal', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const runtime = h.runtime(async () => StepOutcome.succeed(new Uint8Array(0)), hook, { memoRetentionMs: 60_000 });
        const { runId, jobId } = await runtime.submit({ headers: { who: 'me' } });
        expect(await runtime.cancel(runId)).toBe(true);
        expect(runtime.status(runId)).toBeNull();
        expect(await h.queue.getJob(jobId)).toBeUndefined();
        expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeUndefined();
        expect(await h.queue.kvGet(b(`workflow/steps/${runId}`))).toBeUndefined();
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([expect.stringContaining(runId)]);
        // The notification is the only claimable job.
        const claims = await h.queue.claimBatch(QUEUE, 10, 30_000);
        expect(claims).toHaveLength(1);
        expect(claims[0].job.headers['workflow.terminal']).toBe('1');
        await h.queue.nack(claims[0], 'released for the worker');
        h.start(async () => StepOutcome.succeed(new Uint8Array(0)), hook);
        expect(await hook.first()).toMatchObject({ runId, status: 'cancelled', error: null, headers: { who: 'me' }, finalStep: 0 });
        expect((await h.queue.stats(QUEUE)).dead).toBe(0);
      });

      it('a running step is cancelled: its succeed is discarded; cancelling shows meanwhile; no marker until it settles', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const entered = deferred();
        const release = deferred();
        let sawAbort = false;
        const { runtime } = h.start(async (step) => {
          entered.resolve();
          await release.promise;
          sawAbort = step.signal.aborted;
          step.effects.put('app/should-not-exist', b('1'));
          return StepOutcome.succeed(b('discarded'));
        }, hook, { memoRetentionMs: 60_000 });
        const { runId } = await runtime.submit({});
        await entered.promise;
        expect(await runtime.cancel(runId)).toBe(true);
        expect(runtime.status(runId)).toMatchObject({ state: 'cancelling', currentStep: 0 });
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([]);
        expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeDefined();
        release.resolve();
        expect(await hook.first()).toMatchObject({ status: 'cancelled', error: null, result: null });
        expect(sawAbort).toBe(true);
        expect(await h.queue.kvGet(b('app/should-not-exist'))).toBeUndefined();
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toHaveLength(1);
        expect(runtime.status(runId)).toBeNull();
      });

      for (const kind of ['permanent', 'transient'] as const) {
        it(`a cancel suppresses a ${kind} runner error: one call, no retry, no dead job`, async () => {
          const h = await makeHarness(factory);
          const hook = new RecordingHook();
          const entered = deferred();
          const release = deferred();
          let calls = 0;
          const { runtime } = h.start(async () => {
            calls++;
            entered.resolve();
            await release.promise;
            throw kind === 'permanent' ? StepError.permanent('boom') : StepError.transient('boom');
          }, hook);
          const { runId } = await runtime.submit({ maxAttemptsPerStep: 5 });
          await entered.promise;
          await runtime.cancel(runId);
          release.resolve();
          expect(await hook.first()).toMatchObject({ status: 'cancelled', error: null });
          await h.stopRuntimes(); // in-flight work finished: the counts below are final
          expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
          expect(calls).toBe(1);
          expect(await h.queue.stats(QUEUE)).toMatchObject({ dead: 0, pending: 0, scheduled: 0 });
        });
      }

      it('a step watching step.signal returns at once, and its own cancel reason wins', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const entered = deferred();
        const { runtime } = h.start(async (step) => {
          entered.resolve();
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 30_000); // a guard only: the abort below ends the wait
            step.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              resolve();
            });
          });
          return StepOutcome.cancel('cooperative');
        }, hook);
        const { runId } = await runtime.submit({});
        await entered.promise;
        const started = Date.now();
        await runtime.cancel(runId);
        expect(await hook.first()).toMatchObject({ status: 'cancelled', error: 'cooperative' });
        expect(Date.now() - started).toBeLessThan(5_000);
      });

      it('a second cancel returns false and only one notification exists', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const runtime = h.runtime(async () => StepOutcome.succeed(new Uint8Array(0)), hook);
        const { runId } = await runtime.submit({});
        expect(await runtime.cancel(runId)).toBe(true);
        expect(await runtime.cancel(runId)).toBe(false);
        expect((await h.queue.stats(QUEUE)).pending).toBe(1);
        h.start(async () => StepOutcome.succeed(new Uint8Array(0)), hook);
        await hook.waitFor(1);
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(hook.calls).toBe(1);
      });

      it('cancel of an unknown or terminated run returns false', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async () => StepOutcome.succeed(new Uint8Array(0)), hook);
        expect(await runtime.cancel('never-submitted')).toBe(false);
        const { runId } = await runtime.submit({});
        await hook.first();
        expect(await runtime.cancel(runId)).toBe(false);
        await expect(runtime.cancel('bad id')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      });

      it('a cancel landing while a step commits its advance stops the run before the next step runs', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const steps: number[] = [];
        let release: (() => void) | undefined;
        const { runtime } = h.start(async (step) => {
          steps.push(step.stepNumber);
          if (step.stepNumber === 0) {
            release = h.holdWrites();
            return StepOutcome.continueNow(b('next'));
          }
          return StepOutcome.succeed(new Uint8Array(0));
        }, hook);
        const { runId } = await runtime.submit({});
        await eventually(() => runtime.status(runId)?.currentStep === 1);
        const cancelled = runtime.cancel(runId);
        release!();
        expect(await cancelled).toBe(true);
        expect(await hook.first()).toMatchObject({ status: 'cancelled', error: null, finalStep: 1 });
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(steps).toEqual([0]);
      });

      it('a persisted cancel survives a restart: a fresh runtime settles the run cancelled even if the runner succeeds', async () => {
        const h = await makeHarness(factory);
        const entered = deferred();
        const never = deferred();
        const a = h.start(async () => {
          entered.resolve();
          await never.promise;
          return StepOutcome.succeed(b('late'));
        }, new NoopTerminalHook());
        const { runId } = await a.runtime.submit({ maxAttemptsPerStep: 5 });
        await entered.promise;
        expect(await a.runtime.cancel(runId)).toBe(true);
        // Crash: the claim is never settled; the next open recovers it with its cancel flag.
        await h.crashRestart();
        const hook = new RecordingHook();
        let calls = 0;
        h.start(async () => {
          calls++;
          return StepOutcome.succeed(b('fresh'));
        }, hook);
        expect(await hook.first()).toMatchObject({ runId, status: 'cancelled', error: null });
        expect(calls).toBe(0);
        never.resolve();
      });

      it('only the committed outcome notifies: a lost succeed settlement, then a cancelled redelivery', async () => {
        const h = await makeHarness(factory, { defaultQueueConfig: { retryBackoffBaseMs: 0, leaseMs: 1_000 } });
        const hook = new RecordingHook();
        const attempt1 = deferred();
        const release1 = deferred();
        const attempt2 = deferred();
        const release2 = deferred();
        const warnings: string[] = [];
        const { runtime } = h.start(async (step: Step) => {
          if (step.attempt === 1) {
            attempt1.resolve();
            await release1.promise;
          } else {
            attempt2.resolve();
            await release2.promise;
          }
          return StepOutcome.succeed(b(`attempt ${step.attempt}`));
        }, hook, { logger: { warn: (m: string) => void warnings.push(m) } });
        const { runId } = await runtime.submit({ maxAttemptsPerStep: 5 });
        await attempt1.promise;
        await h.clock.advance(2_000);
        expect(await h.queue.reapNow()).toBe(1); // the lease expired: attempt 1 can no longer settle
        await attempt2.promise;
        release1.resolve();
        // Attempt 1's settlement was tried and refused (its claim is gone), and it notified nothing.
        await eventually(() => warnings.some((w) => w.includes('settling a workflow job failed')), 5000, 'the lost settlement');
        expect(hook.outcomes).toHaveLength(0);
        expect(await runtime.cancel(runId)).toBe(true);
        release2.resolve();
        expect(await hook.first()).toMatchObject({ status: 'cancelled', error: null });
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(hook.calls).toBe(1);
      });
    });

    // The browser host's new leader after a tab takeover, and any restarted process, must be able
    // to cancel runs it has not seen start (the reference's registry-only cancel returned false).
    describe('cancellation after a restart', () => {
      const HOUR = 3_600_000;
      /** Step 0 parks the run: `sig` on a signal, `delay` on a timer, `flaky` in a retry backoff. */
      const parking = async (step: Step) => {
        if (step.runId === 'sig') return StepOutcome.continueOnSignal(b('waiting'), 'approve:sig', 24 * HOUR);
        if (step.runId === 'delay') return StepOutcome.continueAfter(b('later'), 24 * HOUR);
        if (step.runId === 'flaky') throw StepError.transient('try again in an hour');
        return StepOutcome.succeed(b('done'));
      };

      it('cancels runs parked on a signal, a delay and a retry backoff that this process never saw', async () => {
        const h = await makeHarness(factory, { defaultQueueConfig: { retryBackoffBaseMs: HOUR } });
        const a = h.start(parking, new NoopTerminalHook(), { memoRetentionMs: 60_000 });
        for (const runId of ['sig', 'delay', 'flaky']) await a.runtime.submit({ runId, headers: { who: runId }, maxAttemptsPerStep: 5 });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 3, 5000, 'three parked runs');
        await h.restart();

        // Not started: cancel alone must commit the terminations (notifications included).
        let calls = 0;
        const counting = async () => {
          calls++;
          return StepOutcome.succeed(b('should not run'));
        };
        const hook = new RecordingHook();
        const runtime = h.runtime(counting, hook, { memoRetentionMs: 60_000 });
        expect(runtime.status('sig')).toBeNull(); // the synchronous status is registry-only
        expect(await runtime.readStatus('sig')).toEqual({ runId: 'sig', state: 'pending', currentStep: 1 });
        expect(await runtime.readStatus('delay')).toEqual({ runId: 'delay', state: 'pending', currentStep: 1 });
        expect(await runtime.readStatus('flaky')).toEqual({ runId: 'flaky', state: 'pending', currentStep: 0 });

        for (const runId of ['sig', 'delay', 'flaky']) expect(await runtime.cancel(runId), runId).toBe(true);
        for (const runId of ['sig', 'delay', 'flaky']) {
          expect(await runtime.readStatus(runId), runId).toBeNull();
          expect(await h.queue.kvGet(b(`workflow/runs/${runId}`)), runId).toBeUndefined();
          expect(await h.queue.kvGet(b(`workflow/steps/${runId}`)), runId).toBeUndefined();
        }
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toHaveLength(3);
        // Only the three notifications are left, claimable now.
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 3, scheduled: 0, claimed: 0, dead: 0 });
        expect(await runtime.cancel('sig')).toBe(false);

        h.start(counting, hook);
        const outcomes = await hook.waitFor(3);
        expect(outcomes.map((o) => o.runId).sort()).toEqual(['delay', 'flaky', 'sig']);
        for (const o of outcomes) expect(o).toMatchObject({ status: 'cancelled', error: null, result: null, headers: { who: o.runId }, finalStep: o.runId === 'flaky' ? 0 : 1 });
        // A late signal finds no waiter (the removed job left only a stale index) and wakes nothing.
        expect(await runtime.signal('approve:sig', b('too late'))).toBe('buffered');
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, scheduled: 0, claimed: 0 });
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(calls).toBe(0);
        expect(hook.calls).toBe(3);
      });

      it('after a restart, cancel and readStatus answer false and null for unknown and finished runs', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const a = h.start(parking, hook);
        await a.runtime.submit({ runId: 'finished' });
        await hook.first();
        await h.restart();
        const runtime = h.runtime(parking, new NoopTerminalHook());
        for (const runId of ['finished', 'never-submitted']) {
          expect(await runtime.cancel(runId), runId).toBe(false);
          expect(await runtime.readStatus(runId), runId).toBeNull();
        }
        await expect(runtime.readStatus('bad id')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      });

      it('a run whose parked step is claimed by the new process is cancelled through the registry', async () => {
        const h = await makeHarness(factory);
        const a = h.start(async (step) => StepOutcome.continueAfter(b(`from ${step.stepNumber}`), 10_000), new NoopTerminalHook());
        await a.runtime.submit({ runId: 'claimed-later' });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        await h.restart();

        const hook = new RecordingHook();
        const entered = deferred();
        const release = deferred();
        let sawAbort = false;
        const { runtime } = h.start(async (step) => {
          entered.resolve();
          await release.promise;
          sawAbort = step.signal.aborted;
          return StepOutcome.succeed(b('discarded'));
        }, hook);
        await h.advance(10_000);
        await entered.promise;
        expect(runtime.status('claimed-later')).toEqual({ runId: 'claimed-later', state: 'running', currentStep: 1 });
        expect(await runtime.cancel('claimed-later')).toBe(true);
        expect(runtime.status('claimed-later')).toMatchObject({ state: 'cancelling', currentStep: 1 });
        expect(await runtime.readStatus('claimed-later')).toMatchObject({ state: 'cancelling', currentStep: 1 });
        release.resolve();
        expect(await hook.first()).toMatchObject({ runId: 'claimed-later', status: 'cancelled', error: null, result: null, finalStep: 1 });
        expect(sawAbort).toBe(true);
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(hook.calls).toBe(1);
        expect(await runtime.readStatus('claimed-later')).toBeNull();
        expect(await runtime.cancel('claimed-later')).toBe(false);
      });

      it('a running step of a run this runtime never registered is cancelled through its job (persisted flag and claim signal)', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const entered = deferred();
        const release = deferred();
        // The worker's runtime registers the run; a second runtime on the same queue (empty
        // registry) stands in for a caller that only has the durable records.
        const worker = h.start(async () => {
          entered.resolve();
          await release.promise;
          return StepOutcome.succeed(b('discarded'));
        }, hook);
        await worker.runtime.submit({ runId: 'foreign' });
        await entered.promise;
        const other = h.runtime(parking, new NoopTerminalHook());
        expect(await other.readStatus('foreign')).toEqual({ runId: 'foreign', state: 'running', currentStep: 0 });
        expect(await other.cancel('foreign')).toBe(true);
        expect(await other.readStatus('foreign')).toEqual({ runId: 'foreign', state: 'cancelling', currentStep: 0 });
        release.resolve();
        expect(await hook.first()).toMatchObject({ runId: 'foreign', status: 'cancelled', error: null });
        await h.stopRuntimes(); // in-flight work finished: the counts below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 }); // and nothing is left to run
        expect(hook.calls).toBe(1);
        expect(await other.readStatus('foreign')).toBeNull();
      });
    });
  });
}
