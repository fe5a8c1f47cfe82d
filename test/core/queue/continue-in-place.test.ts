/**
 * `Queue.ackContinuing` (internal, a workflow's next step run in place): the ack keeps the job,
 * rewritten as the next one under the same id and still claimed by the acking handle with a fresh
 * token, only when `mayContinueInPlace` (no kept done jobs, inline payload, nothing of higher
 * priority waiting).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { PRIORITY_HIGH, PRIORITY_LOW } from '../../../src/core/queue/constants.js';
import type { Queue } from '../../../src/core/queue/queue.js';
import type { Claim } from '../../../src/core/queue/transitions/claim.js';
import { runClaimLoop } from '../../../src/core/queue/workers/worker.js';
import { b, makeHarness, s } from './harness.js';

const next = (payload: string, headers: Record<string, string> = {}) => ({ payload: b(payload), headers });

async function claimOne(q: Queue, leaseMs = 60_000): Promise<Claim> {
  const claim = await q.claim('q', leaseMs);
  expect(claim).toBeDefined();
  return claim!;
}

describe('queue ackContinuing', () => {
  it('keeps the job: same id, the next payload and headers, a fresh try, still claimed here; no counter moves', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const id = await q.enqueue('q', b('first'), { headers: { step: '0' }, maxAttempts: 4 });
    const first = await claimOne(q);
    expect(q.mayContinueInPlace(first, b('second'))).toBe(true);
    h.clock.advance(1_000);
    const second = await q.ackContinuing(first, next('second', { step: '1' }));
    expect(second.id).toBe(id);
    expect(s(second.job.payload)).toBe('second');
    expect(second.job).toMatchObject({ status: 'claimed', attempts: 1, maxAttempts: 4, headers: { step: '1' }, claimedAt: h.clock.now(), enqueuedAt: h.clock.now() });
    expect(await q.getJob(id)).toMatchObject({ status: 'claimed', attempts: 1, headers: { step: '1' } });
    expect(s((await q.getJob(id))!.payload)).toBe('second');
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 1, done: 0 });
    // One lease, the new delivery's: the old claim can no longer settle.
    expect(q.liveLeases().map((l) => l.id)).toEqual([id]);
    await expect(q.ack(first)).rejects.toMatchObject({ code: 'CLAIM_LOST' });
    expect(await q.claim('q', 60_000)).toBeUndefined();
    await q.ack(second);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 1 });
    expect(q.liveLeases()).toEqual([]);
    expect(await q.getJob(id)).toBeUndefined();
    await q.close();
  });

  it('overtakes waiting jobs of the same or a lower priority, never a higher one', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('a'));
    await q.enqueue('q', b('b'));
    await q.enqueue('q', b('low'), { priority: PRIORITY_LOW });
    const a = await claimOne(q);
    // 'b' (same priority) and 'low' wait: the next job runs first.
    expect(q.mayContinueInPlace(a, b('a2'))).toBe(true);
    const a2 = await q.ackContinuing(a, next('a2'));
    // A job of higher priority waits now: not in place (the caller enqueues instead).
    await q.enqueue('q', b('urgent'), { priority: PRIORITY_HIGH });
    expect(q.mayContinueInPlace(a2, b('a3'))).toBe(false);
    await q.ackWith(a2, { enqueues: [{ queue: 'q', payload: b('a3') }] });
    const order: string[] = [];
    for (let c = await q.claim('q', 60_000); c !== undefined; c = await q.claim('q', 60_000)) {
      order.push(s(c.job.payload));
      await q.ack(c);
    }
    expect(order).toEqual(['urgent', 'b', 'a3', 'low']);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 5 });
    await q.close();
  });

  it('is not for a queue that keeps done jobs or a payload that would be offloaded, and validates the next job', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open({ payloadOffloadThreshold: 64, queueConfigs: { kept: { keepDoneMs: 60_000 } } });
    await q.enqueue('kept', b('k'));
    const kept = (await q.claim('kept', 60_000))!;
    expect(q.mayContinueInPlace(kept, b('k2'))).toBe(false);
    await expect(q.ackContinuing(kept, next('k2'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await q.enqueue('q', b('x'));
    const x = await claimOne(q);
    const big = new Uint8Array(65);
    expect(q.mayContinueInPlace(x, big)).toBe(false);
    await expect(q.ackContinuing(x, { payload: big, headers: {} })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(q.ackContinuing(x, { payload: b('y'), headers: { bad: 7 } as unknown as Record<string, string> })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(q.ackContinuing(x, { payload: 'y' as unknown as Uint8Array, headers: {} })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    // Refused before anything applied: the claim still settles.
    expect(await q.getJob(x.id)).toMatchObject({ status: 'claimed' });
    await q.ack(x);
    await q.close();
  });

  it('keeps a cancel requested during the delivery, and drops the attempt history of the acked try', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0 } });
    const id = await q.enqueue('q', b('first'));
    await q.nack(await claimOne(q), 'flaky');
    const retried = await claimOne(q);
    expect(retried.job.attempts).toBe(2);
    expect(await q.attemptHistory(id)).toHaveLength(1);
    expect(await q.cancel(id)).toBe('requested');
    const continued = await q.ackContinuing(retried, next('second'));
    expect(continued.job).toMatchObject({ attempts: 1, cancelRequested: true });
    expect(continued.signal.aborted).toBe(true);
    expect(await q.attemptHistory(id)).toEqual([]);
    await q.ack(continued);
    await q.close();
  });

  it('leaves the old delivery in place when the ack fails: it still settles, and a reaped one is CLAIM_LOST', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const existing = await q.enqueue('q', b('existing'), { priority: PRIORITY_LOW });
    await q.enqueue('q', b('carrier'));
    const carrier = await claimOne(q);
    // An effect that cannot apply (an override id in use) rolls the whole ack back.
    const clash = { enqueues: [{ queue: 'q', payload: b('dup'), options: { idOverride: existing } }] };
    await expect(q.ackContinuing(carrier, next('second'), clash)).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(q.liveLeases().map((l) => l.id)).toEqual([carrier.id]);
    expect(s((await q.getJob(carrier.id))!.payload)).toBe('carrier');
    // The lease ran out and the reaper took the claim back: CLAIM_LOST, nothing registered.
    h.clock.advance(61_000);
    await q.reapNow();
    await expect(q.ackContinuing(carrier, next('lost'))).rejects.toMatchObject({ code: 'CLAIM_LOST' });
    expect(q.liveLeases()).toEqual([]);
    expect(await q.stats('q')).toMatchObject({ pending: 2, claimed: 0 });
    await q.close();
  });

  it('a reaper racing the continuation of an expired lease either ends the old try or leaves the continued job alone', async () => {
    const seen = new Set<string>();
    for (let delay = 0; delay < 6; delay++) {
      const h = await makeHarness(() => new MemoryObjectStore());
      const q = await h.open();
      const id = await q.enqueue('q', b('first'));
      const first = await claimOne(q, 1_000);
      h.clock.advance(2_000);
      // Both start in the same tick, the reaper `delay` microtask turns after the continuation.
      const continuing = q.ackContinuing(first, next('second')).then(
        (c) => c,
        (e: unknown) => e,
      );
      let tick: Promise<void> = Promise.resolve();
      for (let i = 0; i < delay; i++) tick = tick.then(() => undefined);
      const reaping = tick.then(() => q.reapNow());
      const [outcome] = await Promise.all([continuing, reaping]);
      const stored = (await q.getJob(id))!;
      seen.add(outcome instanceof Error ? 'ended' : 'continued');
      if (outcome instanceof Error) {
        expect(outcome, `delay ${delay}`).toMatchObject({ code: 'CLAIM_LOST' });
        expect([stored.status, s(stored.payload)], `delay ${delay}`).toEqual(['pending', 'first']);
      } else {
        // Continued: the job is the next one, claimed by this handle, and the reaper left it.
        expect([stored.status, s(stored.payload)], `delay ${delay}`).toEqual(['claimed', 'second']);
        expect(q.liveLeases().map((l) => [l.id, l.reaping]), `delay ${delay}`).toEqual([[id, false]]);
        await q.ack(outcome as Claim);
      }
      await q.close();
    }
    // The delays cover both orders (the memory store's interleaving is deterministic).
    expect([...seen].sort()).toEqual(['continued', 'ended']);
  });

  it('a continued job whose handle dies is recovered at the next open as an interrupted delivery of the next job', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    await q.enqueue('q', b('first'));
    const continued = await q.ackContinuing(await claimOne(q), next('second'));
    // A second writer fences the first (a crash and restart); the claim it held comes back.
    const q2 = await h.open();
    expect(await q2.getJob(continued.id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: 1 });
    const again = await claimOne(q2);
    expect([again.id, s(again.job.payload)]).toEqual([continued.id, 'second']);
    await q2.ack(again);
    expect(await q2.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 1 });
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
        resume(await q.ackContinuing(claim, next('second')));
      } else await q.ack(claim);
    });
    await loop;
    expect(handled).toEqual(['first', 'second']);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 1 });
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
        resume(await q.ackContinuing(claim, next('second')));
      } else {
        await q.ack(claim);
        stop.abort();
      }
    });
    await loop;
    expect(handled).toEqual(['first', 'second']);
    await q.close();
  });

  it('a resumed claim interrupts the idle wait without scanning again; an insert still wakes it, once', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    let scans = 0;
    const claimBatch = q.claimBatch.bind(q);
    q.claimBatch = (...args: Parameters<Queue['claimBatch']>) => {
      scans++;
      return claimBatch(...args);
    };
    const stop = new AbortController();
    const handled: string[] = [];
    let ranLast!: () => void;
    const lastRan = new Promise<void>((resolve) => (ranLast = resolve));
    // The poll interval is an hour of the mock clock: only an insert or a resume ends a wait.
    const loop = runClaimLoop(q, 'q', 2, 3_600_000, stop.signal, async (claim, issued, resume) => {
      const payload = s(claim.job.payload);
      handled.push(payload);
      issued();
      const step = Number(payload.slice(1));
      if (step < 5) resume(await q.ackContinuing(claim, next(`${payload[0]}${step + 1}`)));
      else {
        await q.ack(claim);
        if (payload === 'b5') ranLast();
      }
    });
    const settled = async (): Promise<void> => {
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
    };
    await settled();
    expect(scans).toBe(1); // found nothing: the loop waits
    // Each insert wakes it: one scan takes the job, one finds nothing; its next five steps come
    // back as resumed claims, which scan nothing.
    await q.enqueue('q', b('a0'));
    while (!handled.includes('a5')) await settled();
    await settled();
    expect(scans).toBe(3);
    await q.enqueue('q', b('b0'));
    await lastRan;
    await settled();
    expect(scans).toBe(5);
    stop.abort();
    await loop;
    expect(handled).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'b0', 'b1', 'b2', 'b3', 'b4', 'b5']);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 2 });
    await q.close();
  });

  it('several loops with resumed claims and inserts landing at any moment leave no job waiting for a poll deadline', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const q = await h.open();
    const stop = new AbortController();
    const steps = new Map<string, number>();
    let finished = 0;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    const JOBS = 40;
    // Job `j<n>` takes n % 5 more steps as resumed claims, then acks.
    const handler = async (claim: Claim, issued: () => void, resume: (taken: Claim) => void): Promise<void> => {
      const name = s(claim.job.payload);
      const left = steps.get(name) ?? Number(name.slice(1)) % 5;
      steps.set(name, left - 1);
      await new Promise((resolve) => setImmediate(resolve));
      issued();
      if (left > 0) resume(await q.ackContinuing(claim, next(name)));
      else {
        await q.ack(claim);
        if (++finished === JOBS) allDone();
      }
    };
    // The poll interval is an hour of a mock clock that never moves: only wakeups drive the loops.
    const loops = [1, 2, 3].map((concurrency) => runClaimLoop(q, 'q', concurrency, 3_600_000, stop.signal, handler));
    let seed = 7;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < JOBS; i++) {
      await q.enqueue('q', b(`j${i}`));
      for (let turns = Math.floor(random() * 4); turns > 0; turns--) await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
    stop.abort();
    await Promise.all(loops);
    expect(finished).toBe(JOBS);
    expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: JOBS });
    await q.close();
  });
});
