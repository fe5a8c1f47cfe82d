/**
 * Worker loops free a handler slot when the handler returns and let the settlement (a durable
 * commit) complete off the slot. These tests hold the engine's WAL puts to show both halves: the
 * loop keeps working while a put is in flight, and nothing counts as settled (nor survives a
 * crash) before the put lands.
 */
import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../../../src/core/objects/object-store.js';
import { Queue } from '../../../src/core/queue/queue.js';
import { processClaim, runWorkerConcurrent } from '../../../src/core/queue/workers/worker.js';
import { FaultyObjectStore } from '../../../src/testing/faulty-store.js';
import { b, silentLogger, until } from './harness.js';

/** Holds WAL puts while `held` (they proceed, in order, on `release`). */
class GatedStore implements ObjectStore {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  heldPuts = 0;
  /** Delay puts outside the engine (offloaded payloads) by this many ms. */
  slowOtherPuts = 0;

  constructor(readonly inner: MemoryObjectStore) {}

  /** True while WAL puts are held. */
  get held(): boolean {
    return this.gate !== undefined;
  }

  hold(): void {
    this.gate ??= new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    return this.inner.get(key, options);
  }

  async put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
    if (this.gate && key.includes('/wal/')) {
      this.heldPuts++;
      await this.gate;
    }
    // Real time is the subject: slow store I/O while a settlement is prepared, which visibility must not race.
    if (this.slowOtherPuts > 0 && !key.startsWith('w/')) await new Promise((r) => setTimeout(r, this.slowOtherPuts));
    return this.inner.put(key, data, options);
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }

  list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    return this.inner.list(prefix, options);
  }
}

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
    const store = new GatedStore(new MemoryObjectStore());
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
    const store = new GatedStore(new MemoryObjectStore());
    // Follow-up payloads over 8 bytes go to their own (slow) objects while the settlement is prepared.
    const q = await Queue.open(store, 'w', { ...options(new MockClock(1_700_000_000_000)), payloadOffloadThreshold: 8 });
    const ids = await q.enqueueBatch('q', Array.from({ length: 10 }, (_, i) => b(String(i))));
    store.slowOtherPuts = 5;
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
    store.release();
    await loop;
    await q.close();
  });

  it('processClaim resolves only after its ack is durable', async () => {
    const store = new GatedStore(new MemoryObjectStore());
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
