/**
 * `nack` with `retryAfterMs` and the `RetryLater` handler error: the retry waits for the longer of
 * the queue's backoff and the requested delay (an HTTP Retry-After, for webhook deliveries).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import { MemoryObjectStore } from '../../../src/core/objects/index.js';
import { Queue, RetryLater, processClaim } from '../../../src/core/queue/index.js';

async function open(clock: MockClock): Promise<Queue> {
  return Queue.open(new MemoryObjectStore(), { path: 'q', clock, logger: false, defaultQueueConfig: { retryBackoffBaseMs: 1_000, maxAttempts: 3 } });
}

describe('nack with retryAfterMs', () => {
  it('schedules the retry at now + max(backoff, retryAfterMs)', async () => {
    const clock = new MockClock();
    const queue = await open(clock);
    const id = await queue.enqueue('jobs', utf8('x'));
    await queue.nack((await queue.claim('jobs', 10_000))!, 'later', { retryAfterMs: 60_000 });
    expect((await queue.getJob(id))?.runAt).toBe(clock.now() + 60_000);
    await clock.advance(60_000);
    await queue.promoteScheduledNow();
    // A shorter request than the backoff keeps the backoff (attempt 2: 2 s).
    await queue.nack((await queue.claim('jobs', 10_000))!, 'soon', { retryAfterMs: 10 });
    expect((await queue.getJob(id))?.runAt).toBe(clock.now() + 2_000);
    await queue.close();
  });

  it('rejects a negative retryAfterMs with INVALID_ARGUMENT', async () => {
    const queue = await open(new MockClock());
    await queue.enqueue('jobs', utf8('x'));
    const claim = (await queue.claim('jobs', 10_000))!;
    await expect(queue.nack(claim, 'x', { retryAfterMs: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await queue.close();
  });

  it('a handler throwing RetryLater nacks with its delay', async () => {
    const clock = new MockClock();
    const queue = await open(clock);
    const id = await queue.enqueue('jobs', utf8('x'));
    await processClaim(queue, (await queue.claim('jobs', 10_000))!, async () => {
      throw new RetryLater('busy', 30_000);
    });
    const job = await queue.getJob(id);
    expect(job).toMatchObject({ status: 'scheduled', lastError: 'busy', runAt: clock.now() + 30_000 });
    await queue.close();
  });
});
