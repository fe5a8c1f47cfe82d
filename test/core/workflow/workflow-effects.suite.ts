/**
 * Caller-KV effects and reads, terminal hooks and notifications, step-output replay, memo
 * retention and dead-step reconciliation, as a reusable suite over any store factory.
 */
import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import {
  EffectsHandle,
  NoopTerminalHook,
  parseTerminalMarkerKey,
  StepError,
  StepOutcome,
  terminalMarkerKey,
  WorkflowRuntime,
  type Step,
} from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, kvKeys, makeHarness, QUEUE, RecordingHook, s, type StoreFactory } from './harness.js';

const empty = new Uint8Array(0);

/** An object store whose puts of keys containing `match` first run `onPut` (once each, in order). */
function interceptPuts(inner: ObjectStore, match: string, onPut: (key: string) => Promise<void>): ObjectStore {
  return {
    get: (k, o) => inner.get(k, o),
    delete: (k) => inner.delete(k),
    list: (p, o) => inner.list(p, o),
    put: async (k, d, o) => {
      const result = await inner.put(k, d, o);
      if (k.includes(match)) await onPut(k);
      return result;
    },
  };
}

export function defineWorkflowEffectsSuite(name: string, factory: StoreFactory): void {
  describe(`workflow effects, hooks, replay, retention (${name})`, () => {
    describe('application KV effects', () => {
      it('commits step effects with each ack; a step reads committed state only', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const reads: (string | null)[] = [];
        const { runtime } = h.start(async (step) => {
          if (step.stepNumber === 0) {
            step.effects.put('app/marker', b('from step 0'));
            step.effects.put(b('app/doomed'), b('x'));
            const own = await step.kv.get('app/marker');
            reads.push(own && s(own));
            await step.runMemo.put('journal', b('entry 0'));
            return StepOutcome.continueNow(empty);
          }
          const marker = await step.kv.get('app/marker');
          reads.push(marker && s(marker));
          const journal = await step.runMemo.get('journal');
          step.effects.delete('app/doomed');
          step.effects.put('app/step1', b('done'));
          return StepOutcome.succeed(journal!);
        }, hook);
        await runtime.submit({});
        expect(s((await hook.first()).result!)).toBe('entry 0');
        expect(reads).toEqual([null, 'from step 0']);
        expect(s((await h.queue.kvGet(b('app/marker')))!)).toBe('from step 0');
        expect(s((await h.queue.kvGet(b('app/step1')))!)).toBe('done');
        expect(await h.queue.kvGet(b('app/doomed'))).toBeUndefined();
      });

      it('effects commit with fail and with a runner cancel', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async (step) => {
          step.effects.put(`app/${step.runId}`, b('kept'));
          return step.runId === 'f' ? StepOutcome.fail('no') : StepOutcome.cancel('stop');
        }, hook);
        await runtime.submit({ runId: 'f' });
        await runtime.submit({ runId: 'c' });
        await hook.waitFor(2);
        expect(s((await h.queue.kvGet(b('app/f')))!)).toBe('kept');
        expect(s((await h.queue.kvGet(b('app/c')))!)).toBe('kept');
      });

      it('an external cancel discards the effects; a step error applies none', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const entered = deferred();
        const release = deferred();
        const { runtime } = h.start(async (step) => {
          step.effects.put(`app/${step.runId}`, b('must not apply'));
          if (step.runId === 'cancelled') {
            entered.resolve();
            await release.promise;
            return StepOutcome.succeed(empty);
          }
          throw StepError.transient('no effects for me');
        }, hook);
        await runtime.submit({ runId: 'cancelled' });
        await entered.promise;
        await runtime.cancel('cancelled');
        release.resolve();
        await runtime.submit({ runId: 'erroring', maxAttemptsPerStep: 2 });
        await hook.waitFor(2);
        expect(await h.queue.kvGet(b('app/cancelled'))).toBeUndefined();
        expect(await h.queue.kvGet(b('app/erroring'))).toBeUndefined();
      });

      it('failure writes apply only with the failing settlement (last attempt value), outcome writes never', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async (step) => {
          step.effects.put('app/outcome', b('outcome write'));
          step.effects.putOnFailure(b('workflow/x/failure'), b(`attempt ${step.attempt}`));
          throw StepError.transient('nope');
        }, hook);
        await runtime.submit({ maxAttemptsPerStep: 2 });
        await hook.first();
        expect(s((await h.queue.kvGet(b('workflow/x/failure')))!)).toBe('attempt 2');
        expect(await h.queue.kvGet(b('app/outcome'))).toBeUndefined();
      });

      it('after-commit hooks run once their effects committed: outcome hooks with the ack, failure hooks with the dead-letter', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const seen: string[] = [];
        const { runtime } = h.start(async (step) => {
          const tag = `${step.runId}#${step.attempt}`;
          step.effects.afterCommit(() => seen.push(`outcome ${tag}`));
          step.effects.afterFailureCommit(() => seen.push(`failure ${tag}`));
          if (step.runId === 'ok') return StepOutcome.succeed(empty);
          throw StepError.transient('nope');
        }, hook);
        await runtime.submit({ runId: 'ok' });
        await runtime.submit({ runId: 'bad', maxAttemptsPerStep: 2 });
        await hook.waitFor(2);
        // Hooks run after the commit, which the notification may overtake. The first try of
        // `bad` went back to the queue: neither of its hooks ran.
        await eventually(() => expect(seen.length).toBe(2));
        expect(seen.sort()).toEqual(['failure bad#2', 'outcome ok#1']);
      });

      it('a handle used after the step returned is sealed', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        let escaped: EffectsHandle | undefined;
        const { runtime } = h.start(async (step) => {
          escaped = step.effects;
          return StepOutcome.succeed(empty);
        }, hook);
        await runtime.submit({});
        await hook.first();
        expect(() => escaped!.put('app/late', b('x'))).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'effects_sealed' }) }));
      });
    });

    describe('terminal hook', () => {
      it('hook effects (KV and enqueue) commit with the notification ack', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook((outcome, effects) => {
          effects.put(`app/outcomes/${outcome.runId}`, b(outcome.status));
          effects.delete('app/pending');
          effects.enqueue({ queue: 'follow-up', payload: b(outcome.runId) });
        });
        const { runtime } = h.start(async () => StepOutcome.succeed(empty), hook);
        const { runId } = await runtime.submit({ kvWrites: [['app/pending', b('1')]] });
        await hook.first();
        await eventually(async () => (await h.queue.kvGet(b(`app/outcomes/${runId}`))) !== undefined);
        expect(await h.queue.kvGet(b('app/pending'))).toBeUndefined();
        expect((await h.queue.stats('follow-up')).pending).toBe(1);
      });

      it('retries a transiently failing hook; a permanent hook error dead-letters the notification', async () => {
        const h = await makeHarness(factory);
        const calls: Record<string, number> = {};
        const hook = new RecordingHook((outcome) => {
          calls[outcome.runId] = (calls[outcome.runId] ?? 0) + 1;
          if (outcome.runId === 'flaky' && calls.flaky === 1) throw new Error('hook outage');
          if (outcome.runId === 'broken') throw StepError.permanent('hook refuses');
        });
        const { runtime } = h.start(async () => StepOutcome.succeed(empty), hook);
        await runtime.submit({ runId: 'flaky' });
        await runtime.submit({ runId: 'broken' });
        await eventually(() => calls.flaky === 2 && calls.broken === 1);
        await eventually(async () => (await h.queue.stats(QUEUE)).dead === 1);
        const dead = await h.queue.deadJobs(QUEUE, undefined, 10);
        expect(dead[0]).toMatchObject({ lastError: 'hook refuses', headers: { 'workflow.terminal': '1', 'workflow.run_id': 'broken' } });
      });

      it('the noop hook enqueues no notification; notifications create no registry entries', async () => {
        const h = await makeHarness(factory);
        const noop = h.runtime(async () => StepOutcome.succeed(empty), new NoopTerminalHook());
        const { runId } = await noop.submit({});
        const claims = await h.queue.claimBatch(QUEUE, 10, 30_000);
        expect(claims).toHaveLength(1);
        await h.queue.nack(claims[0], 'handing it to the worker');
        const handle = noop.spawn();
        await eventually(async () => (await h.queue.stats(QUEUE)).done === 1);
        await handle.shutdown(); // in-flight work finished: the stats below are final
        expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, scheduled: 0, claimed: 0, done: 1 });

        const hook = new RecordingHook();
        const { runtime } = h.start(async () => StepOutcome.succeed(empty), hook);
        const second = await runtime.submit({});
        await hook.first();
        expect(runtime.status(second.runId)).toBeNull();
        expect(noop.status(runId)).toBeNull();
      });
    });

    describe('step-output replay', () => {
      it('replays the stored outcome after a lost ack: the runner is not called again and step 1 is enqueued once', async () => {
        const base = await factory();
        let reapOnce = true;
        let hRef: Awaited<ReturnType<typeof makeHarness>> | undefined;
        const memoStore = interceptPuts(base, '/step-outputs/', async () => {
          if (!reapOnce) return;
          reapOnce = false;
          // The record is stored; now the claim is lost before the ack (as in a crash).
          await hRef!.clock.advance(60_000);
          await hRef!.queue.reapNow();
        });
        const h = await makeHarness(factory, { defaultQueueConfig: { retryBackoffBaseMs: 0, leaseMs: 10_000 } });
        hRef = h;
        const hook = new RecordingHook();
        const calls: string[] = [];
        const runtime = new WorkflowRuntime(
          h.queue,
          memoStore,
          async (step: Step) => {
            calls.push(`${step.stepNumber}/${step.attempt}`);
            if (step.stepNumber === 0) {
              step.effects.put('app/replayed', b('yes'));
              return StepOutcome.continueNow(b('to step 1'));
            }
            return StepOutcome.succeed(step.payload);
          },
          hook,
          { stepOutputReplay: true, logger: { warn: () => undefined } },
        );
        const handle = runtime.spawn();
        try {
          await runtime.submit({ maxAttemptsPerStep: 5 });
          expect(s((await hook.first()).result!)).toBe('to step 1');
          expect(calls).toEqual(['0/1', '1/1']);
          expect(s((await h.queue.kvGet(b('app/replayed')))!)).toBe('yes');
          // Two jobs done: the run's (step 0 continued in place as step 1, once) and the notification.
          expect(await h.queue.stats(QUEUE)).toMatchObject({ done: 2, pending: 0, scheduled: 0, dead: 0 });
        } finally {
          await handle.shutdown();
        }
      });

      it('a terminal outcome replays without the runner; a corrupt record falls back to the runner and is overwritten', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        let calls = 0;
        const runner = async (step: Step) => {
          calls++;
          step.effects.put('app/effect', b(`call ${calls}`));
          return StepOutcome.succeed(b(`computed ${calls}`));
        };
        // First run stores the record for (replay-run, 0, payload "p").
        const first = h.runtime(runner, hook, { stepOutputReplay: true });
        const handle = first.spawn();
        await first.submit({ runId: 'replay-run', input: b('p') });
        await hook.waitFor(1);
        await handle.shutdown();
        const records: string[] = [];
        for await (const info of h.store.list('workflow-memo/step-outputs/replay-run/0/')) records.push(info.key);
        expect(records).toHaveLength(1);
        // A new run under the released id with the same payload replays it.
        await h.queue.kvDelete(b('app/effect'));
        const warnings: string[] = [];
        const { runtime } = h.start(runner, hook, { stepOutputReplay: true, logger: { warn: (m) => void warnings.push(m) } });
        await runtime.submit({ runId: 'replay-run', input: b('p') });
        expect(s((await hook.waitFor(2))[1].result!)).toBe('computed 1');
        expect(calls).toBe(1);
        expect(s((await h.queue.kvGet(b('app/effect')))!)).toBe('call 1');
        // Corrupt the record (one flipped bit, issue #12): the runner runs again, the warning
        // names the object, and the record is overwritten.
        const bad = (await h.store.get(records[0]))!.data.slice();
        bad[bad.length >> 1] ^= 0x08;
        await h.store.put(records[0], bad);
        await runtime.submit({ runId: 'replay-run', input: b('p') });
        expect(s((await hook.waitFor(3))[2].result!)).toBe('computed 2');
        expect(warnings.filter((w) => w.includes('replay record is corrupt') && w.includes(`object=${records[0]}`))).toHaveLength(1);
        await runtime.submit({ runId: 'replay-run', input: b('p') });
        expect(s((await hook.waitFor(4))[3].result!)).toBe('computed 2');
        expect(calls).toBe(2);
      });

      it('a replayed continueAfter keeps the original schedule', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        let calls = 0;
        const runner = async (step: Step) => {
          if (step.stepNumber === 0) {
            calls++;
            return StepOutcome.continueAfter(step.payload, 10_000);
          }
          return StepOutcome.succeed(step.payload);
        };
        const first = h.runtime(runner, new NoopTerminalHook(), { stepOutputReplay: true });
        const handle = first.spawn();
        const { runId } = await first.submit({ runId: 'sched', input: b('p') });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        await handle.shutdown();
        await first.cancel(runId);
        await h.clock.advance(4_000);
        const { runtime } = h.start(runner, hook, { stepOutputReplay: true });
        await runtime.submit({ runId: 'sched', input: b('p') });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        expect(calls).toBe(1);
        const job = (await h.queue.listJobs(QUEUE, 'scheduled')).jobs[0];
        expect(job.runAt).toBe(h.clock.now() + 6_000);
      });
    });

    describe('memo retention', () => {
      it('writes no marker without retention', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async () => StepOutcome.succeed(empty), hook);
        await runtime.submit({});
        await hook.first();
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([]);
      });

      it('stamps markers with the runtime clock at termination, for every terminal status', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const clock = new MockClock(10_000);
        const { runtime } = h.start(async (step) => {
          if (step.runId === 'ok') {
            await clock.advance(30_000);
            return StepOutcome.succeed(empty);
          }
          if (step.runId === 'failed') return StepOutcome.fail('x');
          throw StepError.permanent('boom');
        }, hook, { memoRetentionMs: 1_000, clock });
        await runtime.submit({ runId: 'ok' });
        await hook.waitFor(1);
        await runtime.submit({ runId: 'failed' });
        await runtime.submit({ runId: 'dead' });
        await hook.waitFor(3);
        const markers = (await kvKeys(h.queue, 'workflow/terminals/')).map((k) => parseTerminalMarkerKey(b(k)));
        expect(markers).toEqual([
          { terminatedAtMs: 40_000, runId: 'dead' },
          { terminatedAtMs: 40_000, runId: 'failed' },
          { terminatedAtMs: 40_000, runId: 'ok' },
        ]);
      });

      it('a retried attempt writes no marker; the succeeding attempt writes one, stamped at its time', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const clock = new MockClock(10_000);
        const { runtime } = h.start(async (step) => {
          if (step.attempt === 1) throw StepError.transient('retry me');
          await clock.advance(5_000);
          return StepOutcome.succeed(empty);
        }, hook, { memoRetentionMs: 1_000, clock });
        await runtime.submit({ runId: 'retry', maxAttemptsPerStep: 2 });
        await hook.first();
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([`workflow/terminals/${String(15_000).padStart(20, '0')}/retry`]);
      });

      it('the sweep clears expired runs oldest first, stops at the first young marker, and keeps the boundary', async () => {
        const h = await makeHarness(factory);
        const clock = new MockClock(100_000);
        const runtime = h.runtime(async () => StepOutcome.succeed(empty), new NoopTerminalHook(), { memoRetentionMs: 10_000, clock });
        const memo = runtime.memoStore;
        for (const run of ['old', 'boundary', 'young', 'no-marker']) await memo.newMemo(run, 0).put('k', b(run));
        await h.queue.kvPut(terminalMarkerKey(80_000, 'old'), empty);
        await h.queue.kvPut(terminalMarkerKey(90_000, 'boundary'), empty);
        await h.queue.kvPut(terminalMarkerKey(95_000, 'young'), empty);
        expect(await runtime.sweepMemosNow()).toBe(1);
        expect(await memo.newMemo('old', 0).get('k')).toBeNull();
        expect(await memo.newMemo('boundary', 0).get('k')).not.toBeNull();
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toHaveLength(2);
        await clock.advance(1);
        expect(await runtime.sweepMemosNow()).toBe(1);
        expect(await memo.newMemo('boundary', 0).get('k')).toBeNull();
        expect(await memo.newMemo('young', 0).get('k')).not.toBeNull();
        expect(await memo.newMemo('no-marker', 0).get('k')).not.toBeNull();
      });

      it('deletes malformed markers and markers with an invalid run id without clearing anything', async () => {
        const h = await makeHarness(factory);
        const runtime = h.runtime(async () => StepOutcome.succeed(empty), new NoopTerminalHook(), { memoRetentionMs: 10 });
        await runtime.memoStore.newMemo('bystander', 0).put('k', b('v'));
        await h.queue.kvPut(b('workflow/terminals/garbage'), empty);
        await h.queue.kvPut(b(`workflow/terminals/${'0'.repeat(20)}/`), empty);
        await h.queue.kvPut(b(`workflow/terminals/${'0'.repeat(20)}/bad id`), empty);
        expect(await runtime.sweepMemosNow()).toBe(0);
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([]);
        expect(await runtime.memoStore.newMemo('bystander', 0).get('k')).not.toBeNull();
      });

      it('marker keys sort oldest first and parse back', () => {
        const keys = [terminalMarkerKey(1_000, 'b'), terminalMarkerKey(20, 'z'), terminalMarkerKey(1_700_000_000_000, 'a')].map(s).sort();
        expect(keys.map((k) => parseTerminalMarkerKey(b(k)))).toEqual([
          { terminatedAtMs: 20, runId: 'z' },
          { terminatedAtMs: 1_000, runId: 'b' },
          { terminatedAtMs: 1_700_000_000_000, runId: 'a' },
        ]);
      });

      it('run() sweeps at start, catching markers an earlier process left', async () => {
        const h = await makeHarness(factory);
        const probe = h.runtime(async () => StepOutcome.succeed(empty), new NoopTerminalHook(), { memoRetentionMs: 1_000 });
        await probe.memoStore.newMemo('leftover', 0).put('k', b('v'));
        await h.queue.kvPut(terminalMarkerKey(h.clock.now() - 5_000, 'leftover'), empty);
        h.start(async () => StepOutcome.succeed(empty), new NoopTerminalHook(), { memoRetentionMs: 1_000 });
        await eventually(async () => (await probe.memoStore.newMemo('leftover', 0).get('k')) === null);
        // The sweeper deletes the memo objects first and the marker after: on a slow store (S3)
        // the marker can still be there for a moment.
        await eventually(async () => (await kvKeys(h.queue, 'workflow/terminals/')).length === 0);
        expect(await kvKeys(h.queue, 'workflow/terminals/')).toEqual([]);
      });
    });

    describe('dead-step reconciliation', () => {
      it('fails a run whose step the reaper dead-lettered (lease expired on the last attempt)', async () => {
        const h = await makeHarness(factory, { defaultQueueConfig: { retryBackoffBaseMs: 0, leaseMs: 1_000 } });
        const hook = new RecordingHook();
        const entered = deferred();
        const never = deferred();
        const { runtime } = h.start(async () => {
          entered.resolve();
          await never.promise;
          return StepOutcome.succeed(empty);
        }, hook);
        const { runId, jobId } = await runtime.submit({ maxAttemptsPerStep: 1 });
        await entered.promise;
        await h.clock.advance(2_000);
        expect(await h.queue.reapNow()).toBe(1);
        expect(await h.queue.getJob(jobId)).toMatchObject({ status: 'dead' });
        // The worker's reconciliation notices the dead count change on its next poll.
        await h.clock.advance(250);
        const outcome = await hook.first();
        expect(outcome).toMatchObject({ runId, status: 'failed', error: 'lease expired', finalStep: 0 });
        expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeUndefined();
        expect(await h.queue.kvGet(b(`workflow/steps/${runId}`))).toBeUndefined();
        expect(runtime.status(runId)).toBeNull();
        expect(await runtime.reconcileNow()).toBe(0);
        never.resolve();
      });

      // Issue #13: a crash does not use up an attempt; only maxInterruptions crashes end the run.
      it('fails a run whose step was interrupted maxInterruptions times (dead-lettered when the queue reopened)', async () => {
        const h = await makeHarness(factory, { defaultQueueConfig: { retryBackoffBaseMs: 0, maxInterruptions: 1 } });
        const entered = deferred();
        const never = deferred();
        const a = h.start(async () => {
          entered.resolve();
          await never.promise;
          return StepOutcome.succeed(empty);
        }, new NoopTerminalHook());
        const { runId } = await a.runtime.submit({ maxAttemptsPerStep: 3, headers: { origin: 'crash' } });
        await entered.promise;
        await h.crashRestart();
        expect((await h.queue.stats(QUEUE)).dead).toBe(1);
        const hook = new RecordingHook();
        h.start(async () => StepOutcome.succeed(empty), hook);
        const error = 'interrupted 1 time (process exit, crash or abandoned delivery)';
        expect(await hook.first()).toMatchObject({ runId, status: 'failed', error, finalStep: 0, headers: { origin: 'crash' } });
        expect(await h.queue.kvGet(b(`workflow/runs/${runId}`))).toBeUndefined();
        never.resolve();
      });

      it('leaves a later run under the same id alone', async () => {
        const h = await makeHarness(factory);
        const hook = new RecordingHook();
        const { runtime } = h.start(async (step) => {
          if (step.payload[0] === 1) throw StepError.permanent('first run dies');
          return StepOutcome.continueAfter(step.payload, 60_000);
        }, hook);
        await runtime.submit({ runId: 'same-id', input: Uint8Array.of(1) });
        await hook.first();
        await runtime.submit({ runId: 'same-id', input: Uint8Array.of(2) });
        await eventually(async () => (await h.queue.stats(QUEUE)).scheduled === 1);
        expect(await runtime.reconcileNow()).toBe(0);
        expect(await h.queue.kvGet(b('workflow/runs/same-id'))).toBeDefined();
      });
    });
  });
}
