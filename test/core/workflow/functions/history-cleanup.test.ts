/**
 * Every ending of a workflow function's run deletes its history in the ending's transaction:
 * the function's own return, a cancel of a sleeping or waiting run (the waiting step job is
 * removed), and a run started again under a released id never sees an earlier run's events.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { utf8 } from '../../../../src/core/bytes.js';
import { MemoryObjectStore } from '../../../../src/core/objects/memory-store.js';
import { Queue } from '../../../../src/core/queue/index.js';
import { defineWorkflow, WorkflowRuntime } from '../../../../src/core/workflow/index.js';
import { eventually } from '../harness.js';

const parked = defineWorkflow({
  name: 'parked',
  async run(ctx, how: 'sleep' | 'wait' | 'done') {
    await ctx.step('first', () => how);
    if (how === 'sleep') await ctx.sleep(3_600_000);
    if (how === 'wait') await ctx.waitForSignal('never', { timeoutMs: 3_600_000 });
    return ctx.step('last', () => 'finished');
  },
});

async function world() {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'cleanup', { logger: false });
  const runtime = new WorkflowRuntime(queue, store, { workflows: [parked] }, undefined, { logger: false });
  const worker = runtime.spawn();
  onTestFinished(async () => {
    await worker.shutdown();
    await queue.close();
  });
  const history = async (): Promise<number> => (await queue.kvScan(utf8('workflow/fn/'))).entries.length;
  return { runtime, history };
}

describe('workflow function history cleanup', () => {
  it.each(['sleep', 'wait'] as const)('a cancelled run that was %sing leaves no history', async (how) => {
    const { runtime, history } = await world();
    const run = await runtime.start(parked, how, { runId: `cancel-${how}` });
    await eventually(async () => (await runtime.getRun(run.runId))?.currentStep === 1, 5000, 'the run to park');
    expect(await history()).toBeGreaterThan(0);
    expect(await run.cancel()).toBe(true);
    await expect(run.result()).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'cancelled' });
    expect(await history()).toBe(0);
  });

  it('a finished run leaves no history, and the id started again runs afresh', async () => {
    const { runtime, history } = await world();
    expect(await (await runtime.start(parked, 'done', { runId: 'again' })).result()).toBe('finished');
    expect(await history()).toBe(0);
    const second = await runtime.start(parked, 'done', { runId: 'again' });
    expect(second.newlySubmitted).toBe(true);
    expect(await second.result()).toBe('finished');
  });
});
