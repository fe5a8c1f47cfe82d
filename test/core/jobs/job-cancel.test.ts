/**
 * A cancelled job gives one answer at any time (issue 25): `result()` waiting when the cancel
 * lands, `result()` asked afterwards (also through a new handle after a restart) and
 * `fetchResult()` all answer JOB_FAILED with reason `cancelled`, from the run's finished-run
 * record, until retention sweeps it (then NOT_FOUND, like any swept job).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineJob, JobFailedError, JobRunner, MemoryObjectStore, Queue, type JobHandle } from '../../../src/index.js';
import { MockClock } from '../../../src/testing/index.js';
import { eventually } from '../workflow/harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(options: ConstructorParameters<typeof JobRunner>[2] = {}) {
  const store = new MemoryObjectStore();
  // The runner's clock drives the queue too (a MockClock: retention is then mock time).
  const clock = options.clock === undefined ? {} : { clock: options.clock };
  const queue = await Queue.open(store, 'app', { ...clock, logger: false });
  const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false, ...options });
  cleanups.push(async () => queue.close().catch(() => undefined));
  return { store, queue, runner };
}

const started: string[] = [];
const hang = defineJob({
  name: 'test.hang',
  run: (_: null, ctx) =>
    new Promise<never>((_resolve, reject) => {
      started.push(ctx.id);
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
    }),
});
const later = defineJob({ name: 'test.later', run: async (n: number) => n + 1 });

async function failure(handle: JobHandle<unknown, unknown>): Promise<JobFailedError> {
  const e = await handle.result().then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(JobFailedError);
  return e as JobFailedError;
}

describe('cancelled jobs', () => {
  it('a pending job cancelled: a waiting result(), a later one and fetchResult give the same cancelled failure', async () => {
    const { runner } = await setup();
    runner.register(later);
    const handle = await runner.submit(later, 1, { runAt: Date.now() + 3_600_000 });
    const waiting = failure(handle);
    await eventually(async () => (await handle.status())?.state === 'pending');
    expect(await handle.cancel()).toBe(true);
    const first = await waiting;
    expect(first).toMatchObject({ code: 'JOB_FAILED', reason: 'cancelled', jobId: handle.id, details: { reason: 'cancelled', message: 'the job was cancelled' } });
    const again = await failure(handle);
    expect([again.reason, again.details]).toEqual([first.reason, first.details]);
    const fetched = await handle.fetchResult();
    expect(fetched?.ok).toBe(false);
    expect(fetched && !fetched.ok && [fetched.error.reason, fetched.error.details]).toEqual([first.reason, first.details]);
    expect(await runner.cancel(handle.id)).toBe(false);
  });

  it('a running job cancelled: its signal fires and every answer is the same, also from a handle after a restart', async () => {
    const store = new MemoryObjectStore();
    let queue = await Queue.open(store, 'app', { logger: false });
    cleanups.push(async () => queue.close().catch(() => undefined));
    const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false }).register(hang);
    const worker = runner.spawn();
    const handle = await runner.submit(hang, null);
    const waiting = failure(handle);
    await eventually(() => started.includes(handle.id));
    expect(await runner.cancel(handle.id)).toBe(true);
    const first = await waiting;
    expect(first.reason).toBe('cancelled');
    expect((await failure(handle)).details).toEqual(first.details);
    await worker.shutdown();
    await queue.close();

    queue = await Queue.open(store, 'app', { logger: false });
    const restarted = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false }).register(hang);
    const fresh = restarted.handle(hang, handle.id);
    expect((await failure(fresh)).details).toEqual(first.details);
    expect(await fresh.status()).toBeNull();
  });

  it('after retention sweeps the record, a cancelled job is NOT_FOUND like any swept job', async () => {
    // A 1 s window on a mock clock: the record is swept only once the clock has moved past it.
    const clock = new MockClock();
    const { runner } = await setup({ retentionMs: 1000, clock });
    runner.register(later);
    const handle = await runner.submit(later, 1, { runAt: clock.now() + 3_600_000 });
    expect(await runner.cancel(handle.id)).toBe(true);
    expect((await failure(handle)).reason).toBe('cancelled');
    await runner.runtime.sweepFinishedRunsNow();
    expect((await failure(handle)).reason).toBe('cancelled'); // still inside the window: kept
    await clock.advance(1100);
    await runner.runtime.sweepFinishedRunsNow();
    await expect(handle.result()).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await handle.fetchResult()).toBeNull();
  });
});
