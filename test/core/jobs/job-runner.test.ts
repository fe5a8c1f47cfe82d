import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { defineJob, isTaqubaError, JobFailedError, JobRunner, MemoryObjectStore, Queue, StepError, type Job, type JobHandle, type JobResult } from '../../../src/index.js';
import { MockClock } from '../../../src/core/clock.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: ConstructorParameters<typeof JobRunner>[2] = {}) {
  const store = new MemoryObjectStore();
  // The runner's clock drives the queue too (a MockClock: retention is then mock time). On the
  // system clock, retries back off 1-5 ms and the scheduler promotes them every 10 ms (default
  // 1 s), so a retried job waits milliseconds, not a scheduler tick per attempt.
  const time = options.clock === undefined ? { schedulerIntervalMs: 10 } : { clock: options.clock };
  const queue = await Queue.open(store, 'app', { ...time, queueConfigs: { jobs: { retryBackoffBaseMs: 1, retryBackoffMaxMs: 5 } } });
  const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false, ...options });
  cleanups.push(async () => queue.close().catch(() => undefined));
  return { store, queue, runner };
}

let calls = 0;
interface AddInput {
  a: number;
  b: number;
  key?: string;
}
const add = defineJob({
  name: 'test.add',
  idempotencyKey: (input: AddInput) => input.key ?? null,
  run: async ({ a, b }: AddInput) => {
    calls++;
    return { sum: a + b, at: new Date(0) };
  },
});

const strictParse = (v: unknown): { n: number } => {
  if (typeof v !== 'object' || v === null || typeof (v as { n?: unknown }).n !== 'number') throw new Error('n must be a number');
  return v as { n: number };
};
const validated = defineJob({ name: 'test.validated', parse: { input: strictParse }, run: async ({ n }: { n: number }) => n * 2 });

const refuses = defineJob<{ amount: number }, string, { code: 'too_large'; limit: number }>({
  name: 'test.refuses',
  run: async ({ amount }, ctx) => (amount > 10 ? ctx.fail({ code: 'too_large', limit: 10 }) : `ok ${amount}`),
});

