/**
 * Batch retention (reference `batch_retention(d)`, spec §3.3 step 6 and "Batch retention"): a
 * finished batch is forgotten `batchRetentionMs` after it first ended, by the worker's sweep (a pass
 * at start, then every interval), never inside the window; the oldest end governs. With a MockClock,
 * on the memory store and on the filesystem across a restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Bulk, MemoryObjectStore, pipeline, Queue, type BulkOptions, type ObjectStore } from '../../../src/index.js';
import { MockClock } from '../../../src/core/clock.js';
import { utf8 } from '../../../src/core/bytes.js';
import { FileSystemObjectStore } from '../../../src/node/fs-store.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

/** The window; short, since every advance of a MockClock wakes each polling loop once per poll interval. */
const WINDOW = 1_000;
const T0 = 1_700_000_000_000;
let phaseRuns = 0;
const square = pipeline<number>().phase('square', (n) => {
  phaseRuns++;
  return n * n;
});

async function open(store: ObjectStore, clock: MockClock, options: BulkOptions = {}) {
  const queue = await Queue.open(store, 'app', { logger: false, clock });
  const bulk = new Bulk(queue, store, square, { pollIntervalMs: 100, logger: false, clock, batchRetentionMs: WINDOW, ...options });
  const close = async (): Promise<void> => {
    await worker.shutdown().catch(() => undefined);
    await queue.close().catch(() => undefined);
  };
  const worker = bulk.spawn();
  cleanups.push(close);
  return { queue, bulk, worker, close };
}

async function markers(queue: Queue): Promise<string[]> {
  const page = await queue.kvScan(utf8('workflow/bulk-terminals/'));
  return page.entries.map(([k]) => new TextDecoder().decode(k).slice('workflow/bulk-terminals/'.length));
}

/** Waits (real time) until `check` holds: the worker's sweep runs in the background once the clock moves. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('condition not reached');
}

const exists = (bulk: Bulk<number, number>, id: string): Promise<boolean> =>
  bulk.status(id).then(
    () => true,
    (e: { code?: string }) => (e.code === 'NOT_FOUND' ? false : Promise.reject(e)),
  );

describe('batchRetentionMs', () => {
  it('is checked when the Bulk is built: at least 1 ms, an integer, or null', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app', { logger: false });
    cleanups.push(() => queue.close());
    for (const bad of [0, -5, 1.5, Infinity, Number.NaN, '60000']) {
      expect(() => new Bulk(queue, store, square, { batchRetentionMs: bad as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', details: expect.objectContaining({ option: 'batchRetentionMs' }) }),
      );
    }
    expect(() => new Bulk(queue, store, square, { batchRetentionMs: 1 })).not.toThrow();
    expect(() => new Bulk(queue, store, square, { batchRetentionMs: null })).not.toThrow();
  });

  it('writes no marker without retention', async () => {
    const clock = new MockClock(T0);
    const { bulk, queue } = await open(new MemoryObjectStore(), clock, { batchRetentionMs: null });
    await (await bulk.submit([1, 2], { batchId: 'kept' })).done();
    expect(await markers(queue)).toEqual([]);
    await clock.advance(10 * WINDOW);
    expect(await bulk.sweepBatchesNow()).toBe(0);
    expect(await exists(bulk, 'kept')).toBe(true);
  });

  it('forgets a finished batch on the sweep interval after the window, not inside it; a later run starts over', async () => {
    const clock = new MockClock(T0);
    const { bulk, queue } = await open(new MemoryObjectStore(), clock);
    phaseRuns = 0;
    const report = await (await bulk.submit([1, 2, 3], { batchId: 'expiring' })).done();
    expect(report.succeeded).toBe(3);
    expect(await markers(queue)).toEqual([`${String(T0).padStart(20, '0')}/expiring`]);
    // The worker swept at start (T0) and sleeps one interval: at T0 + 1 window the batch is
    // exactly one window old (kept: strict), at T0 + 2 windows it is past it.
    await clock.advance(WINDOW);
    await new Promise((r) => setTimeout(r, 50));
    expect(await exists(bulk, 'expiring')).toBe(true);
    await clock.advance(WINDOW);
    await eventually(async () => !(await exists(bulk, 'expiring')) && (await markers(queue)).length === 0);
    // Forgotten means forgotten: the same id runs its items again.
    const again = await (await bulk.submit([1, 2, 3], { batchId: 'expiring' })).done();
    expect(again.succeeded).toBe(3);
    expect(phaseRuns).toBe(6);
  });

  it('the first end governs: running the batch again later does not extend its window', async () => {
    const clock = new MockClock(T0);
    const { bulk, queue } = await open(new MemoryObjectStore(), clock);
    await (await bulk.submit([1], { batchId: 'rerun' })).done();
    await clock.advance(WINDOW / 2);
    await (await bulk.resume('rerun')).done();
    expect(await markers(queue)).toHaveLength(1);
    await clock.advance(WINDOW / 2 + 1);
    // The worker's own pass (due at T0 + 1 window) may get there first; either forgets it.
    await bulk.sweepBatchesNow();
    expect(await exists(bulk, 'rerun')).toBe(false);
  });

  it('a marker left by a batch forgotten by hand does not forget the batch submitted again under its id', async () => {
    const clock = new MockClock(T0);
    const { bulk, queue } = await open(new MemoryObjectStore(), clock);
    await (await bulk.submit([1], { batchId: 'reused' })).done();
    expect(await bulk.forget('reused')).toBe(true);
    await clock.advance(WINDOW / 2);
    await (await bulk.submit([2], { batchId: 'reused' })).done();
    expect(await markers(queue)).toHaveLength(2);
    await clock.advance(WINDOW / 2 + 1);
    // The first marker is stale: dropped, nothing forgotten; the second one is not due yet.
    expect(await bulk.sweepBatchesNow()).toBe(0);
    expect(await markers(queue)).toHaveLength(1);
    expect((await bulk.status('reused')).succeeded).toBe(1);
    await clock.advance(WINDOW / 2);
    expect(await bulk.sweepBatchesNow()).toBe(1);
    expect(await exists(bulk, 'reused')).toBe(false);
  });

  it('drops a malformed marker', async () => {
    const clock = new MockClock(T0);
    const { bulk, queue } = await open(new MemoryObjectStore(), clock);
    await queue.kvPut(utf8('workflow/bulk-terminals/not-a-marker'), new Uint8Array());
    expect(await bulk.sweepBatchesNow()).toBe(0);
    expect(await markers(queue)).toEqual([]);
  });

  it('survives a restart on the filesystem: the next process forgets an expired batch at worker start', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-batch-retention-'));
    roots.push(root);
    const first = await open(new FileSystemObjectStore({ root }), new MockClock(T0));
    await (await first.bulk.submit([1, 2], { batchId: 'durable' })).done();
    await first.close();

    // Restarted within the window: kept.
    const early = await open(new FileSystemObjectStore({ root }), new MockClock(T0 + WINDOW / 2));
    await new Promise((r) => setTimeout(r, 50));
    expect(await exists(early.bulk, 'durable')).toBe(true);
    await early.close();

    const late = await open(new FileSystemObjectStore({ root }), new MockClock(T0 + 2 * WINDOW));
    await eventually(async () => !(await exists(late.bulk, 'durable')) && (await markers(late.queue)).length === 0);
  });
});
