/** Caller KV namespace and payload offload, as a reusable suite over any store factory. */
import { describe, expect, it } from 'vitest';
import { equalBytes } from '../../../src/core/bytes.js';
import { CorruptDataError } from '../../../src/core/errors.js';
import type { JobRecord } from '../../../src/core/queue/records/job-record.js';
import { runWorker } from '../../../src/core/queue/workers/worker.js';
import { MAX_KV_VALUE_SIZE } from '../../../src/core/queue/constants.js';
import { pendingKey } from '../../../src/core/queue/records/keys.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { b, makeHarness, s, until, type StoreFactory } from './harness.js';

/** Keys under `prefix` (for asserting which payload objects exist). */
async function keysOf(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out;
}

/** Every put of the engine's WAL under `path` fails from now on (a store outage for commits). */
const walPutsFail = (store: FaultyObjectStore, path: string) => store.addRule({ type: 'fail', ops: ['put'], keyPrefix: `${path}/wal/`, count: Infinity });

const big = (n: number, fill = 7): Uint8Array => new Uint8Array(n).fill(fill);

export function defineQueueKvOffloadSuite(name: string, factory: StoreFactory): void {
  describe(`queue caller KV (${name})`, () => {
    it('round-trips put/get/delete and caps values with a typed error', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.kvPut(b('k'), b('v'));
      expect(await q.kvGet(b('k'))).toEqual(b('v'));
      await q.kvDelete(b('k'));
      expect(await q.kvGet(b('k'))).toBeUndefined();
      await q.kvPut(b('max'), big(MAX_KV_VALUE_SIZE));
      await expect(q.kvPut(b('k'), big(MAX_KV_VALUE_SIZE + 1))).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { size: MAX_KV_VALUE_SIZE + 1, max: MAX_KV_VALUE_SIZE },
      });
      await expect(q.kvComparePut(b('k'), null, big(MAX_KV_VALUE_SIZE + 1))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(q.enqueueWithKv('q', b('x'), {}, [[b('k'), big(MAX_KV_VALUE_SIZE + 1)]])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((await q.stats('q')).pending).toBe(0);
      await q.close();
    });

    it('compare-delete: mismatch, match, absent', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.kvPut(b('k'), b('1'));
      expect(await q.kvCompareDelete(b('k'), b('2'))).toBe(false);
      expect(await q.kvGet(b('k'))).toEqual(b('1'));
      expect(await q.kvCompareDelete(b('k'), b('1'))).toBe(true);
      expect(await q.kvGet(b('k'))).toBeUndefined();
      expect(await q.kvCompareDelete(b('k'), b('1'))).toBe(false);
      await q.close();
    });

    it('compare-put: absent, expected, mismatch', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      expect(await q.kvComparePut(b('k'), null, b('1'))).toBe(true);
      expect(await q.kvComparePut(b('k'), null, b('x'))).toBe(false);
      expect(await q.kvComparePut(b('k'), b('1'), b('2'))).toBe(true);
      expect(await q.kvComparePut(b('k'), b('1'), b('3'))).toBe(false);
      expect(await q.kvGet(b('k'))).toEqual(b('2'));
      await q.close();
    });

    it('loses no increment under 4×25 concurrent compare-and-put loops', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const key = b('counter');
      const loop = async (): Promise<void> => {
        for (let i = 0; i < 25; i++) {
          for (;;) {
            const cur = await q.kvGet(key);
            const n = cur === undefined ? 0 : Number(s(cur));
            if (await q.kvComparePut(key, cur ?? null, b(String(n + 1)))) break;
          }
        }
      };
      await Promise.all([loop(), loop(), loop(), loop()]);
      expect(s((await q.kvGet(key))!)).toBe('100');
      await q.close();
    });

    it('scans by prefix in pages with a cursor; whole namespace; limit 0; foreign cursor; hides internal keys', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.enqueue('q', b('job'));
      for (const k of ['a/1', 'a/2', 'a/3', 'b/1']) await q.kvPut(b(k), b(k.toUpperCase()));
      const p1 = await q.kvScan(b('a/'), { limit: 2 });
      expect(p1.entries.map(([k, v]) => [s(k), s(v)])).toEqual([
        ['a/1', 'A/1'],
        ['a/2', 'A/2'],
      ]);
      const p2 = await q.kvScan(b('a/'), { limit: 2, cursor: p1.nextCursor });
      expect(p2.entries.map(([k]) => s(k))).toEqual(['a/3']);
      expect(p2.nextCursor).toBeUndefined();
      const all = await q.kvScan(new Uint8Array(0), { limit: 100 });
      expect(all.entries.map(([k]) => s(k))).toEqual(['a/1', 'a/2', 'a/3', 'b/1']);
      expect(await q.kvScan(b('a/'), { limit: 0 })).toEqual({ entries: [], nextCursor: undefined });
      expect((await q.kvScan(b('b/'), { cursor: p1.nextCursor })).entries).toEqual([]);
      await q.close();
    });

    it('keeps caller keys apart from the internal layout, and survives an unclean reopen', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const forged = pendingKey('q', 1, 'forged');
      await q.kvPut(forged, b('not a job'));
      expect(await q.claim('q', 1000)).toBeUndefined();
      expect(await q.listQueues()).toEqual([]);
      const q2 = await h.open(); // fences q without closing it
      expect(await q2.kvGet(forged)).toEqual(b('not a job'));
      await q2.close();
    });

    it('never reports a compare-and-put as done during a store outage, and leaves nothing partial after reopen', async () => {
      const h = await makeHarness(async () => new FaultyObjectStore(await factory()));
      const store = h.store;
      const q = await h.open();
      await q.kvPut(b('k'), b('0'));
      walPutsFail(store, h.path);
      await expect(q.kvComparePut(b('k'), b('0'), b('1'))).rejects.toMatchObject({ code: expect.stringMatching(/^(STORE_UNAVAILABLE|CLOSED)$/) });
      await expect(q.kvPut(b('other'), b('x'))).rejects.toBeDefined(); // the engine stays failed
      store.clearRules();
      const q2 = await h.open();
      expect(await q2.kvGet(b('k'))).toEqual(b('0'));
      expect(await q2.kvGet(b('other'))).toBeUndefined();
      await q2.close();
      await q.close().catch(() => undefined);
    });

    it('an ackWith stalled by an outage applies no effects; the redelivery after reopen applies them exactly once', async () => {
      const h = await makeHarness(async () => new FaultyObjectStore(await factory()));
      const store = h.store;
      const q = await h.open();
      const id = await q.enqueue('q', b('x'));
      const claim = (await q.claim('q', 60_000))!;
      walPutsFail(store, h.path);
      const effects = { enqueues: [{ queue: 'next', payload: b('f') }], kvWrites: [[b('effect'), b('1')]] as [Uint8Array, Uint8Array][] };
      await expect(q.ackWith(claim, effects)).rejects.toBeDefined();
      store.clearRules();
      const q2 = await h.open();
      expect(await q2.kvGet(b('effect'))).toBeUndefined();
      expect((await q2.stats('next')).pending).toBe(0);
      const again = (await q2.claim('q', 60_000))!;
      expect(again.id).toBe(id);
      await q2.ackWith(again, effects);
      expect(await q2.kvGet(b('effect'))).toEqual(b('1'));
      expect(await q2.stats('next')).toMatchObject({ pending: 1 });
      expect(await q2.stats('q')).toMatchObject({ done: 1, pending: 0, claimed: 0 });
      await q2.close();
      await q.close().catch(() => undefined);
    });

    it('enqueueWithKv applies KV on new', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const r = await q.enqueueWithKv('q', b('x'), { dedupKey: 'd' }, new Map([[b('k'), b('v')]]));
      expect(r.type).toBe('new');
      expect(await q.kvGet(b('k'))).toEqual(b('v'));
      await q.close();
    });
  });

  describe(`queue payload offload (${name})`, () => {
    const open = async (extra: Record<string, unknown> = {}) => {
      const h = await makeHarness(async () => new FaultyObjectStore(await factory()));
      const store = h.store;
      const q = await h.open({ payloadOffloadThreshold: 16, ...extra });
      const objects = () => keysOf(store.inner, `${h.path}-payloads/`);
      return { h, q, store, objects };
    };

    it('offloads above the threshold, round-trips through claim, nack and re-claim; ≤ threshold stays inline', async () => {
      const { q, objects } = await open({ defaultQueueConfig: { retryBackoffBaseMs: 0 } });
      const id = await q.enqueue('q', big(17));
      await q.enqueue('q', big(16));
      expect(await objects()).toHaveLength(1);
      expect((await q.getJob(id))!.payloadRef).toBeDefined();
      const c = (await q.claim('q', 1000))!;
      expect(c.job.payload).toEqual(big(17));
      await q.nack(c, 'again');
      const c2 = (await q.claim('q', 1000))!;
      expect(c2.job.payload).toEqual(big(17));
      await q.ack(c2);
      expect(await objects()).toHaveLength(0);
      await q.close();
    });

    it('writes no record and leaves no object when the object write fails; a batch removes earlier objects', async () => {
      const { h, q, store, objects } = await open();
      const payloads = `${h.path}-payloads/`;
      const first = store.addRule({ type: 'fail', ops: ['put'], keyPrefix: payloads, count: Infinity });
      await expect(q.enqueue('q', big(100))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      first.remove();
      store.addRule({ type: 'fail', ops: ['put'], keyPrefix: payloads, nth: 2, count: Infinity }); // from the batch's second object on
      await expect(q.enqueueBatch('q', [big(100), big(100, 1)])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      store.clearRules();
      expect(await objects()).toHaveLength(0);
      expect((await q.stats('q')).pending).toBe(0);
      const ids = await q.enqueueBatch('q', [big(100), big(100, 1), b('small')]);
      expect(await objects()).toHaveLength(2);
      expect((await q.claimBatch('q', 3, 1000)).map((c) => c.job.payload.length)).toEqual([100, 100, 5]);
      expect(ids).toHaveLength(3);
      await q.close();
    });

    it('acks even when the object delete fails (orphan left)', async () => {
      const { q, store, objects } = await open();
      await q.enqueue('q', big(100));
      store.addRule({ type: 'fail', ops: ['delete'], count: Infinity });
      await q.ack((await q.claim('q', 1000))!);
      expect(await objects()).toHaveLength(1);
      expect((await q.stats('q')).done).toBe(1);
      await q.close();
    });

    it('removes the new object on a dedup hit and keeps the existing one on a duplicate id', async () => {
      const { q, objects } = await open();
      await q.enqueue('q', big(100), { dedupKey: 'd', idOverride: 'job-1' });
      await q.enqueue('q', big(100, 2), { dedupKey: 'd' });
      await expect(q.enqueue('q', big(100, 3), { idOverride: 'job-1' })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
      expect(await objects()).toHaveLength(1);
      expect((await q.getJob('job-1'))!.payload).toEqual(big(100));
      await q.close();
    });

    it('keeps objects through done retention until the sweep, through dead-letter, requeue and redelivery; dead sweep deletes', async () => {
      const { h, q, objects } = await open({ queueConfigs: { keep: { keepDoneMs: 1000 }, q: { deadRetentionMs: 1000 } } });
      await q.enqueue('keep', big(100));
      await q.ack((await q.claim('keep', 1000))!);
      expect(await objects()).toHaveLength(1);
      const id = await q.enqueue('q', big(100, 4));
      await q.deadLetter((await q.claim('q', 1000))!, 'x');
      await q.requeueDeadJob(id);
      const again = (await q.claim('q', 1000))!;
      expect(again.job.payload).toEqual(big(100, 4));
      await q.deadLetter(again, 'y');
      expect(await objects()).toHaveLength(2);
      await h.clock.advance(1001);
      expect(await q.sweepRetentionNow()).toEqual({ done: 1, dead: 1 });
      expect(await objects()).toHaveLength(0);
      await q.close();
    });

    it('deletes the object when a pending job is cancelled, and when a follow-up is dedup-downgraded or discarded', async () => {
      const { q, objects } = await open({ defaultQueueConfig: { retryBackoffBaseMs: 0 } });
      const id = await q.enqueue('q', big(100));
      expect(await q.cancel(id)).toBe('removed');
      expect(await objects()).toHaveLength(0);
      await q.enqueue('next', b('x'), { dedupKey: 'd' });
      await q.enqueue('q', b('parent'));
      const res = await q.ackWith((await q.claim('q', 1000))!, { enqueues: [{ queue: 'next', payload: big(100), options: { dedupKey: 'd' } }] });
      expect(res[0].type).toBe('already_enqueued');
      expect(await objects()).toHaveLength(0);
      await q.enqueue('q', b('parent2'));
      await q.nackWith((await q.claim('q', 1000))!, 'x', { enqueues: [{ queue: 'next', payload: big(100) }] });
      expect(await objects()).toHaveLength(0);
      await q.enqueue('other', b('c'));
      const c = (await q.claim('other', 1000))!;
      await q.cancelWith(c.id, { enqueues: [{ queue: 'next', payload: big(100) }] });
      expect(await objects()).toHaveLength(0);
      await q.close();
    });

    it('materialises scheduled jobs after promotion, listings; an externally deleted object is flagged NOT_FOUND and its job is dead-lettered, not delivered', async () => {
      const { h, q, store, objects } = await open();
      const id = await q.enqueue('q', big(100), { runAt: h.clock.now() + 10 });
      expect((await q.listJobs('q', 'scheduled')).jobs[0].payload).toEqual(big(100));
      await h.clock.advance(10);
      await q.promoteScheduledNow();
      expect((await q.getJob(id))!.payload).toEqual(big(100));
      const [key] = await objects();
      await store.inner.delete(key);
      const missing = { code: 'NOT_FOUND', object: key, message: `payload object missing. object=${key}` };
      expect(await q.getJob(id)).toMatchObject({ status: 'pending', payload: new Uint8Array(0), payloadError: missing });
      expect(await q.claim('q', 1000)).toBeUndefined();
      expect(await q.stats('q')).toMatchObject({ dead: 1, claimed: 0, pending: 0 });
      expect((await q.attemptHistory(id)).at(-1)).toMatchObject({ outcome: 'dead_lettered', error: `payload object missing. object=${key}` });
      await q.close();
    });

    // Issue #12: offloaded payloads that were bit-flipped, truncated or emptied in the store were
    // delivered as if intact (a 300 KiB payload came back as 0 bytes).
    const damages: [string, (sealed: Uint8Array) => Uint8Array, string][] = [
      ['a flipped bit', (o) => { const x = o.slice(); x[x.length >> 1] ^= 0x10; return x; }, 'checksum mismatch'],
      ['truncation', (o) => o.slice(0, o.length - 1000), 'length mismatch'],
      ['emptying', () => new Uint8Array(0), 'empty'],
    ];
    it.each(damages)('a payload object damaged by %s is dead-lettered naming it, never delivered, and the rest of the job is kept', async (_, damage, problem) => {
      const { h, q, store } = await open();
      const payload = new Uint8Array(300 * 1024).map((_, i) => (i * 7) & 0xff);
      const id = await q.enqueue('q', payload);
      const healthy = await q.enqueue('q', big(100, 9));
      const key = `${h.path}-payloads/${(await q.getJob(id))!.payloadRef}`;
      const original = (await store.inner.get(key))!.data.slice();
      await store.inner.put(key, damage(original));
      const reason = `payload object corrupt. object=${key} problem=${problem}`;
      expect(await q.getJob(id)).toMatchObject({ payload: new Uint8Array(0), payloadError: { code: 'CORRUPT_DATA', object: key, message: reason } });

      // The damaged job goes to Dead inside the claim, and the claim delivers the next job instead.
      const c = (await q.claim('q', 1000))!;
      expect(c.id).toBe(healthy);
      expect(c.job.payload).toEqual(big(100, 9));
      expect(await q.stats('q')).toMatchObject({ dead: 1, claimed: 1, pending: 0 });
      expect((await q.attemptHistory(id)).at(-1)).toMatchObject({ outcome: 'dead_lettered', error: reason });

      // Repairing the object shows the dead record kept everything else, and a requeue delivers it.
      await expect(q.requeueDeadJob(id)).rejects.toMatchObject({ code: 'CORRUPT_DATA', details: { reason: 'payload_unreadable', id, object: key, problem } });
      await store.inner.put(key, original);
      const repaired = (await q.getJob(id))!;
      expect(repaired).toMatchObject({ status: 'dead', lastError: reason, attempts: 1, payloadRef: expect.any(String) });
      expect(repaired.payloadError).toBeUndefined();
      await q.requeueDeadJob(id);
      const again = (await q.claim('q', 1000))!;
      expect(again.id).toBe(id);
      expect(equalBytes(again.job.payload, payload)).toBe(true);
      await q.close();
    });

    // Listings materialised every payload and rejected on the first unreadable one, so one bad
    // object made the whole dead-letter list (the list that should show it) fail to load.
    it('dead-letter listings show every job, flagging the ones whose payload object is corrupt or gone; requeue refuses them, delete removes them', async () => {
      const { h, q, store, objects } = await open();
      const corrupt = await q.enqueue('q', big(100, 1));
      const gone = await q.enqueue('q', big(100, 2));
      const healthy = await q.enqueue('q', big(100, 3));
      const inline = await q.enqueue('q', b('small'));
      for (let i = 0; i < 4; i++) await q.deadLetter((await q.claim('q', 1000))!, `failed ${i}`);
      const objectOf = async (id: string) => `${h.path}-payloads/${(await q.getJob(id))!.payloadRef}`;
      const corruptKey = await objectOf(corrupt);
      const goneKey = await objectOf(gone);
      const sealed = (await store.inner.get(corruptKey))!.data.slice();
      sealed[sealed.length >> 1] ^= 0x10;
      await store.inner.put(corruptKey, sealed);
      await store.inner.delete(goneKey);

      const corruptError = { code: 'CORRUPT_DATA', object: corruptKey, message: `payload object corrupt. object=${corruptKey} problem=checksum mismatch` };
      const goneError = { code: 'NOT_FOUND', object: goneKey, message: `payload object missing. object=${goneKey}` };
      const check = (jobs: JobRecord[]): void => {
        expect(jobs.map((j) => j.id)).toEqual([corrupt, gone, healthy, inline]);
        expect(jobs[0]).toMatchObject({ status: 'dead', lastError: 'failed 0', attempts: 1, payload: new Uint8Array(0), payloadError: corruptError });
        expect(jobs[1]).toMatchObject({ status: 'dead', lastError: 'failed 1', payload: new Uint8Array(0), payloadError: goneError });
        expect(jobs[2].payload).toEqual(big(100, 3));
        expect(jobs[3].payload).toEqual(b('small'));
        for (const j of jobs.slice(2)) expect(j).not.toHaveProperty('payloadError');
      };
      check(await q.deadJobs('q', undefined, 10));
      check((await q.listJobs('q', 'dead')).jobs);
      expect(await q.deadJobs('q', corrupt, 1)).toMatchObject([{ id: gone, payloadError: goneError }]);
      expect(await q.getJob(corrupt)).toMatchObject({ id: corrupt, payloadError: corruptError });
      expect(await q.getJob(gone)).toMatchObject({ id: gone, payloadError: goneError });

      // Requeue is refused with a typed error naming the object, and leaves the job dead.
      const refusal = q.requeueDeadJob(corrupt);
      await expect(refusal).rejects.toBeInstanceOf(CorruptDataError);
      await expect(refusal).rejects.toMatchObject({ code: 'CORRUPT_DATA', details: { reason: 'payload_unreadable', id: corrupt, object: corruptKey, problem: 'checksum mismatch' } });
      await expect(q.requeueDeadJob(gone)).rejects.toMatchObject({ code: 'CORRUPT_DATA', details: { reason: 'payload_unreadable', id: gone, object: goneKey, problem: 'missing' } });
      expect(await q.stats('q')).toMatchObject({ dead: 4, pending: 0 });

      // Delete works whatever the object's state; the object goes too; a second delete is false.
      expect(await q.deleteDeadJob(corrupt)).toBe(true);
      expect(await q.deleteDeadJob(gone)).toBe(true);
      expect(await q.deleteDeadJob(corrupt)).toBe(false);
      expect(await q.getJob(corrupt)).toBeUndefined();
      expect(await q.attemptHistory(corrupt)).toEqual([]);
      expect(await objects()).toEqual([await objectOf(healthy)]);
      expect(await q.stats('q')).toMatchObject({ dead: 2 });
      expect((await q.deadJobs('q', undefined, 10)).map((j) => j.id)).toEqual([healthy, inline]);

      // The healthy dead job is intact and requeues as before.
      await q.requeueDeadJob(healthy);
      const again = (await q.claim('q', 1000))!;
      expect(again.id).toBe(healthy);
      expect(again.job.payload).toEqual(big(100, 3));
      await expect(q.deleteDeadJob(healthy)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_state' } });
      await q.close();
    });

    it('a worker never hands a job with a corrupt payload to its handler; the loop keeps running', async () => {
      const { h, q, store } = await open();
      const bad = await q.enqueue('q', big(100, 1));
      const key = `${h.path}-payloads/${(await q.getJob(bad))!.payloadRef}`;
      const sealed = (await store.inner.get(key))!.data.slice();
      sealed[sealed.length - 1] ^= 0xff; // the checksum itself
      await store.inner.put(key, sealed);
      await q.enqueue('q', big(100, 2));
      const handled: Uint8Array[] = [];
      const stop = new AbortController();
      const loop = runWorker(q, 'q', async (job) => void handled.push(job.payload), { signal: stop.signal });
      await until(async () => (await q.stats('q')).done >= 1, 'the good job was processed');
      stop.abort();
      await loop;
      expect(handled).toEqual([big(100, 2)]);
      expect(await q.stats('q')).toMatchObject({ done: 1, dead: 1, claimed: 0 });
      expect((await q.attemptHistory(bad)).at(-1)).toMatchObject({ error: `payload object corrupt. object=${key} problem=checksum mismatch` });
      await q.close();
    });

    it('keeps large payloads inline when offload is disabled, and writes to a separate payload store', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ payloadOffloadThreshold: null });
      const id = await q.enqueue('q', big(1000));
      expect((await q.getJob(id))!.payloadRef).toBeUndefined();
      await q.close();
      const separate = await factory();
      const q2 = await h.open({ payloadOffloadThreshold: 16, payloadStore: separate, payloadPath: 'elsewhere' });
      const id2 = await q2.enqueue('q', big(1000));
      expect(await keysOf(separate, 'elsewhere/')).toHaveLength(1);
      expect((await q2.getJob(id2))!.payload).toEqual(big(1000));
      await q2.close();
    });
  });
}
