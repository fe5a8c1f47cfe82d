/**
 * Worker loops free a handler slot when the handler returns and let the settlement (a durable
 * commit) complete off the slot. These tests hold the engine's WAL puts to show both halves: the
 * loop keeps working while a put is in flight, and nothing counts as settled (nor survives a
 * crash) before the put lands.
 */
import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/queue.js';
import { processClaim, runWorkerConcurrent } from '../../../src/core/queue/workers/worker.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { GatedStore } from '../../support/gated-store.js';
import { b, silentLogger, until } from './harness.js';

/** Holds the engine's WAL puts while `held` (they proceed, in order, on `release`). */
const walGated = <S extends ObjectStore>(inner: S): GatedStore<S> => new GatedStore(inner, { holds: (key) => key.includes('/wal/') });

/** What a crash right now would leave: a copy of the stored objects. */
async function snapshotOf(store: ObjectStore): Promise<MemoryObjectStore> {
  const copy = new MemoryObjectStore();
  for await (const info of store.list('')) {
    const obj = await store.get(info.key);
    if (obj) await copy.put(info.key, obj.data);
  }
  return copy;
}

const options = (clock: MockClock) => ({ clock, reaperIntervalMs: 1e12, schedulerIntervalMs: 1e12, logger: silentLogger });

describe('worker loop settlement durability', () => {
  it('keeps processing while a WAL put is held, and resolves only once every settlement is durable', async () => {
    const store = walGated(new MemoryObjectStore());
    const clock = new MockClock(1_700_000_000_000);
    const q = await Queue.open(store, 'w', options(clock));
    await q.enqueueBatch('q', Array.from({ length: 20 }, (_, i) => b(String(i))));
    store.hold();
    let handled = 0;
    const stop = new AbortController();
    let loopDone = false;
    let doneWhileHeld: boolean | undefined;
    const loop = runWorkerConcurrent(q, 'q', async () => void handled++, 2, { signal: stop.signal }).then(() => {
      loopDone = true;
      doneWhileHeld = store.held;
    });
    // Concurrency 2, yet all 20 run: a slot is free again once its handler returned.
    await until(() => handled === 20, 'every job handled with WAL puts held');
    expect(await q.stats('q')).toMatchObject({ done: 20, claimed: 0, pending: 0 });
    expect(store.heldPuts).toBeGreaterThan(0);
    stop.abort();
    expect(loopDone).toBe(false); // still waiting for durability
    // A crash now loses every claim and ack: all 20 jobs are still there after a restart.
    const crashed = await Queue.open(await snapshotOf(store.inner), 'w', options(clock));
    expect(await crashed.stats('q')).toMatchObject({ pending: 20, done: 0 });
    await crashed.close();
    store.release();
    await loop;
    // Causality rather than a pause: the loop resolved only after the held WAL puts were released.
    expect(doneWhileHeld).toBe(false);
    const reopened = await Queue.open(await snapshotOf(store.inner), 'w', options(clock));
    expect(await reopened.stats('q')).toMatchObject({ pending: 0, claimed: 0, done: 20 });
    await reopened.close();
    await q.close();
  });

  it('a handler sees the settlement of the job before it, even when preparing that settlement does I/O', async () => {
    const slow = new FaultyObjectStore(new MemoryObjectStore());
    const store = walGated(slow);
    // Follow-up payloads over 8 bytes go to their own (slow) objects while the settlement is prepared.
    const q = await Queue.open(store, 'w', { ...options(new MockClock(1_700_000_000_000)), payloadOffloadThreshold: 8 });
    const ids = await q.enqueueBatch('q', Array.from({ length: 10 }, (_, i) => b(String(i))));
    // Real time is the subject: slow payload puts while a settlement is prepared, which visibility must not race.
    const slowPuts = slow.addRule({ type: 'latency', ms: 5, ops: ['put'], keyPrefix: 'w-payloads/' });
    store.hold(); // durability pending throughout: visibility must not depend on it
    const seen: boolean[] = [];
    let previous: string | undefined;
    const stop = new AbortController();
    const loop = runWorkerConcurrent(
      q,
      'q',
      async (job) => {
        seen.push(previous === undefined || (await q.kvGet(b(`done-${previous}`))) !== undefined);
        previous = job.id;
        if (seen.length === ids.length) stop.abort();
        return { kvWrites: [[b(`done-${job.id}`), b('1')]], enqueues: [{ queue: 'follow-ups', payload: new Uint8Array(64) }] };
      },
      1,
      { signal: stop.signal },
    );
    await until(() => seen.length === ids.length, 'all handled');
    expect(seen.every(Boolean)).toBe(true);
    expect(slowPuts.matched, 'payload puts slowed').toBeGreaterThan(0);
    store.release();
    await loop;
    await q.close();
  });

  it('processClaim resolves only after its ack is durable', async () => {
    const store = walGated(new MemoryObjectStore());
    const q = await Queue.open(store, 'w', options(new MockClock(1_700_000_000_000)));
    const id = await q.enqueue('q', b('x'));
    const claim = (await q.claim('q', 60_000))!;
    store.hold();
    let resolved = false;
    let resolvedWhileHeld: boolean | undefined;
    const p = processClaim(q, claim, async () => undefined).then(() => {
      resolved = true;
      resolvedWhileHeld = store.held;
    });
    await until(async () => (await q.getJob(id)) === undefined, 'ack applied');
    expect(resolved).toBe(false);
    store.release();
    await p;
    expect(resolved).toBe(true);
    // Causality rather than a pause: it resolved only after the held WAL put was released.
    expect(resolvedWhileHeld).toBe(false);
    await q.close();
  });

  it('a failed WAL put after the ack applied is logged as an ack failure, and the ack is not kept', async () => {
    const faulty = new FaultyObjectStore(new MemoryObjectStore());
    const warnings: string[] = [];
    const clock = new MockClock(1_700_000_000_000);
    const q = await Queue.open(faulty, 'w', { ...options(clock), logger: { warn: (m: string) => void warnings.push(m) } });
    await q.enqueue('q', b('x'));
    faulty.addRule({ type: 'fail', ops: ['put'], keyPrefix: 'w/wal/', count: Infinity });
    let handled = 0;
    const stop = new AbortController();
    const loop = runWorkerConcurrent(q, 'q', async () => void handled++, 4, { signal: stop.signal });
    await until(() => warnings.some((w) => w.startsWith('ack failed')), 'ack failure logged');
    stop.abort();
    await loop;
    expect(handled).toBe(1);
    await expect(q.enqueue('q', b('y'))).rejects.toMatchObject({ code: 'CLOSED' });
    faulty.clearRules();
    const reopened = await Queue.open(await snapshotOf(faulty.inner), 'w', options(clock));
    expect(await reopened.stats('q')).toMatchObject({ pending: 1, done: 0 });
    await reopened.close();
    await q.close().catch(() => undefined);
  });
});
