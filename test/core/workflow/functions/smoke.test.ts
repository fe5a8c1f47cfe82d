import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../../src/core/objects/memory-store.js';
import { Queue } from '../../../../src/core/queue/index.js';
import { WorkflowRuntime } from '../../../../src/core/workflow/index.js';
import { defineWorkflow } from '../../../../src/core/workflow/functions/define.js';

describe('smoke', () => {
  it('runs', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'x', { logger: false });
    let calls = 0;
    const wf = defineWorkflow({
      name: 'greet',
      async run(ctx, name: string) {
        const a = await ctx.step('a', () => { calls++; return `hello ${name}`; });
        const [b, c] = await Promise.all([ctx.step('b', () => a.length), ctx.step('c', () => new Map([[1, 2]]))]);
        const sig = await ctx.waitForSignal<string>('go', { timeoutMs: 60_000 });
        await ctx.sleep(10);
        return { a, b, c, sig, t: ctx.now() > 0 };
      },
    });
    const runtime = new WorkflowRuntime(queue, store, { workflows: [wf] }, undefined, { logger: false });
    const worker = runtime.spawn();
    const run = await runtime.start(wf, 'ann', { runId: 'r1' });
    await runtime.signal('r1', 'go', 'yes');
    const out = await run.result({ timeoutMs: 5000 });
    expect(out).toEqual({ a: 'hello ann', b: 9, c: new Map([[1, 2]]), sig: { timedOut: false, value: 'yes' }, t: true });
    expect(calls).toBe(1);
    const left = await queue.kvScan(new TextEncoder().encode('workflow/fn/'));
    expect(left.entries).toEqual([]);
    await worker.shutdown();
    await queue.close();
  });
});
