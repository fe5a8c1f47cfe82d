/**
 * The queue's core lifecycle as a reusable suite (enqueue, ids and ordering, claims and waits,
 * settlement and backoff, leases and the reaper, recovery at open, cursor persistence). Run with
 * any store factory: memory here, later IndexedDB/OPFS in Chromium and S3.
 */
import { describe, expect, it } from 'vitest';
import { isUlid } from '../../../src/core/queue/records/job-id.js';
import { PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NORMAL } from '../../../src/core/queue/constants.js';
import { b, makeHarness, s, until, type StoreFactory } from './harness.js';

export function defineQueueLifecycleSuite(name: string, factory: StoreFactory): void {
  describe(`queue lifecycle (${name})`, () => {
    describe('enqueue, ids and ordering', () => {
      it('enqueues and claims a job', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('emails', b('hello'), { headers: { a: '1' } });
        const claim = await q.claim('emails', 30_000);
        expect(claim?.id).toBe(id);
        expect(s(claim!.job.payload)).toBe('hello');
        expect(claim!.job).toMatchObject({ status: 'claimed', attempts: 1, headers: { a: '1' }, claimedAt: h.clock.now() });
        expect(await q.claim('emails', 30_000)).toBeUndefined();
        await q.close();
      });

      it('uses an id override verbatim and rejects invalid overrides with nothing written', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        expect(await q.enqueue('q', b('x'), { idOverride: 'my_job-1' })).toBe('my_job-1');
        for (const bad of ['', 'a:b', 'a b', 'a/b', 'x'.repeat(129)]) {
          await expect(q.enqueue('q', b('x'), { idOverride: bad })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        }
        expect((await q.stats('q')).pending).toBe(1);
        await q.close();
      });

      it('rejects a duplicate override id with ALREADY_EXISTS, keeping the first payload; no KV is written', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('first'), { idOverride: 'dup' });
        await expect(q.enqueue('q', b('second'), { idOverride: 'dup' })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
        await expect(q.enqueueWithKv('q', b('third'), { idOverride: 'dup' }, [[b('k'), b('v')]])).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
        expect(s((await q.getJob('dup'))!.payload)).toBe('first');
        expect(await q.kvGet(b('k'))).toBeUndefined();
        await q.close();
      });

      it('generates ULIDs that strictly increase within one frozen millisecond', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const ids = [];
        for (let i = 0; i < 20; i++) ids.push(await q.enqueue('q', b(String(i))));
        expect(ids.every(isUlid)).toBe(true);
        expect([...ids].sort()).toEqual(ids);
        await q.close();
      });

      it('claims FIFO within a queue, also across one claimBatch of 20, and isolates queues', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const ids = [];
        for (let i = 0; i < 20; i++) ids.push(await q.enqueue('a', b(String(i))));
        await q.enqueue('b', b('other'));
        const claims = await q.claimBatch('a', 50, 30_000);
        expect(claims.map((c) => c.id)).toEqual(ids);
        expect(claims.every((c) => c.job.attempts === 1 && c.job.status === 'claimed')).toBe(true);
        expect(q.liveLeases()).toHaveLength(20);
        expect((await q.claim('b', 1000))?.job.queue).toBe('b');
        await q.close();
      });

      it('orders by priority (high, normal, low), FIFO within a priority, and stores it on the record', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const low = await q.enqueue('q', b('low'), { priority: PRIORITY_LOW });
        const n1 = await q.enqueue('q', b('n1'));
        const high = await q.enqueue('q', b('high'), { priority: PRIORITY_HIGH });
        const n2 = await q.enqueue('q', b('n2'), { priority: PRIORITY_NORMAL });
        const order = (await q.claimBatch('q', 10, 1000)).map((c) => c.id);
        expect(order).toEqual([high, n1, n2, low]);
        expect((await q.getJob(high))!.priority).toBe(PRIORITY_HIGH);
        await q.close();
      });

      it('keeps the priority after a nack and through scheduling', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 1000 } });
        const id = await q.enqueue('q', b('x'), { priority: 7 });
        await q.nack((await q.claim('q', 1000))!, 'boom');
        await h.clock.advance(1000);
        await q.promoteScheduledNow();
        const again = await q.claim('q', 1000);
        expect(again?.id).toBe(id);
        expect(again?.job.priority).toBe(7);
        await q.close();
      });

      it('enqueues a batch atomically in input order; an empty batch is a no-op', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        expect(await q.enqueueBatch('q', [])).toEqual([]);
        const ids = await q.enqueueBatch('q', [b('1'), b('2'), b('3')]);
        expect((await q.stats('q')).pending).toBe(3);
        expect((await q.claimBatch('q', 5, 1000)).map((c) => c.id)).toEqual(ids);
        await expect(q.enqueueBatch('q', [b('ok'), 'nope' as unknown as Uint8Array])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        expect((await q.stats('q')).pending).toBe(0);
        await q.close();
      });

      it('holds a future runAt back as scheduled; a past runAt is pending at once', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const later = await q.enqueue('q', b('later'), { runAt: h.clock.now() + 10_000 });
        const past = await q.enqueue('q', b('past'), { runAt: h.clock.now() - 1 });
        expect(await q.stats('q')).toMatchObject({ pending: 1, scheduled: 1 });
        expect((await q.claim('q', 1000))?.id).toBe(past);
        expect(await q.claim('q', 1000)).toBeUndefined();
        await h.clock.advance(10_000);
        expect(await q.promoteScheduledNow()).toBe(1);
        expect((await q.claim('q', 1000))?.id).toBe(later);
        await q.close();
      });

      it('dedups only while the job waits, and a nack of the old job keeps the new dedup entry', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0 } });
        const first = await q.enqueue('q', b('1'), { dedupKey: 'k' });
        expect(await q.enqueue('q', b('2'), { dedupKey: 'k' })).toBe(first);
        const r = await q.enqueueWithKv('q', b('3'), { dedupKey: 'k' }, [[b('kv'), b('v')]]);
        expect(r).toEqual({ type: 'already_enqueued', id: first });
        expect(await q.kvGet(b('kv'))).toBeUndefined();
        const claim = (await q.claim('q', 1000))!;
        const second = await q.enqueue('q', b('4'), { dedupKey: 'k' });
        expect(second).not.toBe(first);
        await q.nack(claim, 'retry');
        expect(await q.enqueue('q', b('5'), { dedupKey: 'k' })).toBe(second);
        await q.close();
      });

      it('rejects bad inputs with typed errors naming the value', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await expect(q.enqueue('', b('x'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.enqueue('x'.repeat(256), b('x'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('255') });
        await expect(q.enqueue('bad\nname', b('x'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.enqueue('q', 'text' as unknown as Uint8Array)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('Uint8Array') });
        await expect(q.claim('q', -1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('leaseMs=-1') });
        await expect(q.claim('q', Number.POSITIVE_INFINITY)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.enqueue('q', b('x'), { priority: -3 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.enqueue('q', b('x'), { maxAttempts: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await expect(q.requeueDeadJob('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
        await q.close();
        await expect(q.enqueue('q', b('x'))).rejects.toMatchObject({ code: 'CLOSED' });
      });

      it('rejects bad options at open with INVALID_CONFIG', async () => {
        const h = await makeHarness(factory);
        await expect(h.open({ reaperIntervalMs: -5 })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
        await expect(h.open({ defaultQueueConfig: { maxAttempts: 0 } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
        await expect(h.open({ payloadPath: `${h.path}/inside` })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
      });
    });

    describe('claims and waits', () => {
      it('finds a job enqueued after empty polls, and a batch enqueued after a drain', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        expect(await q.claim('q', 1000)).toBeUndefined();
        expect(await q.claim('q', 1000)).toBeUndefined();
        const id = await q.enqueue('q', b('x'));
        expect((await q.claim('q', 1000))?.id).toBe(id);
        expect(await q.claim('q', 1000)).toBeUndefined();
        const ids = await q.enqueueBatch('q', [b('1'), b('2')]);
        expect((await q.claimBatch('q', 5, 1000)).map((c) => c.id)).toEqual(ids);
        await q.close();
      });

      it('finds a nack-requeued job after an empty poll', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0 } });
        const id = await q.enqueue('q', b('x'));
        const c = (await q.claim('q', 1000))!;
        expect(await q.claim('q', 1000)).toBeUndefined();
        await q.nack(c, 'again');
        const again = await q.claim('q', 1000);
        expect(again?.id).toBe(id);
        expect(again?.job.attempts).toBe(2);
        await q.close();
      });

      it('claims nothing for max 0; a partial batch marks the queue empty until the next enqueue', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('1'));
        expect(await q.claimBatch('q', 0, 1000)).toEqual([]);
        expect(await q.claimBatch('q', 5, 1000)).toHaveLength(1);
        expect(await q.claimBatch('q', 5, 1000)).toHaveLength(0);
        await q.enqueue('q', b('2'));
        expect(await q.claimBatch('q', 5, 1000)).toHaveLength(1);
        await q.close();
      });

      it('wakes one waiting worker per enqueued job (1 of 3, then 2 of 3 for a 2-job batch)', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const woke: boolean[] = [];
        const notify = q.notifierOf('q');
        const waits = [0, 1, 2].map(() => q.waitForJobsOn('q', 60_000).then((r) => woke.push(r)));
        expect(notify.waiting).toBe(3); // registered on the call, before any insert
        await q.enqueue('q', b('1'));
        await Promise.race(waits);
        expect(woke).toEqual([true]);
        expect(notify.waiting).toBe(2); // exactly one waiter was taken off
        const more = [0, 1].map(() => q.waitForJobsOn('q', 60_000).then((r) => woke.push(r)));
        expect(notify.waiting).toBe(4);
        await q.enqueueBatch('q', [b('2'), b('3')]);
        await until(() => woke.length === 3, 'two more waiters woke');
        expect(woke.filter(Boolean)).toHaveLength(3);
        expect(notify.waiting).toBe(2);
        await h.clock.advance(60_000);
        await Promise.all([...waits, ...more]);
        expect(woke.filter((w) => !w)).toHaveLength(2);
        await q.close();
      });

      it('waitForJobsOn consumes a permit left by an earlier insert', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('1'));
        expect(await q.waitForJobsOn('q', 60_000)).toBe(true);
        await q.close();
      });

      it('claimWithWait wakes on an insert, times out on the clock, and waits the full deadline despite a stale permit', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const pending = q.claimWithWait('q', 1000, 60_000);
        expect(q.notifierOf('q').waiting).toBe(1); // registered before its first claim attempt
        const id = await q.enqueue('q', b('x'));
        expect((await pending)?.id).toBe(id);
        // A stale permit (the job was already taken) costs one pass, never an early undefined.
        await q.enqueue('other', b('y'));
        const stale = q.notifierOf('q');
        stale.notifyOne();
        let done = false;
        const sleepers = h.clock.pendingSleepers;
        const waiting = q.claimWithWait('q', 1000, 10_000).then((c) => {
          done = true;
          return c;
        });
        // Parked: the permit was spent on a pass that found nothing, and the wait now sleeps on the clock.
        await until(() => h.clock.pendingSleepers === sleepers + 1 && stale.waiting === 1, 'claimWithWait parked after the stale pass');
        expect(done).toBe(false);
        await h.clock.advance(10_000);
        expect(await waiting).toBeUndefined();
        await q.close();
      });

      it('never returns the same job twice while its lease is live, under concurrent claims', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueueBatch('q', Array.from({ length: 60 }, (_, i) => b(String(i))));
        const results = await Promise.all(Array.from({ length: 12 }, () => q.claimBatch('q', 7, 60_000)));
        const ids = results.flat().map((c) => c.id);
        expect(ids).toHaveLength(60);
        expect(new Set(ids).size).toBe(60);
        expect(await q.claim('q', 1000)).toBeUndefined();
        await q.close();
      });
    });
  });
}
