/**
 * Flow control as the caller writes it: bad options are typed errors naming the value and the
 * rule; workflow functions take defaults from `defineWorkflow`, keys computed from the input.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineWorkflow, NoopTerminalHook, StepOutcome, WorkflowRuntime, type RunSpec } from '../../../src/core/workflow/index.js';
import { deferred, eventually, makeHarness } from './harness.js';

const memory = (): MemoryObjectStore => new MemoryObjectStore();

describe('flow control: bad input', () => {
  const cases: [string, RunSpec, string, RegExp][] = [
    ['limit 0', { concurrency: { key: 'k', limit: 0 } }, 'concurrency.limit', /concurrency\.limit must be at least 1\. concurrency\.limit=0/],
    ['fractional limit', { concurrency: { key: 'k', limit: 1.5 } }, 'concurrency.limit', /must be an integer\. concurrency\.limit=1\.5/],
    ['limit as a string', { concurrency: { key: 'k', limit: '2' as unknown as number } }, 'concurrency.limit', /must be an integer\. concurrency\.limit="2"/],
    ['key not a string', { concurrency: { key: 42 as unknown as string, limit: 1 } }, 'concurrency.key', /concurrency\.key must be a string\. concurrency\.key=42/],
    ['empty key', { rateLimit: { key: '', limit: 1, periodMs: 1000 } }, 'rateLimit.key', /rateLimit\.key must not be empty/],
    ['key too long', { debounce: { key: 'x'.repeat(257), periodMs: 1000 } }, 'debounce.key', /must be at most 256 characters \(it has 257\)/],
    ['lone surrogate', { concurrency: { key: 'a\uD800', limit: 1 } }, 'concurrency.key', /lone surrogate/],
    ['period 0', { rateLimit: { key: 'k', limit: 1, periodMs: 0 } }, 'rateLimit.periodMs', /rateLimit\.periodMs must be at least 1\. rateLimit\.periodMs=0/],
    ['negative period', { debounce: { key: 'k', periodMs: -5 } }, 'debounce.periodMs', /must be at least 1\. debounce\.periodMs=-5/],
    ['rate limit over the cap', { rateLimit: { key: 'k', limit: 1001, periodMs: 1000 } }, 'rateLimit.limit', /must be at most 1000/],
    ['not an object', { concurrency: 'k' as unknown as { key: string; limit: number } }, 'concurrency', /concurrency must be an object/],
    ['debounce with concurrency', { debounce: { key: 'k', periodMs: 10 }, concurrency: { key: 'k', limit: 1 } }, 'debounce', /cannot be combined with concurrency or rateLimit/],
    ['rate limit with runAt', { rateLimit: { key: 'k', limit: 1, periodMs: 10 }, runAt: 5 }, 'runAt', /runAt cannot be combined with rateLimit/],
  ];
  it.each(cases)('%s: INVALID_ARGUMENT naming the field and the rule, nothing written', async (_name, spec, field, message) => {
    const h = await makeHarness(memory);
    const runtime = h.runtime(async () => StepOutcome.succeed(new Uint8Array()), new NoopTerminalHook());
    const error = await runtime.submit(spec).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_flow_control', field } });
    expect((error as Error).message).toMatch(message);
    expect((await runtime.listRuns()).runs).toEqual([]);
  });

  it('unknown option names: inside a flow option and at the top of the spec, with the nearest known name', async () => {
    const h = await makeHarness(memory);
    const runtime = h.runtime(async () => StepOutcome.succeed(new Uint8Array()), new NoopTerminalHook());
    await expect(runtime.submit({ concurrency: { key: 'k', limit: 1, limt: 2 } as never })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'invalid_flow_control', field: 'concurrency', option: 'limt', suggestion: 'limit' },
    });
    await expect(runtime.submit({ concurency: { key: 'k', limit: 1 } } as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'invalid_spec', option: 'concurency', suggestion: 'concurrency' },
    });
  });
});

describe('flow control: workflow functions', () => {
  interface Job {
    readonly user: string;
    readonly n: number;
  }

  it('defineWorkflow defaults with a key computed from the input; a start may override them', async () => {
    const h = await makeHarness(memory);
    const gates = new Map<number, ReturnType<typeof deferred<void>>>();
    const began: number[] = [];
    const sync = defineWorkflow({
      name: 'sync',
      concurrency: { key: (job: Job) => job.user, limit: 1 },
      async run(ctx, job: Job) {
        await ctx.step('work', async () => {
          began.push(job.n);
          await gates.get(job.n)!.promise;
        });
        return job.n;
      },
    });
    for (const n of [1, 2, 3, 4]) gates.set(n, deferred<void>());
    const runtime = new WorkflowRuntime(h.queue, h.store, { workflows: [sync] }, undefined, { logger: { warn: () => undefined } });
    const handle = runtime.spawn();
    try {
      const r1 = await runtime.start(sync, { user: 'ann', n: 1 });
      const r2 = await runtime.start(sync, { user: 'ann', n: 2 });
      const r3 = await runtime.start(sync, { user: 'bob', n: 3 });
      // The start's own option wins: another key, so it does not wait behind ann's run.
      const r4 = await runtime.start(sync, { user: 'ann', n: 4 }, { concurrency: { key: 'batch', limit: 5 } });
      await eventually(() => began.length === 3);
      expect(began.sort()).toEqual([1, 3, 4]);
      expect(await runtime.getRun(r2.runId)).toMatchObject({ state: 'waiting-for-slot', waitingFor: { key: 'ann' } });
      gates.get(1)!.resolve();
      await eventually(() => began.includes(2));
      for (const n of [2, 3, 4]) gates.get(n)!.resolve();
      expect(await Promise.all([r1, r2, r3, r4].map((r) => r.result()))).toEqual([1, 2, 3, 4]);
    } finally {
      await handle.shutdown();
    }
  });

  it('bad defaults fail at definition; a key function that throws or returns no string fails the start', async () => {
    expect(() => defineWorkflow({ name: 'w', concurrency: { key: 'k', limit: 0 }, run: async () => 1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_workflow', field: 'concurrency.limit' }) }),
    );
    expect(() => defineWorkflow({ name: 'w', debounce: { key: () => 'k', periodMs: 1000 }, rateLimit: { key: 'k', limit: 1, periodMs: 5 }, run: async () => 1 })).toThrow(/cannot be combined/);
    const h = await makeHarness(memory);
    const throwing = defineWorkflow({ name: 'throwing', concurrency: { key: (input: { id?: string }) => input.id!.toUpperCase(), limit: 1 }, run: async () => 1 });
    const numeric = defineWorkflow({ name: 'numeric', concurrency: { key: (input: number) => input as unknown as string, limit: 1 }, run: async () => 1 });
    const runtime = new WorkflowRuntime(h.queue, h.store, { workflows: [throwing, numeric] });
    await expect(runtime.start(throwing, {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_flow_control', field: 'concurrency.key' } });
    await expect(runtime.start(numeric, 7)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_flow_control', field: 'concurrency.key' } });
  });
});