describe('JobRunner', () => {
  it('round-trips a typed input and output', async () => {
    const { runner } = await setup();
    runner.register(add);
    const worker = runner.spawn();
    const handle = await runner.submit(add, { a: 2, b: 3 });
    const out = await handle.result();
    expect(out.sum).toBe(5);
    expect(out.at).toBeInstanceOf(Date);
    expect(handle.newlySubmitted).toBe(true);
    expect(await handle.fetchResult()).toEqual({ ok: true, value: { sum: 5, at: new Date(0) } });
    await worker.shutdown();
  });

  it("the job's own error is JOB_FAILED with its typed payload; infrastructure errors keep their codes", async () => {
    const { runner, queue } = await setup();
    runner.register(refuses);
    const worker = runner.spawn();
    expect(await (await runner.submit(refuses, { amount: 3 })).result()).toBe('ok 3');
    const failing = await runner.submit(refuses, { amount: 50 });
    const e = await failing.result().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobFailedError);
    expect(isTaqubaError(e, 'JOB_FAILED')).toBe(true);
    const jf = e as JobFailedError<{ code: 'too_large'; limit: number }>;
    expect(jf.reason).toBe('job_error');
    expect(jf.error).toEqual({ code: 'too_large', limit: 10 });
    const stored = await failing.fetchResult();
    expect(stored?.ok).toBe(false);
    await worker.shutdown();
    await queue.close();
    const closed = await runner.submit(refuses, { amount: 1 }).catch((x: unknown) => x);
    expect(isTaqubaError(closed, 'CLOSED')).toBe(true);
    expect(closed).not.toBeInstanceOf(JobFailedError);
  });

  it('a throwing job is retried, and out of attempts fails with reason error', async () => {
    const { runner } = await setup();
    let tries = 0;
    const flaky = defineJob({
      name: 'test.flaky',
      maxAttempts: 3,
      run: async (input: { failTimes: number }, ctx) => {
        tries++;
        if (ctx.attempt <= input.failTimes) throw new Error(`boom ${ctx.attempt}`);
        return ctx.attempt;
      },
    });
    const permanent = defineJob({ name: 'test.permanent', run: async (): Promise<number> => { throw StepError.permanent('no way'); } });
    runner.register(flaky).register(permanent);
    const worker = runner.spawn();
    expect(await (await runner.submit(flaky, { failTimes: 2 })).result()).toBe(3);
    const out = await (await runner.submit(flaky, { failTimes: 5 })).result().catch((x: unknown) => x);
    expect(out).toMatchObject({ code: 'JOB_FAILED', reason: 'error', details: { message: 'boom 3' } });
    expect(tries).toBe(6);
    const perm = await (await runner.submit(permanent, {})).result().catch((x: unknown) => x);
    expect(perm).toMatchObject({ code: 'JOB_FAILED', reason: 'error', details: { message: 'no way' } });
    await worker.shutdown();
  });

  it('the idempotency key collapses duplicates before and after completion', async () => {
    const { runner } = await setup();
    runner.register(add);
    calls = 0;
    const first = await runner.submit(add, { a: 1, b: 1, key: 'k1' });
    const again = await runner.submit(add, { a: 1, b: 1, key: 'k1' }); // in flight (not spawned yet)
    expect(again.id).toBe(first.id);
    expect([first.newlySubmitted, again.newlySubmitted]).toEqual([true, false]);
    await expect(runner.submit(add, { a: 9, b: 9, key: 'k1' })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
    const worker = runner.spawn();
    expect((await first.result()).sum).toBe(2);
    const after = await runner.submit(add, { a: 1, b: 1, key: 'k1' });
    expect(after.id).toBe(first.id);
    expect(after.newlySubmitted).toBe(false);
    expect((await after.result()).sum).toBe(2);
    await expect(runner.submit(add, { a: 9, b: 9, key: 'k1' })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
    expect(calls).toBe(1);
    const noKey = [await runner.submit(add, { a: 1, b: 1 }), await runner.submit(add, { a: 1, b: 1 })];
    expect(noKey[0]!.id).not.toBe(noKey[1]!.id);
    await worker.shutdown();
  });

  it('bad input gives INVALID_ARGUMENT with a stable reason', async () => {
    const { runner } = await setup();
    runner.register(validated);
    await expect(runner.submit(add, { a: 1, b: 2 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unregistered_job' } });
    await expect(runner.submit(validated, { n: 'x' } as unknown as { n: number })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_job_input' } });
    const unencodable = defineJob({ name: 'test.fn', run: async (input: { f: () => void }) => typeof input.f });
    runner.register(unencodable);
    await expect(runner.submit(unencodable, { f: () => undefined })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_job_input' } });
    expect(() => runner.register(defineJob({ name: 'test.validated', run: async () => 1 }))).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: 'duplicate_job' }) }));
    expect(() => defineJob({ name: '', run: async () => 1 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => runner.handle(add, 'x')).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: 'unregistered_job' }) }));
  });

  it('a job executed by a runner without it fails with reason unregistered_job', async () => {
    const { store, queue, runner } = await setup();
    runner.register(add);
    const handle = await runner.submit(add, { a: 1, b: 2 });
    const other = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false });
    const worker = other.spawn();
    await expect(handle.result()).rejects.toMatchObject({ code: 'JOB_FAILED', reason: 'unregistered_job' });
    await worker.shutdown();
  });

  it('a handle by id reads the outcome; an unknown id is NOT_FOUND', async () => {
    const { runner } = await setup();
    runner.register(add);
    const worker = runner.spawn();
    const h = await runner.submit(add, { a: 4, b: 4 });
    await h.result();
    const byId = runner.handle(add, h.id);
    expect((await byId.result()).sum).toBe(8);
    expect(await runner.handle(add, 'nope').fetchResult()).toBeNull();
    await expect(runner.handle(add, 'nope').result()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await worker.shutdown();
  });

  it('the context gives memo, KV reads, lease and signal; result() stops waiting on abort', async () => {
    const { runner, queue } = await setup();
    await queue.kvPut(new TextEncoder().encode('greeting'), new TextEncoder().encode('hi'));
    const ctxJob = defineJob({
      name: 'test.ctx',
      run: async (_: null, ctx) => {
        const kv = new TextDecoder().decode((await ctx.kv.get('greeting'))!);
        const memo = await ctx.memo.memoized('m', () => 7);
        await ctx.lease.ensureAtLeast(1000);
        return { kv, memo, aborted: ctx.signal.aborted, id: ctx.id };
      },
    });
    runner.register(ctxJob);
    const h = await runner.submit(ctxJob, null);
    const stop = new AbortController();
    stop.abort();
    await expect(h.result({ signal: stop.signal })).rejects.toMatchObject({ code: 'CANCELLED' });
    const worker = runner.spawn();
    expect(await h.result()).toEqual({ kv: 'hi', memo: 7, aborted: false, id: h.id });
    await worker.shutdown();
  });

  it('retention sweeps the outcome; a keyed resubmission then runs again under the same id', async () => {
    // A 1 s window on a mock clock: the first outcome is past it when swept; the clock stands still
    // afterwards, so no sweep can take the second outcome before result() reads it.
    const clock = new MockClock();
    const { runner } = await setup({ retentionMs: 1000, clock });
    runner.register(add);
    calls = 0;
    const worker = runner.spawn();
    const h = await runner.submit(add, { a: 1, b: 2, key: 'r' });
    await h.result();
    await clock.advance(1100);
    await runner.runtime.sweepMemosNow();
    await runner.runtime.sweepFinishedRunsNow();
    expect(await h.fetchResult()).toBeNull();
    const again = await runner.submit(add, { a: 1, b: 2, key: 'r' });
    expect(again.id).toBe(h.id);
    expect(again.newlySubmitted).toBe(true);
    expect((await again.result()).sum).toBe(3);
    expect(calls).toBe(2);
    await worker.shutdown();
  });

  it('types flow from the definition to the handle', async () => {
    const { runner } = await setup();
    runner.register(refuses).register(add);
    expectTypeOf(refuses).toEqualTypeOf<Job<{ amount: number }, string, { code: 'too_large'; limit: number }>>();
    // A real submission: awaited below, so it settles before the test's queue closes.
    const submitted = runner.submit(refuses, { amount: 1 });
    expectTypeOf(submitted).resolves.toEqualTypeOf<JobHandle<string, { code: 'too_large'; limit: number }>>();
    expectTypeOf<ReturnType<JobHandle<string, number>['result']>>().toEqualTypeOf<Promise<string>>();
    expectTypeOf<Awaited<ReturnType<JobHandle<string, number>['fetchResult']>>>().toEqualTypeOf<JobResult<string, number> | null>();
    expectTypeOf(add).toEqualTypeOf<Job<AddInput, { sum: number; at: Date }, never>>();
    // @ts-expect-error the input type is checked
    await runner.submit(refuses, { amount: 'ten' }).catch(() => undefined);
    expect((await submitted).jobName).toBe('test.refuses');
  });
});
