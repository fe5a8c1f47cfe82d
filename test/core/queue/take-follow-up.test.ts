/**
 * `Queue.ackTakingFollowUp` (internal, a workflow's next step run in place): the acking handle
 * takes its first follow-up as a claim in the ack's transaction, only when nothing of higher
 * priority waits; otherwise the follow-up is enqueued as usual.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { PRIORITY_HIGH, PRIORITY_LOW } from '../../../src/core/queue/constants.js';
import type { Queue } from '../../../src/core/queue/queue.js';
import type { EnqueueOptions } from '../../../src/core/queue/transitions/enqueue.js';
import { runClaimLoop } from '../../../src/core/queue/workers/worker.js';
import { b, makeHarness, s } from './harness.js';

const followUp = (payload: string, options: EnqueueOptions = {}) => ({ enqueues: [{ queue: 'q', payload: b(payload), options }] });

async function claimOne(q: Queue) {
  const claim = await q.claim('q', 60_000);
  expect(claim).toBeDefined();
  return claim!;
}

describe('queue ackTakingFollowUp', () => {
  it('takes a follow-up due now when the queue is empty: claimed, counted, settled like any claim', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('first'));
    const first = await claimOne(q);
    const issued: boolean[] = [];
    const next = await q.ackTakingFollowUp(first, followUp('second'), (took) => issued.push(took));
    expect(issued).toEqual([true]);
    expect(next).toBeDefined();
    expect(s(next!.job.payload)).toBe('second');
    expect(next!.job).toMatchObject({ status: 'claimed', attempts: 1, claimedAt: h.clock.now() });
    expect(await q.getJob(next!.id)).toMatchObject({ status: 'claimed', attempts: 1 });
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 1, done: 1 });
    expect(q.liveLeases().map((l) => l.id)).toEqual([next!.id]);
    // Nothing waits, so a claim finds nothing; the taken job settles like a claimed one.
    expect(await q.claim('q', 60_000)).toBeUndefined();
    await q.ack(next!);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 2 });
    expect(q.liveLeases()).toEqual([]);
    await q.close();
  });

  it('overtakes waiting jobs of the same or a lower priority, never a higher one', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('a'));
    await q.enqueue('q', b('b'));
    await q.enqueue('q', b('low'), { priority: PRIORITY_LOW });
    const a = await claimOne(q);
    // 'b' (same priority) and 'low' wait: the follow-up runs first.
    const taken = await q.ackTakingFollowUp(a, followUp('a2'));
    expect(taken && s(taken.job.payload)).toBe('a2');

    // A job of higher priority waits now: the follow-up is enqueued behind it.
    await q.enqueue('q', b('urgent'), { priority: PRIORITY_HIGH });
    const issued: boolean[] = [];
    expect(await q.ackTakingFollowUp(taken!, followUp('a3'), (took) => issued.push(took))).toBeUndefined();
    expect(issued).toEqual([false]);
    expect(q.liveLeases()).toEqual([]);
    const order: string[] = [];
    for (let c = await q.claim('q', 60_000); c !== undefined; c = await q.claim('q', 60_000)) {
      order.push(s(c.job.payload));
      await q.ack(c);
    }
    expect(order).toEqual(['urgent', 'b', 'a3', 'low']);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 6 });
    await q.close();
  });

  it('enqueues as usual what it may not take: scheduled, deduplicated, for another queue', async () => {
    const cases: { name: string; effects: { enqueues: { queue: string; payload: Uint8Array; options?: EnqueueOptions }[] }; queue: string; status: 'pending' | 'scheduled' }[] = [
      { name: 'scheduled', effects: followUp('later', { runAt: 1_700_000_060_000 }), queue: 'q', status: 'scheduled' },
      { name: 'dedup', effects: followUp('dedup', { dedupKey: 'k' }), queue: 'q', status: 'pending' },
      { name: 'other queue', effects: { enqueues: [{ queue: 'other', payload: b('elsewhere') }] }, queue: 'other', status: 'pending' },
    ];
    for (const c of cases) {
      const h = await makeHarness(() => new MemoryObjectStore());
      const q = await h.open();
      await q.enqueue('q', b('carrier'));
      expect(await q.ackTakingFollowUp(await claimOne(q), c.effects), c.name).toBeUndefined();
      expect(await q.stats(c.queue), c.name).toMatchObject({ [c.status]: 1, claimed: 0 });
      expect(q.liveLeases(), c.name).toEqual([]);
      await q.close();
    }
  });

  it('leaves no lease behind when the ack fails, and a taken override id is refused like an enqueue', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const existing = await q.enqueue('q', b('existing'), { priority: PRIORITY_LOW });
    await q.enqueue('q', b('carrier'));
    const carrier = await claimOne(q);
    await expect(q.ackTakingFollowUp(carrier, followUp('dup', { idOverride: existing }))).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    // The first follow-up is taken (its lease registered), then the second enqueue is refused:
    // the whole ack rolls back and the taken one's lease goes with it.
    const twoFollowUps = { enqueues: [{ queue: 'q', payload: b('taken') }, { queue: 'q', payload: b('dup'), options: { idOverride: existing } }] };
    await expect(q.ackTakingFollowUp(carrier, twoFollowUps)).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(q.liveLeases().map((l) => l.id)).toEqual([carrier.id]);
    // The lease ran out and the reaper took the claim back: CLAIM_LOST, nothing registered.
    h.clock.advance(61_000);
    await q.reapNow();
    await expect(q.ackTakingFollowUp(carrier, followUp('lost'))).rejects.toMatchObject({ code: 'CLAIM_LOST' });
    expect(q.liveLeases()).toEqual([]);
    expect(await q.stats('q')).toMatchObject({ pending: 2, claimed: 0 });
    await q.close();
  });

  it('a taken follow-up whose handle dies is recovered at the next open as an interrupted delivery', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('first'));
    const next = await q.ackTakingFollowUp(await claimOne(q), followUp('second'));
    expect(next).toBeDefined();
    // A second writer fences the first (a crash and restart); the claim it held comes back.
    const q2 = await h.open();
    expect(await q2.getJob(next!.id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: 1 });
    const again = await claimOne(q2);
    expect(again.id).toBe(next!.id);
    await q2.ack(again);
    expect(await q2.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 2 });
    await q2.close();
    await q.close().catch(() => undefined);
  });
});

describe('worker loop: claims a settlement took', () => {
  it('runs a resumed claim in the next free slot, also once the loop is stopping, and resolves after it', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('first'));
    const stop = new AbortController();
    const handled: string[] = [];
    const loop = runClaimLoop(q, 'q', 1, 60_000, stop.signal, async (claim, issued, resume) => {
      const payload = s(claim.job.payload);
      handled.push(payload);
      issued();
      if (payload === 'first') {
        // Stop the loop while this ack (which takes its follow-up) is in flight.
        stop.abort();
        const next = await q.ackTakingFollowUp(claim, followUp('second'));
        expect(next).toBeDefined();
        resume(next!);
      } else await q.ack(claim);
    });
    await loop;
    expect(handled).toEqual(['first', 'second']);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 2 });
    await q.close();
  });

  it('a resumed claim ends an idle wait for inserts', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('first'));
    const stop = new AbortController();
    const handled: string[] = [];
    // The poll interval is an hour of the mock clock: only a wakeup ends the loop's idle wait.
    const loop = runClaimLoop(q, 'q', 2, 3_600_000, stop.signal, async (claim, issued, resume) => {
      const payload = s(claim.job.payload);
      handled.push(payload);
      issued();
      if (payload === 'first') {
        const next = await q.ackTakingFollowUp(claim, followUp('second'));
        resume(next!);
      } else {
        await q.ack(claim);
        stop.abort();
      }
    });
    await loop;
    expect(handled).toEqual(['first', 'second']);
    await q.close();
  });
});
