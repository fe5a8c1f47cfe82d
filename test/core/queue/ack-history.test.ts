/**
 * An ack that keeps no done record deletes the job's attempt history only when the job may have
 * one (`mayHaveHistory`): after a retry, an expired lease, an interruption, a dead requeue.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { mayHaveHistory } from '../../../src/core/queue/records/job-record.js';
import { b, makeHarness } from './harness.js';

describe('ack and attempt history', () => {
  it('deletes the history of a retried, an interrupted and a requeued job', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    let q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0, maxAttempts: 1 } });
    const retried = await q.enqueue('q', b('retried'), { maxAttempts: 2 });
    await q.nack((await q.claim('q', 60_000))!, 'first try failed');
    const c1 = (await q.claim('q', 60_000))!;
    expect(c1.id).toBe(retried);
    expect(mayHaveHistory(c1.job)).toBe(true);
    expect(await q.attemptHistory(retried)).toHaveLength(1);
    await q.ack(c1);
    expect(await q.attemptHistory(retried)).toEqual([]);

    const requeued = await q.enqueue('q', b('requeued'));
    await q.nack((await q.claim('q', 60_000))!, 'dead at once');
    await q.requeueDeadJob(requeued);
    const c2 = (await q.claim('q', 60_000))!;
    expect(c2.job).toMatchObject({ id: requeued, attempts: 1, interruptions: 0, requeuedAt: h.clock.now() });
    expect(c2.job.lastError).toBeUndefined();
    expect(await q.attemptHistory(requeued)).toHaveLength(2);
    await q.ack(c2);
    expect(await q.attemptHistory(requeued)).toEqual([]);

    const interrupted = await q.enqueue('q', b('interrupted'));
    await q.claim('q', 60_000);
    await q.kvPut(b('flush'), b('the claim is durable with this')); // a claim commits without waiting
    q = await h.open(); // the first writer's claim is found at open: an interruption
    const c3 = (await q.claim('q', 60_000))!;
    expect(c3.job).toMatchObject({ id: interrupted, attempts: 1, interruptions: 1 });
    expect(await q.attemptHistory(interrupted)).toHaveLength(1);
    await q.ack(c3);
    expect(await q.attemptHistory(interrupted)).toEqual([]);

    // A first try that succeeds has none to delete.
    await q.enqueue('q', b('plain'));
    expect(mayHaveHistory((await q.claim('q', 60_000))!.job)).toBe(false);
    await q.close();
  });

  it('a requeued record survives an encode and decode round trip with requeuedAt', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open({ defaultQueueConfig: { maxAttempts: 1 } });
    const id = await q.enqueue('q', b('x'));
    await q.nack((await q.claim('q', 60_000))!, 'dead');
    h.clock.advance(5);
    await q.requeueDeadJob(id);
    await q.close();
    const reopened = await h.open();
    expect(await reopened.getJob(id)).toMatchObject({ status: 'pending', requeuedAt: h.clock.now() });
    await reopened.close();
  });
});
