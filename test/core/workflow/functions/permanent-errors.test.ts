/**
 * A step whose function throws a permanent error (`StepError.permanent`, or the library's
 * INVALID_ARGUMENT) is not retried: it fails after one attempt with STEP_FAILED, while a plain
 * error is retried up to the policy.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { InvalidArgumentError } from '../../../../src/core/errors.js';
import { MemoryObjectStore } from '../../../../src/core/objects/memory-store.js';
import { Queue } from '../../../../src/core/queue/index.js';
import { defineWorkflow, StepError, StepFailedError, WorkflowRuntime } from '../../../../src/core/workflow/index.js';

describe('permanent step errors', () => {
  it.each([
    ['StepError.permanent', () => StepError.permanent('401 unauthorized'), 1],
    ['INVALID_ARGUMENT', () => new InvalidArgumentError('bad prompt'), 1],
    ['a plain Error', () => new Error('flaky'), 3],
  ] as const)('%s: the step ends after %#', async (_what, error, expectedCalls) => {
    let calls = 0;
    const wf = defineWorkflow({
      name: 'perm',
      async run(ctx) {
        try {
          await ctx.step('call', () => {
            calls++;
            throw error();
          }, { retries: 2, backoff: { initialMs: 1 } });
          return 'unreachable';
        } catch (e) {
          return e instanceof StepFailedError ? `failed after ${e.attempts}` : 'other';
        }
      },
    });
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'perm', { logger: false });
    const runtime = new WorkflowRuntime(queue, store, { workflows: [wf] }, undefined, { logger: false });
    const worker = runtime.spawn();
    onTestFinished(async () => {
      await worker.shutdown();
      await queue.close();
    });
    expect(await (await runtime.start(wf, undefined)).result({ timeoutMs: 10_000 })).toBe(`failed after ${expectedCalls}`);
    expect(calls).toBe(expectedCalls);
  });
});
