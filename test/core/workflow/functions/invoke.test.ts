/**
 * ctx.invoke: a child run of a workflow on the same runtime, awaited durably (its outcome arrives
 * as a signal sent by the child's terminal notification), across a restart of the process, with
 * the child's failure as a catchable RUN_FAILED; bad uses are typed errors.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { MemoryObjectStore } from '../../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../../src/core/objects/object-store.js';
import { Queue } from '../../../../src/core/queue/index.js';
import { defineWorkflow, RunFailedError, WorkflowRuntime, type AnyWorkflow, type RunnerHandle, type RunOutcome, type TerminalHook, type WorkflowRuntimeOptions } from '../../../../src/core/workflow/index.js';
import { deferred, eventually } from '../harness.js';

const calls = new Map<string, number>();
const hit = (name: string): void => void calls.set(name, (calls.get(name) ?? 0) + 1);
let gate: { readonly promise: Promise<void>; resolve(): void } | undefined;

const child = defineWorkflow({
  name: 'child',
  async run(ctx, n: number) {
    const doubled = await ctx.step('double', async () => {
      hit('double');
      if (gate) await gate.promise;
      if (n < 0) throw new Error('negative');
      return n * 2;
    }, { retries: 0 });
    return { doubled, by: ctx.runId };
  },
});

const parent = defineWorkflow({
  name: 'parent',
  async run(ctx, n: number) {
    const before = await ctx.step('before', () => (hit('before'), n + 1));
    try {
      const result = await ctx.invoke(child, before);
      return `child ${result.by} gave ${result.doubled}`;
    } catch (e) {
      if (e instanceof RunFailedError) return `compensated: ${e.status} ${e.error}`;
      throw e;
    }
  },
});

async function world(store: ObjectStore = new MemoryObjectStore(), workflows: AnyWorkflow[] = [parent, child], options: WorkflowRuntimeOptions = {}) {
  const queue = await Queue.open(store, 'invoke', { logger: false });
  const runtime = new WorkflowRuntime(queue, store, { workflows }, undefined, { logger: false, ...options });
  const worker: RunnerHandle = runtime.spawn();
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await worker.shutdown();
    await queue.close();
  };
  onTestFinished(close);
  return { store, runtime, close };
}

describe('ctx.invoke', () => {
  it('runs a child and returns its typed value; each step runs once', async () => {
    calls.clear();
    gate = undefined;
    const { runtime } = await world();
    const run = await runtime.start(parent, 4, { runId: 'p1' });
    expect(await run.result({ timeoutMs: 10_000 })).toBe('child p1-c1 gave 10');
    expect(Object.fromEntries(calls)).toEqual({ before: 1, double: 1 });
    expect(await runtime.readStatus('p1-c1', { includeFinished: true })).toMatchObject({ state: 'succeeded' });
  });

  it("a child's failure is a RUN_FAILED the parent can catch", async () => {
    calls.clear();
    gate = undefined;
    const { runtime } = await world();
    const run = await runtime.start(parent, -5, { runId: 'p2' });
    expect(await run.result({ timeoutMs: 10_000 })).toBe('compensated: failed STEP_FAILED: step "double" failed after 1 attempt: Error: negative');
  });

  it('a restart while the child runs: the next process finishes both, no finished step runs again', async () => {
    calls.clear();
    gate = deferred<void>();
    const store = new MemoryObjectStore();
    const first = await world(store);
    await first.runtime.start(parent, 1, { runId: 'p3' });
    await eventually(() => calls.get('double') === 1, 10_000, 'the child step to start');
    // The process stops while the child's step runs (shutdown lets the step finish and hands the
    // rest back to the queue); the next process resumes the parent, still waiting for its child.
    const stuck = gate;
    gate = undefined;
    const closing = first.close();
    stuck.resolve();
    await closing;
    const second = await world(store);
    expect(await second.runtime.workflowRun(parent, 'p3').result({ timeoutMs: 10_000 })).toBe('child p3-c1 gave 4');
    expect(Object.fromEntries(calls)).toEqual({ before: 1, double: 1 });
  });

  it('cancelling the parent cancels the child it waits for', async () => {
    calls.clear();
    gate = deferred<void>();
    const { runtime } = await world();
    const run = await runtime.start(parent, 2, { runId: 'p5' });
    await eventually(() => calls.get('double') === 1, 10_000, 'the child step to start');
    expect(await run.cancel()).toBe(true);
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'cancelled' });
    gate.resolve();
    await expect(runtime.workflowRun(child, 'p5-c1').result({ timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'cancelled' });
    gate = undefined;
  });

  it('refuses a child workflow not registered here, and invoke without kept outcomes, as typed failures of the parent', async () => {
    const stray = defineWorkflow({ name: 'stray', run: async () => 1 });
    const callsStray = defineWorkflow({ name: 'calls-stray', run: async (ctx) => ctx.invoke(stray, undefined) });
    const { runtime } = await world(new MemoryObjectStore(), [callsStray, child]);
    await expect((await runtime.start(callsStray, undefined)).result({ timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'RUN_FAILED', error: expect.stringContaining('INVALID_ARGUMENT: workflow stray@1 is not registered') });

    // Without finished-run records a finished child could not be told apart on replay: refused.
    const ended: RunOutcome[] = [];
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'invoke', { logger: false });
    const hook: TerminalHook = { onTermination: async (outcome) => void ended.push(outcome) };
    const noRecords = new WorkflowRuntime(queue, store, { workflows: [parent, child] }, hook, { logger: false, outcomeRetentionMs: 0 });
    const worker = noRecords.spawn();
    onTestFinished(async () => {
      await worker.shutdown();
      await queue.close();
    });
    await noRecords.start(parent, 1, { runId: 'p4' });
    await eventually(() => ended.length === 1, 10_000, 'the parent to end');
    expect(ended[0]).toMatchObject({ runId: 'p4', status: 'failed', error: expect.stringContaining('INVALID_CONFIG: ctx.invoke needs outcomeRetentionMs above 0') });
  });
});
