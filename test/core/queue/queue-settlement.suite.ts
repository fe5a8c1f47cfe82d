/**
 * Settlement, backoff, leases, the reaper, recovery at open and cursor persistence, as a
 * reusable suite over any store factory.
 */
import { describe, expect, it } from 'vitest';
import { BUILTIN_QUEUE_CONFIG } from '../../../src/core/queue/queue-options.js';
import { retryBackoffMs } from '../../../src/core/queue/transitions/retry-backoff.js';
import { b, makeHarness, until, type StoreFactory } from './harness.js';

export function defineQueueSettlementSuite(name: string, factory: StoreFactory): void {
  describe(`queue settlement (${name})`, () => {
    describe('ack, nack, dead-letter', () => {
      it('ack deletes the record by default and counts it done', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        await q.ack((await q.claim('q', 1000))!);
        expect(await q.getJob(id)).toBeUndefined();
        expect(await q.attemptHistory(id)).toEqual([]);
        expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 1 });
        expect(q.liveLeases()).toEqual([]);
        await q.close();
      });

      it('ack keeps a done record when the queue retains done jobs', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ queueConfigs: { keep: { keepDoneMs: 60_000 } } });
        const id = await q.enqueue('keep', b('x'));
        await q.ack((await q.claim('keep', 1000))!);
        expect(await q.getJob(id)).toMatchObject({ status: 'done', completedAt: h.clock.now() });
        expect((await q.attemptHistory(id)).map((a) => a.outcome)).toEqual(['completed']);
        await q.close();
      });

      it('nack requeues (attempts 2 on re-claim) and dead-letters at max attempts', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0, maxAttempts: 2 } });
        const id = await q.enqueue('q', b('x'));
        expect(await q.nack((await q.claim('q', 1000))!, 'e1')).toEqual({ type: 'retried' });
        const c2 = (await q.claim('q', 1000))!;
        expect(c2.job.attempts).toBe(2);
        expect(c2.job.lastError).toBe('e1');
        expect(await q.nack(c2, 'e2')).toEqual({ type: 'dead_lettered', results: [] });
        expect(await q.getJob(id)).toMatchObject({ status: 'dead', lastError: 'e2', failedAt: h.clock.now(), attempts: 2 });
        expect(await q.stats('q')).toMatchObject({ dead: 1, claimed: 0, pending: 0 });
        const history = await q.attemptHistory(id);
        expect(history.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
          [1, 'retried', 'e1'],
          [2, 'dead_lettered', 'e2'],
        ]);
        await q.close();
      });

      it('deadLetter ignores remaining attempts; get_job tracks the lifecycle', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        expect((await q.getJob(id))!.status).toBe('pending');
        const c = (await q.claim('q', 1000))!;
        expect((await q.getJob(id))!.status).toBe('claimed');
        await q.deadLetter(c, 'poison');
        expect(await q.getJob(id)).toMatchObject({ status: 'dead', attempts: 1, lastError: 'poison' });
        expect(await q.getJob('unknown')).toBeUndefined();
        await q.close();
      });

      it('parks a default nack in scheduled, then promotes it with attempts 2 and last_error kept', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        await q.nack((await q.claim('q', 1000))!, 'flaky');
        expect(await q.getJob(id)).toMatchObject({ status: 'scheduled', runAt: h.clock.now() + 1000 });
        expect(await q.claim('q', 1000)).toBeUndefined();
        await h.clock.advance(999);
        expect(await q.promoteScheduledNow()).toBe(0);
        await h.clock.advance(1);
        expect(await q.promoteScheduledNow()).toBe(1);
        const c = await q.claim('q', 1000);
        expect(c?.job).toMatchObject({ id, attempts: 2, lastError: 'flaky' });
        await q.close();
      });

      it('computes backoff as base·2^(n−1), capped; a zero base means zero', () => {
        const cfg = { ...BUILTIN_QUEUE_CONFIG, retryBackoffBaseMs: 1000, retryBackoffMaxMs: 5000 };
        expect([1, 2, 3, 4, 50].map((n) => retryBackoffMs(cfg, n))).toEqual([1000, 2000, 4000, 5000, 5000]);
        expect(retryBackoffMs({ ...cfg, retryBackoffBaseMs: 0 }, 3)).toBe(0);
      });

      it('drives doubling backoff with the mock clock', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 5, retryBackoffBaseMs: 100, retryBackoffMaxMs: 250 } });
        const id = await q.enqueue('q', b('x'));
        const waits: number[] = [];
        for (let i = 0; i < 3; i++) {
          const c = (await q.claim('q', 1000))!;
          const before = h.clock.now();
          await q.nack(c, `e${i}`);
          waits.push((await q.getJob(id))!.runAt! - before);
          await h.clock.advance(waits[i]);
          await q.promoteScheduledNow();
        }
        expect(waits).toEqual([100, 200, 250]);
        await q.close();
      });
    });

    describe('leases and the reaper', () => {
      it('requeues an expired claim, dead-letters an exhausted one, and skips active leases', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 2 } });
        const a = await q.enqueue('q', b('a'));
        await q.claim('q', 1000);
        const live = await q.enqueue('q', b('live'));
        await q.claim('q', 60_000);
        await h.clock.advance(1000);
        expect(await q.reapNow()).toBe(1);
        expect(await q.getJob(a)).toMatchObject({ status: 'pending' });
        expect((await q.getJob(live))!.status).toBe('claimed');
        const again = (await q.claim('q', 1000))!;
        expect(again.job.attempts).toBe(2);
        await h.clock.advance(1000);
        expect(await q.reapNow()).toBe(1);
        expect(await q.getJob(a)).toMatchObject({ status: 'dead', lastError: 'lease expired' });
        expect((await q.attemptHistory(a)).map((x) => [x.outcome, x.error ?? null])).toEqual([
          ['lease_expired', null],
          ['dead_lettered', 'lease expired'],
        ]);
        expect(q.liveLeases().map((l) => l.id)).toEqual([live]);
        expect(await q.stats('q')).toMatchObject({ claimed: 1, dead: 1, pending: 0 });
        await q.close();
      });

      it('ignores already-acked jobs and still lets a claim ack after expiry if the reaper has not run', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('a'));
        const c = (await q.claim('q', 1000))!;
        await h.clock.advance(5000);
        await q.ack(c);
        expect(await q.reapNow()).toBe(0);
        expect(await q.stats('q')).toMatchObject({ done: 1, pending: 0, claimed: 0 });
        await q.close();
      });

      it('renewal extends past the original expiry so the reaper skips it and the claim still acks', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('a'));
        const c = (await q.claim('q', 1000))!;
        const expiry = q.renewLease(c, 10_000);
        expect(q.leaseExpiry('q', id)).toBe(expiry);
        await h.clock.advance(5000);
        expect(await q.reapNow()).toBe(0);
        await q.ack(c);
        expect(q.liveLeases()).toEqual([]);
        expect(await q.reapNow()).toBe(0);
        await q.close();
      });

      it('refuses renewal after cancel (both APIs) and the claim still nacks', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('a'));
        const c = (await q.claim('q', 1000))!;
        expect(await q.cancel(id)).toBe('requested');
        expect(c.signal.aborted).toBe(true);
        expect(() => q.renewLease(c, 1000)).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
        expect(() => c.lease.ensureAtLeast(1000)).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
        expect((await q.nack(c, 'stopped')).type).toBe('retried');
        expect((await q.getJob(id))!.cancelRequested).toBe(true);
        await q.close();
      });

      it('rejects stale settlements with CLAIM_LOST after a re-claim, after a reaper requeue and after a reaper dead-letter', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 2 } });
        const id = await q.enqueue('q', b('a'));
        const first = (await q.claim('q', 1000))!;
        await h.clock.advance(1000);
        await q.reapNow();
        for (const settleStale of [() => q.ack(first), () => q.nack(first, 'x'), () => q.deadLetter(first, 'x')]) {
          await expect(settleStale()).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        }
        expect(() => q.renewLease(first, 1000)).toThrow(expect.objectContaining({ code: 'CLAIM_LOST' }));
        const second = (await q.claim('q', 1000))!;
        expect(second.job.attempts).toBe(2);
        await expect(q.ack(first)).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        await h.clock.advance(1000);
        await q.reapNow();
        await expect(q.ack(second)).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        expect((await q.getJob(id))!.status).toBe('dead');
        expect(await q.stats('q')).toMatchObject({ dead: 1, done: 0, claimed: 0 });
        await q.close();
      });

      it('rejects a double settlement with CLAIM_LOST and applies nothing', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('a'));
        const c = (await q.claim('q', 1000))!;
        await q.ack(c);
        await expect(q.ackWith(c, { kvWrites: [[b('k'), b('v')]] })).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        expect(await q.kvGet(b('k'))).toBeUndefined();
        expect((await q.stats('q')).done).toBe(1);
        await q.close();
      });
    });

    describe('recovery at open and cursor persistence', () => {
      it('requeues a claim held at close (history interrupted; the re-claim is attempt 1 again, interruptions 1)', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('a'));
        await q.claim('q', 60_000);
        await q.close();
        const q2 = await h.open();
        expect(await q2.getJob(id)).toMatchObject({ status: 'pending' });
        expect((await q2.attemptHistory(id)).map((a) => a.outcome)).toEqual(['interrupted']);
        expect((await q2.claim('q', 1000))?.job).toMatchObject({ attempts: 1, interruptions: 1 });
        await q2.close();
      });

      // Issue #13: an interrupted claim no longer uses up an attempt, so its last attempt is kept.
      it('requeues at open a claim on its last attempt, and dead-letters one at maxInterruptions', async () => {
        const h = await makeHarness(factory);
        const config = { defaultQueueConfig: { maxAttempts: 1, maxInterruptions: 2 } };
        const q = await h.open(config);
        const id = await q.enqueue('q', b('a'));
        await q.claim('q', 60_000);
        await q.close();
        const q2 = await h.open(config);
        expect(await q2.getJob(id)).toMatchObject({ status: 'pending', attempts: 0, interruptions: 1 });
        await q2.claim('q', 60_000);
        await q2.close();
        const q3 = await h.open(config);
        expect(await q3.getJob(id)).toMatchObject({ status: 'dead', lastError: 'interrupted 2 times (process exit, crash or abandoned delivery)' });
        expect(await q3.stats('q')).toMatchObject({ dead: 1, claimed: 0 });
        await q3.close();
      });

      it('recovers claims of a writer that never closed, and fences that writer: its ack fails', async () => {
        const h = await makeHarness(factory);
        const old = await h.open();
        const ids = await old.enqueueBatch('q', [b('1'), b('2'), b('3')]);
        const claims = await old.claimBatch('q', 3, 60_000);
        await old.kvPut(b('flush'), b('1')); // a durable commit flushes the claims before it
        const next = await h.open();
        const err = await old.ack(claims[0]).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: expect.stringMatching(/^(FENCED|CLOSED)$/) });
        const again = await next.claimBatch('q', 10, 60_000);
        expect(again.map((c) => c.id)).toEqual(ids);
        expect(again.every((c) => c.job.attempts === 1 && c.job.interruptions === 1)).toBe(true);
        await next.close();
        await old.close().catch(() => undefined);
      });

      it('persists the cursor bound across a clean close, consumes the record at open, and a restored bound moves back for a higher-priority insert', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueueBatch('q', [b('1'), b('2'), b('3')]);
        await q.ack((await q.claim('q', 1000))!);
        await q.close();
        const q2 = await h.open();
        const urgent = await q2.enqueue('q', b('urgent'), { priority: 1 });
        const first = (await q2.claim('q', 1000))!;
        expect(first.id).toBe(urgent);
        const rest = await q2.claimBatch('q', 10, 1000);
        expect(rest).toHaveLength(2);
        for (const c of [first, ...rest]) await q2.ack(c);
        await q2.close();
        const q3 = await h.open();
        expect(await q3.claim('q', 1000)).toBeUndefined();
        const late = await q3.enqueue('q', b('late'));
        expect((await q3.claim('q', 1000))?.id).toBe(late);
        await q3.close();
      });

      it('persists emptiness, revoked by a new enqueue after reopen', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        expect(await q.claim('q', 1000)).toBeUndefined();
        await q.close();
        const q2 = await h.open();
        expect(await q2.claim('q', 1000)).toBeUndefined();
        const id = await q2.enqueue('q', b('x'));
        expect((await q2.claim('q', 1000))?.id).toBe(id);
        await q2.close();
      });
    });

    it('the reaper loop ticks on the injected clock', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ reaperIntervalMs: 1000 });
      const id = await q.enqueue('q', b('a'));
      await q.claim('q', 500);
      await h.clock.advance(1000);
      // The tick runs in the reaper loop, in the background: wait for its outcome.
      await until(async () => (await q.getJob(id))!.status === 'pending', 'the reaper tick requeued the expired claim');
      expect((await q.getJob(id))!.status).toBe('pending');
      await q.close();
    });
  });
}
