/**
 * Cancel, wake, dead requeue, completion waits, effects, retention, listings and history, as a
 * reusable suite over any store factory.
 */
import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../../src/core/event-loop.js';
import { b, makeHarness, s, until, watchLookups, type StoreFactory } from './harness.js';

export function defineQueueOperationsSuite(name: string, factory: StoreFactory): void {
  describe(`queue operations (${name})`, () => {
    describe('cancel, wake, dead requeue', () => {
      it('removes pending and scheduled jobs; signals claimed ones; not_found for done, dead and unknown', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const pending = await q.enqueue('q', b('p'), { dedupKey: 'd' });
        const scheduled = await q.enqueue('q', b('s'), { runAt: h.clock.now() + 5000 });
        expect(await q.cancel(pending)).toBe('removed');
        expect(await q.cancel(scheduled)).toBe('removed');
        expect(await q.getJob(pending)).toBeUndefined();
        expect(await q.stats('q')).toMatchObject({ pending: 0, scheduled: 0 });
        expect(await q.enqueue('q', b('again'), { dedupKey: 'd' })).not.toBe(pending); // dedup entry gone
        const c = (await q.claim('q', 1000))!;
        let seen = false;
        c.signal.addEventListener('abort', () => (seen = true));
        expect(await q.cancel(c.id)).toBe('requested');
        expect(seen).toBe(true);
        await q.deadLetter(c, 'stop');
        expect(await q.cancel(c.id)).toBe('not_found');
        expect(await q.cancel('unknown')).toBe('not_found');
        await q.close();
      });

      it('keeps the cancel flag across a reaper requeue: the next claim starts pre-fired', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        await q.claim('q', 1000);
        await q.cancel(id);
        await h.clock.advance(1000);
        await q.reapNow();
        const again = (await q.claim('q', 1000))!;
        expect(again.signal.aborted).toBe(true);
        expect(again.job.cancelRequested).toBe(true);
        await q.close();
      });

      it('wakes a scheduled job early with a payload; not_scheduled / not_found otherwise', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'), { runAt: h.clock.now() + 60_000 });
        await h.clock.advance(10);
        expect(await q.wakeScheduled(id, b('wake!'))).toBe('woken');
        expect(await q.getJob(id)).toMatchObject({ status: 'pending', wokenAt: h.clock.now(), wakePayload: b('wake!') });
        expect((await q.getJob(id))!.runAt).toBeUndefined();
        expect(await q.stats('q')).toMatchObject({ pending: 1, scheduled: 0 });
        expect(await q.wakeScheduled(id)).toBe('not_scheduled');
        expect(await q.wakeScheduled('nope')).toBe('not_found');
        const c = (await q.claim('q', 1000))!;
        expect(s(c.job.wakePayload!)).toBe('wake!');
        expect(await q.wakeScheduled(id)).toBe('not_scheduled');
        const other = await q.enqueue('q', b('y'), { runAt: h.clock.now() + 60_000 });
        await q.cancel(other);
        expect(await q.wakeScheduled(other)).toBe('not_found');
        await q.close();
      });

      it('wake payload persists across redelivery after lease expiry', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'), { runAt: h.clock.now() + 60_000 });
        await q.wakeScheduled(id, b('w'));
        await q.claim('q', 100);
        await h.clock.advance(100);
        await q.reapNow();
        expect((await q.claim('q', 100))!.job.wakePayload).toEqual(b('w'));
        await q.close();
      });

      it('requeues a dead job with a fresh budget, keeping history with a requeued marker', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        const c = (await q.claim('q', 1000))!;
        await q.cancel(id);
        await q.deadLetter(c, 'first');
        await expect(q.requeueDeadJob(await q.enqueue('q', b('live')))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await q.requeueDeadJob((await q.getJob(id))!);
        expect(await q.getJob(id)).toMatchObject({ status: 'pending', attempts: 0, cancelRequested: false });
        const job = (await q.getJob(id))!;
        expect(job.lastError ?? job.failedAt ?? job.claimedAt).toBeUndefined();
        expect(await q.stats('q')).toMatchObject({ dead: 0, pending: 2 });
        const again = (await q.claim('q', 1000))!;
        expect(again.id).toBe(id);
        expect(again.job.attempts).toBe(1);
        await q.deadLetter(again, 'second');
        expect((await q.attemptHistory(id)).map((a) => [a.outcome, a.attempt])).toEqual([
          ['dead_lettered', 1],
          ['requeued', 0],
          ['dead_lettered', 1],
        ]);
        await q.close();
      });

      it('commits caller-KV puts with a dead requeue only while the guard key is absent', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const id = await q.enqueue('q', b('x'));
        await q.deadLetter((await q.claim('q', 1000))!, 'failed');
        await q.kvPut(b('guard'), b('taken'));
        await expect(q.requeueDeadJob(id, { unlessKvExists: b('guard'), kvWrites: [[b('k'), b('v')]] })).rejects.toMatchObject({ code: 'CONFLICT', details: { reason: 'kv_exists' } });
        expect(await q.kvGet(b('k'))).toBeUndefined();
        expect(await q.getJob(id)).toMatchObject({ status: 'dead' });
        await expect(q.requeueDeadJob(id, { kvWrite: [] } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('kvWrites') });

        await q.kvDelete(b('guard'));
        await q.requeueDeadJob(id, { unlessKvExists: b('guard'), kvWrites: [[b('k'), b('v')]] });
        expect(await q.kvGet(b('k'))).toEqual(b('v'));
        expect(await q.getJob(id)).toMatchObject({ status: 'pending' });
        await q.close();
      });
    });

    describe('completion waits', () => {
      it('covers not_found, timed_out, completion by ack with and without retention, dead-letter and cancel', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ queueConfigs: { keep: { keepDoneMs: 60_000 } } });
        expect(await q.waitForCompletion('nope', 1000)).toEqual({ type: 'not_found' });
        // A waiter is parked once its lookup returned: it registered for the broadcast before it.
        const lookups = watchLookups(q);
        const id = await q.enqueue('q', b('x'));
        const timed = q.waitForCompletion(id, 1000);
        await lookups.finished(1);
        await h.clock.advance(1000);
        expect(await timed).toEqual({ type: 'timed_out' });

        const waiters = [q.waitForCompletion(id, 60_000), q.waitForCompletion(id, 60_000)];
        await lookups.finished(3);
        await q.ack((await q.claim('q', 1000))!);
        expect(await Promise.all(waiters)).toEqual([
          { type: 'completed', job: null },
          { type: 'completed', job: null },
        ]);

        const kept = await q.enqueue('keep', b('k'));
        const w2 = q.waitForCompletion(kept, 60_000);
        await lookups.finished(lookups.started);
        await q.ack((await q.claim('keep', 1000))!);
        expect(await w2).toMatchObject({ type: 'completed', job: { id: kept, status: 'done' } });
        expect(await q.waitForCompletion(kept, 1)).toMatchObject({ type: 'completed', job: { status: 'done' } });

        const dl = await q.enqueue('q', b('d'));
        const w3 = q.waitForCompletion(dl, 60_000);
        await lookups.finished(lookups.started);
        await q.deadLetter((await q.claim('q', 1000))!, 'x');
        expect(await w3).toMatchObject({ type: 'completed', job: { status: 'dead' } });

        const cancelled = await q.enqueue('q', b('c'));
        const w4 = q.waitForCompletion(cancelled, 60_000);
        await lookups.finished(lookups.started);
        await q.cancel(cancelled);
        expect(await w4).toEqual({ type: 'completed', job: null });
        await q.close();
      });

      it('does not wake on a cancel request, and wakes on a reaper dead-letter', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 1 } });
        const id = await q.enqueue('q', b('x'));
        await q.claim('q', 1000);
        let result: unknown;
        const lookups = watchLookups(q);
        const w = q.waitForCompletion(id, 60_000).then((r) => (result = r));
        await lookups.finished(1);
        await q.cancel(id);
        // A broadcast fires synchronously inside the commit, and a woken waiter's path to its
        // result is microtasks only: all of them have run by the next macrotask. Not a sleep.
        await yieldToEventLoop();
        expect(result).toBeUndefined();
        expect(lookups.started).toBe(1); // not woken: it never looked the job up again
        await h.clock.advance(1000);
        await q.reapNow();
        await w;
        expect(result).toMatchObject({ type: 'completed', job: { status: 'dead', lastError: 'lease expired' } });
        await q.close();
      });
    });

    describe('settlement effects', () => {
      it('ackWith applies follow-up enqueues and KV atomically; a dedup hit downgrades only that request', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const existing = await q.enqueue('next', b('e'), { dedupKey: 'same' });
        await q.enqueue('q', b('x'));
        const c = (await q.claim('q', 1000))!;
        await q.kvPut(b('gone'), b('1'));
        const results = await q.ackWith(c, {
          enqueues: [
            { queue: 'next', payload: b('a') },
            { queue: 'next', payload: b('b'), options: { dedupKey: 'same' } },
            { queue: 'next', payload: b('later'), options: { runAt: h.clock.now() + 5000 } },
          ],
          kvWrites: [[b('k'), b('v')]],
          kvDeletes: [b('gone')],
        });
        expect(results[0].type).toBe('new');
        expect(results[1]).toEqual({ type: 'already_enqueued', id: existing });
        expect(results[2].type).toBe('new');
        expect((await q.getJob(results[2].id))!.status).toBe('scheduled');
        expect(await q.kvGet(b('k'))).toEqual(b('v'));
        expect(await q.kvGet(b('gone'))).toBeUndefined();
        expect(await q.stats('next')).toMatchObject({ pending: 2, scheduled: 1 });
        await q.close();
      });

      it('applies nothing when the claim is gone (ack and dead-letter)', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('x'));
        const c = (await q.claim('q', 1000))!;
        await h.clock.advance(1000);
        await q.reapNow();
        const effects = { enqueues: [{ queue: 'next', payload: b('a') }], kvWrites: [[b('k'), b('v')]] as [Uint8Array, Uint8Array][] };
        await expect(q.ackWith(c, effects)).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        await expect(q.deadLetterWith(c, 'x', effects)).rejects.toMatchObject({ code: 'CLAIM_LOST' });
        expect(await q.kvGet(b('k'))).toBeUndefined();
        expect((await q.stats('next')).pending).toBe(0);
        await q.close();
      });

      it('nackWith discards effects while attempts remain and applies them when it dead-letters', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 2, retryBackoffBaseMs: 0 } });
        await q.enqueue('q', b('x'));
        const effects = { kvWrites: [[b('failed'), b('1')]] as [Uint8Array, Uint8Array][], enqueues: [{ queue: 'alerts', payload: b('!') }] };
        expect(await q.nackWith((await q.claim('q', 1000))!, 'e1', effects)).toEqual({ type: 'retried' });
        expect(await q.kvGet(b('failed'))).toBeUndefined();
        const out = await q.nackWith((await q.claim('q', 1000))!, 'e2', effects);
        expect(out.type).toBe('dead_lettered');
        expect(await q.kvGet(b('failed'))).toEqual(b('1'));
        expect((await q.stats('alerts')).pending).toBe(1);
        await q.close();
      });

      it('cancelWith applies on removed, discards on requested and not_found', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const waiting = await q.enqueue('q', b('w'));
        const r1 = await q.cancelWith(waiting, { kvWrites: [[b('a'), b('1')]] });
        expect(r1.outcome).toBe('removed');
        expect(await q.kvGet(b('a'))).toEqual(b('1'));
        await q.enqueue('q', b('c'));
        const c = (await q.claim('q', 1000))!;
        expect((await q.cancelWith(c.id, { kvWrites: [[b('b'), b('1')]] })).outcome).toBe('requested');
        expect((await q.cancelWith('nope', { kvWrites: [[b('b'), b('1')]] })).outcome).toBe('not_found');
        expect(await q.kvGet(b('b'))).toBeUndefined();
        await q.close();
      });

      it('deadLetterWith applies effects atomically', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        await q.enqueue('q', b('x'));
        const results = await q.deadLetterWith((await q.claim('q', 1000))!, 'bad', { enqueues: [{ queue: 'dlq-audit', payload: b('x') }] });
        expect(results).toHaveLength(1);
        expect((await q.stats('dlq-audit')).pending).toBe(1);
        await q.close();
      });
    });

    describe('retention', () => {
      it('sweeps done jobs per queue, measured from completion, not enqueue', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ queueConfigs: { short: { keepDoneMs: 1000 }, long: { keepDoneMs: 10_000 } } });
        const a = await q.enqueue('short', b('a'));
        const l = await q.enqueue('long', b('l'));
        const n = await q.enqueue('none', b('n'));
        await h.clock.advance(5000);
        for (const queue of ['short', 'long', 'none']) await q.ack((await q.claim(queue, 1000))!);
        await h.clock.advance(1000);
        expect((await q.sweepRetentionNow()).done).toBe(0);
        await h.clock.advance(1);
        expect((await q.sweepRetentionNow()).done).toBe(1);
        expect(await q.getJob(a)).toBeUndefined();
        expect(await q.attemptHistory(a)).toEqual([]);
        expect((await q.getJob(l))!.status).toBe('done');
        expect(await q.getJob(n)).toBeUndefined();
        await h.clock.advance(10_000);
        expect((await q.sweepRetentionNow()).done).toBe(1);
        expect((await q.stats('long')).done).toBe(1);
        await q.close();
      });

      it('sweeps dead jobs at the retention boundary, with index, history and counter', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ queueConfigs: { q: { deadRetentionMs: 1000 } } });
        const id = await q.enqueue('q', b('x'));
        await q.deadLetter((await q.claim('q', 1000))!, 'x');
        await h.clock.advance(1000);
        expect((await q.sweepRetentionNow()).dead).toBe(0);
        await h.clock.advance(1);
        expect((await q.sweepRetentionNow()).dead).toBe(1);
        expect(await q.getJob(id)).toBeUndefined();
        expect(await q.attemptHistory(id)).toEqual([]);
        expect((await q.stats('q')).dead).toBe(0);
        await expect(q.requeueDeadJob(id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect((await q.stats('q')).pending).toBe(0);
        await q.close();
      });

      it('runs retention in the reaper tick on the injected clock', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ reaperIntervalMs: 500, queueConfigs: { q: { keepDoneMs: 100 } } });
        const id = await q.enqueue('q', b('x'));
        await q.ack((await q.claim('q', 1000))!);
        await h.clock.advance(500);
        // The tick runs in the reaper loop, in the background: wait for its outcome.
        await until(async () => (await q.getJob(id)) === undefined, 'retention ran in the reaper tick');
        expect(await q.getJob(id)).toBeUndefined();
        await q.close();
      });
    });

    describe('listings, stats and history', () => {
      it('lists pending in claim order, scheduled by run_at, claimed by id for one queue, with paging', async () => {
        const h = await makeHarness(factory);
        const q = await h.open();
        const p1 = await q.enqueue('q', b('1'));
        const p0 = await q.enqueue('q', b('0'), { priority: 1 });
        await q.enqueue('other', b('o'));
        const s2 = await q.enqueue('q', b('s2'), { runAt: h.clock.now() + 2000 });
        await q.enqueue('other', b('os'), { runAt: h.clock.now() + 1500 });
        const s1 = await q.enqueue('q', b('s1'), { runAt: h.clock.now() + 1000 });
        expect((await q.listJobs('q', 'pending')).jobs.map((j) => j.id)).toEqual([p0, p1]);
        expect((await q.listJobs('q', 'scheduled')).jobs.map((j) => j.id)).toEqual([s1, s2]);
        const page1 = await q.listJobs('q', 'scheduled', { limit: 1 });
        expect(page1.jobs.map((j) => j.id)).toEqual([s1]);
        const page2 = await q.listJobs('q', 'scheduled', { limit: 1, cursor: page1.nextCursor });
        expect(page2.jobs.map((j) => j.id)).toEqual([s2]);
        expect(page2.nextCursor).toBeUndefined();
        const claims = await q.claimBatch('q', 2, 1000);
        q.renewLease(claims[0], 99_999);
        const claimed = await q.listJobs('q', 'claimed');
        expect(claimed.jobs.map((j) => j.id)).toEqual([p1, p0].sort());
        expect(s(claimed.jobs[0].payload)).toMatch(/^[01]$/);
        expect(await q.listJobs('q', 'pending', { limit: 0 })).toEqual({ jobs: [], nextCursor: undefined });
        expect((await q.listJobs('q', 'pending', { cursor: page1.nextCursor })).jobs).toEqual([]);
        expect(await q.listQueues()).toEqual(['other', 'q']);
        await q.close();
      });

      it('lists kept done records and dead jobs page by page', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ queueConfigs: { q: { keepDoneMs: 60_000 } } });
        const ids = await q.enqueueBatch('q', [b('1'), b('2'), b('3'), b('4')]);
        const cs = await q.claimBatch('q', 4, 1000);
        await q.ack(cs[0]);
        for (const c of cs.slice(1)) await q.deadLetter(c, 'x');
        expect((await q.listJobs('q', 'done')).jobs.map((j) => j.id)).toEqual([ids[0]]);
        const firstTwo = await q.deadJobs('q', undefined, 2);
        expect(firstTwo.map((j) => j.id)).toEqual(ids.slice(1, 3));
        expect((await q.deadJobs('q', firstTwo[1].id, 2)).map((j) => j.id)).toEqual([ids[3]]);
        expect((await q.listJobs('q', 'dead')).jobs.map((j) => j.id)).toEqual(ids.slice(1));
        await expect(q.listJobs('q', 'weird' as 'dead')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
        await q.close();
      });

      it('tracks stats across the lifecycle and nack-to-dead; unknown queues are zeros', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { maxAttempts: 1 } });
        expect(await q.stats('nobody')).toEqual({ queue: 'nobody', pending: 0, claimed: 0, done: 0, dead: 0, scheduled: 0 });
        await q.enqueueBatch('q', [b('1'), b('2')]);
        await q.enqueue('q', b('3'), { runAt: h.clock.now() + 10 });
        expect(await q.stats('q')).toMatchObject({ pending: 2, scheduled: 1 });
        const [c1, c2] = await q.claimBatch('q', 2, 1000);
        expect(await q.stats('q')).toMatchObject({ pending: 0, claimed: 2 });
        await q.ack(c1);
        await q.nack(c2, 'x');
        expect(await q.stats('q')).toEqual({ queue: 'q', pending: 0, claimed: 0, done: 1, dead: 1, scheduled: 1 });
        await q.close();
      });

      it('records retries then completion in history with attempt numbers, errors and claim times', async () => {
        const h = await makeHarness(factory);
        const q = await h.open({ defaultQueueConfig: { retryBackoffBaseMs: 0 }, queueConfigs: { q: { keepDoneMs: 60_000, retryBackoffBaseMs: 0 } } });
        const id = await q.enqueue('q', b('x'));
        const t1 = h.clock.now();
        await q.nack((await q.claim('q', 1000))!, 'e1');
        await h.clock.advance(50);
        await q.ack((await q.claim('q', 1000))!);
        expect(await q.attemptHistory(id)).toEqual([
          { attempt: 1, claimedAt: t1, recordedAt: t1, outcome: 'retried', error: 'e1' },
          { attempt: 2, claimedAt: t1 + 50, recordedAt: t1 + 50, outcome: 'completed' },
        ]);
        const gone = await q.enqueue('other', b('y'), {});
        await q.nack((await q.claim('other', 1000))!, 'e');
        expect(await q.attemptHistory(gone)).toHaveLength(1);
        await q.cancel(gone);
        expect(await q.attemptHistory(gone)).toEqual([]);
        await q.close();
      });
    });
  });
}
