/** Worker loops, the read-only observer and the liveness heartbeat, as a reusable suite. */
import { describe, expect, it } from 'vitest';
import { FailWith, PermanentFailure, runWorker, runWorkerConcurrent, type QueueWorker } from '../../../src/core/queue/workers/worker.js';
import { QueueReader } from '../../../src/core/queue/reads/reader.js';
import { LeaseHandle } from '../../../src/core/queue/leases/lease-handle.js';
import type { JobRecord } from '../../../src/core/queue/records/job-record.js';
import { b, makeHarness, s, until, type StoreFactory } from './harness.js';

export function defineQueueWorkerReaderSuite(name: string, factory: StoreFactory): void {
  describe(`queue worker loops (${name})`, () => {
    it('processes and acks jobs woken by enqueues, and finishes the in-flight job on shutdown', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const seen: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const stop = new AbortController();
      const loop = runWorker(q, 'q', async (job) => {
        seen.push(s(job.payload));
        if (seen.length === 2) await gate;
      }, { signal: stop.signal, pollIntervalMs: 3_600_000 });
      await q.enqueue('q', b('one'));
      await until(async () => (await q.stats('q')).done === 1, 'first job acked');
      await q.enqueue('q', b('two'));
      await until(() => seen.length === 2, 'second job started');
      stop.abort();
      release();
      await loop;
      expect(seen).toEqual(['one', 'two']);
      expect(await q.stats('q')).toMatchObject({ done: 2, claimed: 0 });
      await q.close();
    });

    it('dead-letters on PermanentFailure and nacks other errors with their message', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ defaultQueueConfig: { maxAttempts: 5, retryBackoffBaseMs: 0 } });
      const perm = await q.enqueue('q', b('perm'));
      const flaky = await q.enqueue('q', b('flaky'));
      const stop = new AbortController();
      let flakyRuns = 0;
      const loop = runWorker(q, 'q', async (job) => {
        if (s(job.payload) === 'perm') throw new PermanentFailure('never works');
        if (++flakyRuns < 3) throw new Error(`transient ${flakyRuns}`);
      }, { signal: stop.signal });
      await until(async () => (await q.stats('q')).done === 1 && (await q.stats('q')).dead === 1, 'both settled');
      stop.abort();
      await loop;
      expect(await q.getJob(perm)).toMatchObject({ status: 'dead', lastError: 'never works', attempts: 1 });
      expect(await q.getJob(flaky)).toBeUndefined();
      expect(flakyRuns).toBe(3);
      await q.close();
    });

    it('routes FailWith: permanent ⇒ dead-letter with effects; transient ⇒ retry without effects, applied on the final attempt', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ defaultQueueConfig: { maxAttempts: 2, retryBackoffBaseMs: 0 } });
      await q.enqueue('perm', b('p'));
      await q.enqueue('trans', b('t'));
      const stop = new AbortController();
      let transientAttempts = 0;
      const loops = [
        runWorker(q, 'perm', async () => {
          throw new FailWith(new PermanentFailure('bad'), { kvWrites: [[b('perm'), b('1')]] });
        }, { signal: stop.signal }),
        runWorker(q, 'trans', async (job) => {
          transientAttempts = job.attempts;
          throw new FailWith(new Error('later'), { kvWrites: [[b(`trans-${job.attempts}`), b('1')]] });
        }, { signal: stop.signal }),
      ];
      await until(async () => (await q.stats('perm')).dead === 1 && (await q.stats('trans')).dead === 1, 'both dead');
      stop.abort();
      await Promise.all(loops);
      expect(transientAttempts).toBe(2);
      expect(await q.kvGet(b('perm'))).toEqual(b('1'));
      expect(await q.kvGet(b('trans-1'))).toBeUndefined();
      expect(await q.kvGet(b('trans-2'))).toEqual(b('1'));
      await q.close();
    });

    it('chains a follow-up job through effects, and lets a handler renew its own lease', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.enqueue('first', b('go'));
      const stop = new AbortController();
      const worker: QueueWorker = {
        async processWithEffects(job, lease) {
          const expiry = lease.ensureAtLeast(120_000);
          expect(expiry).toBeGreaterThanOrEqual(h.clock.now() + 125_000);
          return { enqueues: [{ queue: 'second', payload: job.payload }] };
        },
      };
      const got: JobRecord[] = [];
      const loops = [
        runWorker(q, 'first', worker, { signal: stop.signal }),
        runWorker(q, 'second', { process: async (job) => void got.push(job) }, { signal: stop.signal }),
      ];
      await until(() => got.length === 1, 'follow-up processed');
      stop.abort();
      await Promise.all(loops);
      expect(s(got[0].payload)).toBe('go');
      await q.close();
    });

    it('fills exactly its capacity from a backlog (max in flight = 4) and drains on shutdown', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.enqueueBatch('q', Array.from({ length: 12 }, (_, i) => b(String(i))));
      let inFlight = 0;
      let maxInFlight = 0;
      let started = 0;
      let done = 0;
      // Each handler holds its slot until the loop has filled all 4 slots (or started the last
      // job), so the loop's capacity, not the handlers' speed, decides how many overlap. A loop
      // that never fills 4 slots hangs here and fails on the test timeout.
      let full: Promise<void> = Promise.resolve();
      let openGate = (): void => undefined;
      const stop = new AbortController();
      const loop = runWorkerConcurrent(q, 'q', async () => {
        if (inFlight === 0) full = new Promise<void>((r) => (openGate = r));
        inFlight++;
        started++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (inFlight === 4 || started === 12) openGate();
        await full;
        inFlight--;
        done++;
      }, 4, { signal: stop.signal });
      await until(() => done === 12, 'backlog drained');
      stop.abort();
      await loop;
      expect(maxInFlight).toBe(4);
      expect(await q.stats('q')).toMatchObject({ done: 12, claimed: 0, pending: 0 });
      await q.close();
    });

    it('survives a CLAIM_LOST settlement; the redelivery settles', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const id = await q.enqueue('q', b('x'));
      const stop = new AbortController();
      let runs = 0;
      const loop = runWorker(q, 'q', async () => {
        runs++;
        if (runs === 1) {
          // Lose the lease while working: the reaper requeues the job under us.
          await h.clock.advance(q.queueConfig('q').leaseMs);
          await q.reapNow();
        }
      }, { signal: stop.signal });
      await until(async () => (await q.stats('q')).done === 1, 'redelivery acked');
      stop.abort();
      await loop;
      expect(runs).toBe(2);
      expect(await q.getJob(id)).toBeUndefined();
      await q.close();
    });

    it('ends the loop with the claim error, and rejects bad loop arguments', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await expect(runWorkerConcurrent(q, 'q', async () => undefined, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(runWorker(q, 'q', {} as QueueWorker)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await q.close();
      await expect(runWorker(q, 'q', async () => undefined)).rejects.toMatchObject({ code: 'CLOSED' });
    });

    it('a detached lease handle lets a handler be unit-tested', async () => {
      const handler = async (job: JobRecord, lease: LeaseHandle) => lease.ensureAtLeast(1000) > 0 && job.id;
      expect(await handler({ id: 'x' } as JobRecord, LeaseHandle.detached())).toBe('x');
    });
  });

  describe(`queue reader and heartbeat (${name})`, () => {
    it('sees flushed writer state (jobs, listings, queues, KV, stats) and does not fence the writer', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const id = await q.enqueue('q', b('x'), { headers: { h: '1' } });
      await q.enqueue('q', b('y'));
      await q.kvPut(b('k'), b('v'));
      await q.ack((await q.claim('q', 1000))!);
      const r = await QueueReader.open(h.store, h.path, { pollIntervalMs: null });
      expect(await r.getJob(id)).toBeUndefined();
      expect((await r.listJobs('q', 'pending')).jobs.map((j) => s(j.payload))).toEqual(['y']);
      expect(await r.listQueues()).toEqual(['q']);
      expect(await r.kvGet(b('k'))).toEqual(b('v'));
      expect((await r.kvScan(new Uint8Array(0))).entries).toHaveLength(1);
      expect(await r.stats('q')).toMatchObject({ pending: 1, done: 1 });
      const seq = r.lastStoreActivity().durableSeq;
      expect(r.lastStoreActivity().writerEpoch).toBe(q.writerEpoch);
      const later = await q.enqueue('q', b('z'));
      expect(await r.getJob(later)).toBeUndefined();
      await r.refresh();
      expect((await r.getJob(later))!.status).toBe('pending');
      expect(r.lastStoreActivity().durableSeq).toBeGreaterThan(seq);
      await q.kvPut(b('still-writer'), b('1')); // the reader never fenced the writer
      await r.close();
      await q.close();
    });

    it('flags a missing payload object in getJob, listJobs and deadJobs instead of rejecting, and lists the other jobs', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ payloadOffloadThreshold: 4 });
      const id = await q.enqueue('q', b('a large payload'));
      const other = await q.enqueue('q', b('another payload'));
      const ref = (await q.getJob(id))!.payloadRef!;
      const r = await QueueReader.open(h.store, h.path, { pollIntervalMs: null });
      expect(s((await r.getJob(id))!.payload)).toBe('a large payload');
      const object = `${h.path}-payloads/${ref}`;
      await h.store.delete(object);
      const payloadError = { code: 'NOT_FOUND', object, message: `payload object missing. object=${object}` };
      expect(await r.getJob(id)).toMatchObject({ status: 'pending', payload: new Uint8Array(0), payloadError });
      const pending = (await r.listJobs('q', 'pending')).jobs;
      expect(pending.map((j) => j.id)).toEqual([id, other]);
      expect(pending[0].payloadError).toEqual(payloadError);
      expect(s(pending[1].payload)).toBe('another payload');
      expect(pending[1].payloadError).toBeUndefined();
      expect(await q.claim('q', 1000)).toMatchObject({ id: other }); // the flagged job is dead-lettered
      await q.kvPut(b('flush'), b('1'));
      await r.refresh();
      expect(await r.deadJobs('q', undefined, 10)).toMatchObject([{ id, status: 'dead', payloadError }]);
      await r.close();
      await q.close();
    });

    it('rejects a never-written path with NOT_FOUND', async () => {
      const h = await makeHarness(factory);
      await expect(QueueReader.open(h.store, 'never-written', { pollIntervalMs: null })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('refreshes on its poll interval through the injected clock', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      const r = await QueueReader.open(h.store, h.path, { pollIntervalMs: 1000, clock: h.clock });
      const id = await q.enqueue('q', b('x'));
      await h.clock.advance(1000);
      await until(async () => (await r.getJob(id)) !== undefined, 'reader caught up');
      await r.close();
      await q.close();
    });

    it('shows the heartbeat: counter, clock time, interval, closed beat, continued by the next writer with a higher epoch', async () => {
      const h = await makeHarness(factory);
      const q = await h.open({ livenessHeartbeatMs: 10_000 });
      const r = await QueueReader.open(h.store, h.path, { pollIntervalMs: null });
      expect(await r.writerHeartbeat()).toEqual({ counter: 1, atMs: h.clock.now(), intervalMs: 10_000, writerEpoch: q.writerEpoch, closed: false });
      const firstEpoch = q.writerEpoch;
      await q.close();
      await r.refresh();
      expect(await r.writerHeartbeat()).toMatchObject({ counter: 2, closed: true });
      const q2 = await h.open({ livenessHeartbeatMs: 10_000 });
      await r.refresh();
      const beat = (await r.writerHeartbeat())!;
      expect(beat).toMatchObject({ counter: 3, closed: false });
      expect(beat.writerEpoch).toBeGreaterThan(firstEpoch);
      await h.clock.advance(10_000);
      await until(async () => {
        await r.refresh();
        return (await r.writerHeartbeat())!.counter === 4;
      }, 'periodic beat');
      await q2.close();
      await r.close();
    });

    it('writes no heartbeat when not configured', async () => {
      const h = await makeHarness(factory);
      const q = await h.open();
      await q.close();
      const r = await QueueReader.open(h.store, h.path, { pollIntervalMs: null });
      expect(await r.writerHeartbeat()).toBeUndefined();
      await r.close();
    });
  });
}
