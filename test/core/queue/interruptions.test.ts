/**
 * Issue #13: a delivery interrupted by a process exit (a crash, a tab reload, a close with the
 * claim held) gives its try back and counts against the queue's `maxInterruptions`, not against
 * `maxAttempts`. A lease that expires while the process lives stays a failed try.
 */
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../../src/core/errors.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { GetOptions, StoredObject } from '../../../src/core/objects/object-store.js';
import type { JobRecord } from '../../../src/core/queue/records/job-record.js';
import type { Queue } from '../../../src/core/queue/queue.js';
import type { QueueOptions } from '../../../src/core/queue/queue-options.js';
import { runWorker } from '../../../src/core/queue/workers/worker.js';
import { b, makeHarness, type QueueHarness } from './harness.js';

const memory = () => new MemoryObjectStore();
const DEFAULT_POISON_REASON = 'interrupted 20 times (process exit, crash or abandoned delivery)';

/** Claims the job, then closes the queue with the claim unsettled and reopens it (a process exit). */
async function claimAndExit(h: QueueHarness, q: Queue, options: QueueOptions): Promise<{ claimed: JobRecord; q: Queue }> {
  const claim = await q.claim('q', 60_000);
  expect(claim).toBeDefined();
  await q.close();
  return { claimed: claim!.job, q: await h.open(options) };
}

