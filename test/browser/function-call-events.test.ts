/**
 * The browser host's run events of a workflow function, in Node: the runner wrapper the host
 * passes the runtime (`observeRunner`) reports a `function-call` event per `ctx` call as the run
 * records it (a failed attempt it retries, a step's value, a drawn value, a sleep begun and over,
 * a signal wait begun and answered, a child invoked and ended), tagged with the execution that
 * recorded it, and nothing more on a replay.
 */
import { describe, expect, it } from 'vitest';
import { callValue } from '../../src/core/workflow/functions/calls.js';
import { defineWorkflow, type WorkflowRuntimeOptions } from '../../src/core/workflow/index.js';
import { RUNNER_WRAPPER, type HostRuntimeOptions } from '../../src/core/workflow/runtime-options.js';
import { observeRunner } from '../../src/browser/run-events.js';
import type { RunEvent } from '../../src/browser/protocol.js';
import { eventually, fnWorld, resultOf, sleeping, waitingForSignal } from '../core/workflow/functions/fn-harness.js';
import { memoryStore } from '../support/stores.js';

const memory = memoryStore();

type CallEvent = Extract<RunEvent, { type: 'function-call' }>;

describe('function-call run events', () => {
  it('one event per ctx call as it is recorded, with its execution, attempts and value', async () => {
    const w = await fnWorld(memory.factory);
    const double = defineWorkflow({ name: 'double', run: async (ctx, n: number) => ctx.step('times two', () => n * 2) });
    const review = defineWorkflow({
      name: 'review',
      async run(ctx, topic: string) {
        const found = await ctx.step(
          'research',
          ({ attempt }) => {
            if (attempt === 1) throw new Error('503');
            return { notes: [topic] };
          },
          { retries: 1, backoff: { initialMs: 100 } },
        );
        ctx.now();
        await ctx.sleep(1000);
        const approved = await ctx.waitForSignal<boolean>('approve');
        const doubled = await ctx.invoke(double, 2);
        return { found, approved: !approved.timedOut && approved.value, doubled };
      },
    });
    const events: RunEvent[] = [];
    const options: HostRuntimeOptions = {
      [RUNNER_WRAPPER]: (runner) => observeRunner(runner, { executor: 'h1', clock: w.clock, backoffMs: () => 0, emit: (e) => events.push(e) }),
    };
    const runtime = w.start([review, double], options as WorkflowRuntimeOptions);
    const run = await runtime.start(review, 'tides', { runId: 'r' });
    const calls = (): CallEvent[] => events.filter((e): e is CallEvent => e.type === 'function-call' && e.runId === 'r');

    await eventually(() => calls().length === 1);
    expect(calls()[0]).toMatchObject({ executor: 'h1', stepNumber: 0, call: { position: 0, kind: 'step', name: 'research', status: 'retrying', attempts: 1, error: 'Error: 503', untilMs: w.clock.now() + 100 } });
    await w.advance(100);
    await sleeping(runtime, 'r');
    await w.advance(1000);
    await waitingForSignal(runtime, 'r');
    await runtime.signal('r', 'approve', true);
    expect(await resultOf(run)).toEqual({ found: { notes: ['tides'] }, approved: true, doubled: 4 });

    const line = (e: CallEvent): string => `${e.stepNumber} ${e.call.position} ${e.call.kind} ${e.call.name} ${e.call.status} ${e.call.attempts ?? '-'}`;
    expect(calls().map(line)).toEqual([
      '0 0 step research retrying 1',
      '0 0 step research done 2',
      '0 1 now  done -',
      '0 2 sleep  sleeping -',
      '1 2 sleep  done -',
      '1 3 wait approve waiting -',
      '2 3 wait approve done -',
      '2 4 invoke double (r-c4) waiting -',
      '3 4 invoke double (r-c4) done -',
    ]);
    const byLine = new Map(calls().map((e) => [line(e), e.call]));
    expect(callValue(byLine.get('0 0 step research done 2')!)).toEqual({ notes: ['tides'] });
    expect(byLine.get('0 0 step research done 2')!.retried).toEqual([{ attempt: 1, error: 'Error: 503', atMs: expect.any(Number) }]);
    expect(callValue(byLine.get('2 3 wait approve done -')!)).toBe(true);
    expect(callValue(byLine.get('3 4 invoke double (r-c4) done -')!)).toBe(4);
    // The child's own calls are its run's events.
    expect(events.some((e) => e.type === 'function-call' && e.runId === 'r-c4' && e.call.name === 'times two' && e.call.status === 'done')).toBe(true);
    // Each call event comes before its execution's step-finished.
    const finishedFirst = events.findIndex((e) => e.type === 'step-finished' && e.runId === 'r');
    expect(events.findIndex((e) => e.type === 'function-call' && e.runId === 'r' && e.call.kind === 'sleep')).toBeLessThan(finishedFirst);
  });
});
