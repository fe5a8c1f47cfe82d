/**
 * `getRunTimeline` on runs of workflow functions (`RunTimeline.workflowFunction`, issue #27 item 5):
 * the workflow and version from the run's step payload and, while the run is active, its `ctx`
 * calls by position with their status as the run moves (a sleep sleeping then slept, a signal
 * wait waiting, received, timed out), the same from a `WorkflowReader`; none for a StepRunner run,
 * and none once the function run ended (its history goes with its ending).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { encodeValue } from '../../../src/core/codec.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineWorkflow, StepOutcome, WorkflowReader, WorkflowRuntime } from '../../../src/core/workflow/index.js';
import { fnWorld, resultOf, runState, sleeping, START_MS, waitingForSignal } from './functions/fn-harness.js';

const factory = () => new MemoryObjectStore();

const flow = defineWorkflow({
  name: 'flow',
  version: 3,
  async run(ctx) {
    const a = await ctx.step('a', () => ({ n: 1 }));
    await ctx.sleep(60_000);
    const go = await ctx.waitForSignal<string>('go', { timeoutMs: 10_000 });
    const late = await ctx.waitForSignal('late', { timeoutMs: 1_000 });
    return { a, go, late: late.timedOut, id: ctx.uuid() };
  },
});

const statuses = async (runtime: WorkflowRuntime, runId: string) => (await runtime.getRunTimeline(runId)).workflowFunction?.calls.map((c) => `${c.kind}:${c.name}:${c.status}`);

describe('getRunTimeline: workflow functions', () => {
  it('names the workflow and lists its calls as the run sleeps, waits, receives and times out', async () => {
    const w = await fnWorld(factory);
    const runtime = w.start([flow]);
    const run = await runtime.start(flow, undefined, { runId: 'f1' });
    await sleeping(runtime, 'f1');
    const asleep = await runtime.getRunTimeline('f1');
    expect(asleep.workflowFunction).toEqual({
      name: 'flow',
      version: 3,
      calls: [
        { position: 0, kind: 'step', name: 'a', status: 'done', value: encodeValue({ n: 1 }), untilMs: null, error: null, attempts: 1, retried: [] },
        { position: 1, kind: 'sleep', name: '', status: 'sleeping', value: null, untilMs: START_MS + 60_000, error: null, attempts: null, retried: [] },
      ],
    });
    // A reader of the store sees the same.
    const reader = await WorkflowReader.open(w.store, w.queue.path, { pollIntervalMs: null, logger: false });
    try {
      expect((await reader.getRunTimeline('f1')).workflowFunction).toEqual(asleep.workflowFunction);
    } finally {
      await reader.close();
    }

    await w.advance(60_000);
    await waitingForSignal(runtime, 'f1');
    expect(await statuses(runtime, 'f1')).toEqual(['step:a:done', 'sleep::done', 'wait:go:waiting']);
    expect((await runtime.getRunTimeline('f1')).workflowFunction!.calls[2]!.untilMs).toBe(START_MS + 70_000);

    // Raw bytes (the CLI's text) arrive as their text.
    await runtime.signal('f1#go', utf8('yes'));
    await runState(runtime, 'f1', (d) => d.state === 'waiting-for-signal' && d.currentStep === 3, 'the wait for late');
    const received = (await runtime.getRunTimeline('f1')).workflowFunction!.calls;
    expect(received.slice(2).map((c) => [c.name, c.status, c.value])).toEqual([
      ['go', 'done', encodeValue('yes')],
      ['late', 'waiting', null],
    ]);

    await w.advance(1_000);
    expect(await resultOf(run)).toMatchObject({ a: { n: 1 }, go: { timedOut: false, value: 'yes' }, late: true });
    // Ended: its history is gone with it; the finished-run record's headers still name the workflow.
    expect((await runtime.getRunTimeline('f1')).workflowFunction).toEqual({ name: 'flow', version: 3, calls: [] });
    expect((await runtime.result('f1')).headers).toEqual({ 'taquba-workflow': 'flow@3' });
  });

  it('an invoked child: waiting while it runs, then done with its value, or failed with its error', async () => {
    const w = await fnWorld(factory);
    const kid = defineWorkflow({ name: 'kid', run: async (ctx, n: number) => (n < 0 ? Promise.reject(new Error('negative')) : ctx.waitForSignal<number>('more').then((r) => (r.timedOut ? n : n + r.value))) });
    const caller = defineWorkflow({
      name: 'caller',
      async run(ctx, n: number) {
        const first = await ctx.invoke(kid, n);
        await ctx.invoke(kid, -1).catch(() => 'failed');
        await ctx.waitForSignal('hold');
        return first;
      },
    });
    const runtime = w.start([caller, kid]);
    await runtime.start(caller, 2, { runId: 'inv' });
    await waitingForSignal(runtime, 'inv-c0');
    expect(await statuses(runtime, 'inv')).toEqual(['invoke:kid (inv-c0):waiting']);
    await runtime.signal('inv-c0', 'more', 5);
    await runState(runtime, 'inv', (d) => d.state === 'waiting-for-signal' && (d.waitingFor as { correlationKey?: string } | undefined)?.correlationKey === 'inv#hold', 'the parent to wait for hold');
    const calls = (await runtime.getRunTimeline('inv')).workflowFunction!.calls;
    expect(calls.map((c) => `${c.kind}:${c.name}:${c.status}`)).toEqual(['invoke:kid (inv-c0):done', 'invoke:kid (inv-c1):failed', 'wait:hold:waiting']);
    expect(calls[0]!.value).toEqual(encodeValue(7));
    expect(calls[1]!.error).toContain('failed: Error: negative');
  });

  it('a wait that timed out, while the run is still active', async () => {
    const w = await fnWorld(factory);
    const wf = defineWorkflow({
      name: 'twice',
      async run(ctx) {
        await ctx.waitForSignal('first', { timeoutMs: 1_000 });
        await ctx.waitForSignal('second');
      },
    });
    const runtime = w.start([wf]);
    await runtime.start(wf, undefined, { runId: 't1' });
    await waitingForSignal(runtime, 't1');
    await w.advance(1_000);
    await runState(runtime, 't1', (d) => d.state === 'waiting-for-signal' && d.currentStep === 2, 'the second wait');
    expect(await statuses(runtime, 't1')).toEqual(['wait:first:timed-out', 'wait:second:waiting']);
  });

  it('a StepRunner run has none', async () => {
    const w = await fnWorld(factory);
    const plain = new WorkflowRuntime(w.queue, w.store, async (s) => StepOutcome.continueOnSignal(s.payload, 'k', 60_000), undefined, { logger: false });
    const handle = plain.spawn();
    try {
      await plain.submit({ runId: 'p1', input: utf8('not an envelope') });
      await runState(plain, 'p1', (d) => d.state === 'waiting-for-signal', 'the plain run to wait');
      expect(await plain.getRunTimeline('p1')).toMatchObject({ status: 'active', workflowFunction: null });
    } finally {
      await handle.shutdown();
    }
  });
});