describe('interrupted deliveries (issue #13)', () => {
  it('10 interruptions then a success: the job completes with attempts 1 and interruptions 10', async () => {
    const h = await makeHarness(memory);
    const options: QueueOptions = { defaultQueueConfig: { maxAttempts: 3, keepDoneMs: 60_000 } };
    let q = await h.open(options);
    const id = await q.enqueue('q', b('long step'));
    for (let i = 0; i < 10; i++) {
      const r = await claimAndExit(h, q, options);
      expect(r.claimed).toMatchObject({ attempts: 1, interruptions: i });
      q = r.q;
      expect(await q.getJob(id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: i + 1 });
    }
    const last = (await q.claim('q', 60_000))!;
    expect(last.job).toMatchObject({ attempts: 1, interruptions: 10 });
    await q.ack(last);
    expect(await q.getJob(id)).toMatchObject({ status: 'done', attempts: 1, interruptions: 10 });
    const history = await q.attemptHistory(id);
    expect(history.map((a) => [a.outcome, a.attempt])).toEqual([...Array.from({ length: 10 }, () => ['interrupted', 1]), ['completed', 1]]);
    expect(await q.stats('q')).toMatchObject({ done: 1, dead: 0, pending: 0, claimed: 0 });
    await q.close();
  });

  it('dead-letters a job interrupted maxInterruptions times (default 20), with a reason that says so', async () => {
    const h = await makeHarness(memory);
    let q = await h.open();
    const id = await q.enqueue('q', b('poison'));
    for (let i = 0; i < 20; i++) q = (await claimAndExit(h, q, {})).q;
    expect(await q.getJob(id)).toMatchObject({ status: 'dead', lastError: DEFAULT_POISON_REASON, attempts: 0, interruptions: 20 });
    const history = await q.attemptHistory(id);
    expect(history).toHaveLength(20);
    expect(history[19]).toMatchObject({ outcome: 'dead_lettered', attempt: 1, error: DEFAULT_POISON_REASON });
    expect(await q.stats('q')).toMatchObject({ dead: 1, pending: 0, claimed: 0 });
    expect(await q.claim('q', 1000)).toBeUndefined();
    await q.close();
  });

  it('honours a per-queue maxInterruptions, and a dead requeue resets both counts', async () => {
    const h = await makeHarness(memory);
    const options: QueueOptions = { queueConfigs: { q: { maxInterruptions: 2 } } };
    let q = await h.open(options);
    const id = await q.enqueue('q', b('poison'));
    const other = await q.enqueue('other', b('fine'));
    q = (await claimAndExit(h, q, options)).q;
    expect(await q.getJob(id)).toMatchObject({ status: 'pending', interruptions: 1 });
    q = (await claimAndExit(h, q, options)).q;
    expect(await q.getJob(id)).toMatchObject({ status: 'dead', lastError: 'interrupted 2 times (process exit, crash or abandoned delivery)' });
    expect((await q.getJob(other))!.status).toBe('pending');
    await q.requeueDeadJob(id);
    expect(await q.getJob(id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: 0 });
    await q.close();
  });

  it('failures still dead-letter at maxAttempts, whatever the interruptions', async () => {
    const h = await makeHarness(memory);
    const options: QueueOptions = { defaultQueueConfig: { maxAttempts: 2, maxInterruptions: 5, retryBackoffBaseMs: 0 } };
    let q = await h.open(options);
    const id = await q.enqueue('q', b('flaky'));
    q = (await claimAndExit(h, q, options)).q;
    const first = (await q.claim('q', 60_000))!;
    expect(first.job).toMatchObject({ attempts: 1, interruptions: 1 });
    expect(await q.nack(first, 'boom 1')).toEqual({ type: 'retried' });
    q = (await claimAndExit(h, q, options)).q;
    q = (await claimAndExit(h, q, options)).q;
    const second = (await q.claim('q', 60_000))!;
    expect(second.job).toMatchObject({ attempts: 2, interruptions: 3 });
    expect(await q.nack(second, 'boom 2')).toMatchObject({ type: 'dead_lettered' });
    expect(await q.getJob(id)).toMatchObject({ status: 'dead', lastError: 'boom 2', attempts: 2, interruptions: 3 });
    expect((await q.attemptHistory(id)).map((a) => [a.outcome, a.attempt])).toEqual([
      ['interrupted', 1],
      ['retried', 1],
      ['interrupted', 2],
      ['interrupted', 2],
      ['dead_lettered', 2],
    ]);
    await q.close();
  });

  it('a lease that expires while the process lives is a failed try, not an interruption', async () => {
    const h = await makeHarness(memory);
    const q = await h.open({ defaultQueueConfig: { maxAttempts: 2 } });
    const id = await q.enqueue('q', b('stuck'));
    await q.claim('q', 1000);
    await h.clock.advance(1000);
    expect(await q.reapNow()).toBe(1);
    expect(await q.getJob(id)).toMatchObject({ status: 'pending', attempts: 1, interruptions: 0 });
    expect((await q.claim('q', 1000))!.job).toMatchObject({ attempts: 2, interruptions: 0 });
    await h.clock.advance(1000);
    await q.reapNow();
    expect(await q.getJob(id)).toMatchObject({ status: 'dead', lastError: 'lease expired', interruptions: 0 });
    await q.close();
  });

  it('a claim the queue could not deliver (payload fetch failed) is requeued at the next reap as an interruption', async () => {
    const h = await makeHarness(memory);
    const payloads = new FlakyGetStore();
    const q = await h.open({ payloadStore: payloads, payloadOffloadThreshold: 4, defaultQueueConfig: { maxAttempts: 1 } });
    const id = await q.enqueue('q', b('a large payload'));
    payloads.failGets = true;
    await expect(q.claim('q', 60_000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    payloads.failGets = false;
    expect((await q.getJob(id))!.status).toBe('claimed');
    expect(await q.reapNow()).toBe(1);
    expect(await q.getJob(id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: 1 });
    const again = (await q.claim('q', 60_000))!;
    expect(again.job).toMatchObject({ attempts: 1, interruptions: 1 });
    await q.ack(again);
    await q.close();
  });

  it("gives worker-loop handlers the job's interruption count", async () => {
    const h = await makeHarness(memory);
    let q = await h.open();
    const id = await q.enqueue('q', b('x'));
    q = (await claimAndExit(h, q, {})).q;
    q = (await claimAndExit(h, q, {})).q;
    const seen: Array<Pick<JobRecord, 'id' | 'attempts' | 'interruptions'>> = [];
    const stop = new AbortController();
    await runWorker(
      q,
      'q',
      async (job) => {
        seen.push({ id: job.id, attempts: job.attempts, interruptions: job.interruptions });
        stop.abort();
      },
      { signal: stop.signal },
    );
    expect(seen).toEqual([{ id, attempts: 1, interruptions: 2 }]);
    await q.close();
  });

  it.each([0, -1, 1.5, '3', Number.NaN])('rejects maxInterruptions=%s with INVALID_CONFIG', async (value) => {
    const h = await makeHarness(memory);
    await expect(h.open({ defaultQueueConfig: { maxInterruptions: value as number } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(h.open({ queueConfigs: { q: { maxInterruptions: value as number } } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});

/** A payload store whose gets fail (a transient store error) while `failGets` is set. */
class FlakyGetStore extends MemoryObjectStore {
  failGets = false;

  override get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    if (this.failGets) return Promise.reject(new StoreUnavailableError(`injected get failure. key=${key}`));
    return super.get(key, options);
  }
}
