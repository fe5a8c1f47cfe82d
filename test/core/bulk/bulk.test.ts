import { afterEach, describe, expect, it } from 'vitest';
import { Bulk, isTaqubaError, MemoryObjectStore, pipeline, Queue, StepError, type BatchProgress, type BulkOptions, type ItemResult, type Pipeline } from '../../../src/index.js';
import { GatedStore, type HeldPuts } from '../../support/gated-store.js';
import { waitFor } from '../../support/wait.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Doc {
  id: string;
  text: string;
}

const docs = (n: number): Doc[] => Array.from({ length: n }, (_, i) => ({ id: `doc-${i}`, text: `document ${i} ${'word '.repeat(i % 7)}`.trim() }));

/** Two phases with costs; `runs` counts executions per "phase:key". */
function summarise(runs: Map<string, number>, fail?: (doc: Doc, phase: string, attempt: number) => Error | undefined): Pipeline<Doc, { id: string; words: number }> {
  const count = (phase: string, key: string) => runs.set(`${phase}:${key}`, (runs.get(`${phase}:${key}`) ?? 0) + 1);
  return pipeline<Doc>()
    .phase('extract', (doc, ctx) => {
      count('extract', ctx.key);
      const err = fail?.(doc, 'extract', ctx.attempt);
      if (err) throw err;
      ctx.cost('chars', doc.text.length);
      return doc.text.split(' ');
    })
    .phase('count', (words, ctx) => {
      count('count', ctx.key);
      const doc = ctx.item;
      const err = fail?.(doc, 'count', ctx.attempt);
      if (err) throw err;
      ctx.cost('tokens_in', words.length);
      ctx.cost('usd', words.length * 0.0001);
      return { id: doc.id, words: words.length };
    });
}

async function open(store = new MemoryObjectStore()) {
  // Retries back off 1-5 ms and the scheduler promotes them every 10 ms (default 1 s), so a
  // retried item waits milliseconds, not a scheduler tick.
  const queue = await Queue.open(store, 'app', { logger: false, schedulerIntervalMs: 10, queueConfigs: { 'bulk-items': { retryBackoffBaseMs: 1, retryBackoffMaxMs: 5, maxAttempts: 3 } } });
  cleanups.push(async () => queue.close().catch(() => undefined));
  return { store, queue };
}

async function setup<O>(p: Pipeline<Doc, O>, options: BulkOptions = {}, store?: MemoryObjectStore) {
  const opened = await open(store);
  const bulk = new Bulk(opened.queue, opened.store, p, { pollIntervalMs: 10, logger: false, ...options });
  const worker = bulk.spawn();
  cleanups.push(() => worker.shutdown().catch(() => undefined));
  return { ...opened, bulk, worker };
}

async function collect<O>(it: AsyncIterable<ItemResult<O>>, limit = Infinity): Promise<ItemResult<O>[]> {
  const out: ItemResult<O>[] = [];
  if (limit === 0) return out;
  for await (const r of it) {
    out.push(r);
    if (out.length >= limit) break;
  }
  return out;
}

/** The cost the pipeline reports for `items`, summed in item order like the batch does. */
function expectedCost(items: Doc[]) {
  let chars = 0;
  let tokens = 0;
  let usd = 0;
  for (const d of items) {
    const words = d.text.split(' ').length;
    chars += d.text.length;
    tokens += words;
    usd += words * 0.0001;
  }
  return { phases: { count: { tokens_in: tokens, usd }, extract: { chars } }, total: { chars, tokens_in: tokens, usd } };
}

describe('Bulk', () => {
  it('runs every item through the phases, rolls the cost up per phase and streams each result once', async () => {
    const runs = new Map<string, number>();
    const { bulk } = await setup(summarise(runs), { maxConcurrentItems: 4 });
    const items = docs(30);
    const seen: BatchProgress[] = [];
    const batch = await bulk.submit(items, { batchId: 'b1', key: (d) => d.id });
    batch.onProgress((p) => seen.push(p));
    const results = await collect(batch.results());
    const report = await batch.done();

    expect(report).toMatchObject({ batchId: 'b1', outcome: 'completed', stopReason: null, total: 30, succeeded: 30, failed: 0, cancelled: 0, failedKeys: [] });
    expect(report.cost).toEqual(expectedCost(items));
    expect(results.map((r) => r.key).sort()).toEqual(items.map((d) => d.id).sort());
    expect(new Set(results.map((r) => r.cursor)).size).toBe(30);
    const r7 = results.find((r) => r.key === 'doc-7')!;
    expect(r7).toMatchObject({ status: 'succeeded', index: 7, output: { id: 'doc-7', words: items[7]!.text.split(' ').length } });
    expect(r7.cost.extract).toEqual({ chars: items[7]!.text.length });
    for (const d of items) expect([runs.get(`extract:${d.id}`), runs.get(`count:${d.id}`)]).toEqual([1, 1]);

    const last = batch.progress();
    expect(last).toMatchObject({ total: 30, done: 30, doneFraction: 1, finished: true, etaMs: 0, counts: { waiting: 0, running: 0, succeeded: 30, failed: 0, cancelled: 0 } });
    expect(last.cost.chars).toBe(expectedCost(items).total.chars);
    expect(last.itemsPerSecond).toBeGreaterThan(0);
    expect(seen.length).toBeGreaterThan(0);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.done).toBeGreaterThanOrEqual(seen[i - 1]!.done);
    expect(seen.at(-1)!.done).toBe(30);
  });

  it("the driver takes each item's end from its settlement, not from reading the marker back", async () => {
    const runs = new Map<string, number>();
    const { bulk, queue } = await setup(summarise(runs), { maxConcurrentItems: 4 });
    let markerReads = 0;
    const kvGet = queue.kvGet.bind(queue);
    queue.kvGet = (key) => {
      if (new TextDecoder().decode(key).includes('/done/')) markerReads++;
      return kvGet(key);
    };
    const report = await (await bulk.submit(docs(30), { batchId: 'hooked', key: (d) => d.id })).done();
    expect(report).toMatchObject({ total: 30, succeeded: 30 });
    // Each item step looks for its marker once before running (a finished item is not redone);
    // polling the marker after the step settled would add at least one more read per item.
    expect(markerReads).toBeLessThanOrEqual(30);
  });

  it('a retried item replays its finished phase from the memo and still reports its cost once', async () => {
    const runs = new Map<string, number>();
    const flaky = (doc: Doc, phase: string, attempt: number) => (phase === 'count' && doc.id === 'doc-3' && attempt === 1 ? new Error('model overloaded') : undefined);
    const { bulk } = await setup(summarise(runs, flaky));
    const items = docs(6);
    const report = await (await bulk.submit(items, { key: (d) => d.id })).done();
    expect(report.succeeded).toBe(6);
    expect(runs.get('extract:doc-3')).toBe(1);
    expect(runs.get('count:doc-3')).toBe(2);
    expect(report.cost).toEqual(expectedCost(items));
  });

  it('failed items are reported with their key and error, permanent ones without retrying', async () => {
    const runs = new Map<string, number>();
    const bad = (doc: Doc, phase: string) => (phase === 'extract' && doc.id === 'doc-2' ? StepError.permanent('unreadable document') : undefined);
    const { bulk } = await setup(summarise(runs, bad));
    const items = docs(5);
    const batch = await bulk.submit(items, { key: (d) => d.id });
    const results = await collect(batch.results());
    const report = await batch.done();
    expect(report).toMatchObject({ outcome: 'completed', succeeded: 4, failed: 1, failedKeys: ['doc-2'] });
    expect(results.find((r) => r.key === 'doc-2')).toMatchObject({ status: 'failed', error: 'phase extract: unreadable document' });
    expect(runs.get('extract:doc-2')).toBe(1);
    expect(report.cost).toEqual(expectedCost(items.filter((d) => d.id !== 'doc-2')));
  });

  it('stops once failures pass maxFailures: items not started are cancelled and the report says why', async () => {
    const runs = new Map<string, number>();
    const { bulk } = await setup(summarise(runs, () => StepError.permanent('always fails')), { maxConcurrentItems: 1 });
    const items = docs(40);
    const batch = await bulk.submit(items, { batchId: 'stop-count', failurePolicy: { maxFailures: 3 } });
    const report = await batch.done();
    expect(report.outcome).toBe('stopped');
    // The policy trips at the fourth failure; items already claimed by then still end on their own.
    expect(report.stopReason).toBe('4 items failed, more than maxFailures=3');
    expect(report.failed).toBeGreaterThanOrEqual(4);
    expect(report.cancelled).toBeGreaterThan(20);
    expect(report.failed + report.cancelled + report.succeeded).toBe(40);
    const executed = [...runs.keys()].filter((k) => k.startsWith('extract:')).length;
    expect(executed).toBeGreaterThanOrEqual(report.failed);
    expect(executed).toBeLessThan(40 - 20);
    expect(await bulk.status('stop-count')).toMatchObject({ total: 40, failed: report.failed, cancelled: report.cancelled, pending: 0, stopReason: report.stopReason });
    // A stopped batch stays stopped when driven again.
    const again = await (await bulk.resume('stop-count')).done();
    expect(again).toMatchObject({ outcome: 'stopped', failed: report.failed, cancelled: report.cancelled });
  });

  it('stops once the failed fraction passes maxFailureFraction (strictly greater)', async () => {
    const runs = new Map<string, number>();
    const failing = (doc: Doc) => (Number(doc.id.slice(4)) % 2 === 0 ? StepError.permanent('even') : undefined);
    const { bulk } = await setup(summarise(runs, failing), { maxConcurrentItems: 1 });
    const report = await (await bulk.submit(docs(40), { failurePolicy: { maxFailureFraction: 0.1 } })).done();
    expect(report.outcome).toBe('stopped');
    // 4/40 = 0.1 does not trip, the fifth failure does.
    expect(report.failed).toBeGreaterThanOrEqual(5);
    expect(report.stopReason).toBe('5 of 40 items failed, more than maxFailureFraction=0.1');
    expect(report.cancelled).toBeGreaterThan(0);

    const loose = await setup(summarise(new Map(), failing), { maxConcurrentItems: 2 });
    const all = await (await loose.bulk.submit(docs(10), { failurePolicy: { maxFailureFraction: 0.5 } })).done();
    expect(all).toMatchObject({ outcome: 'completed', failed: 5, succeeded: 5 });
  });

  it('resubmitting a batch id is idempotent: same handle while running, finished items read back, not rerun', async () => {
    const runs = new Map<string, number>();
    const { bulk } = await setup(summarise(runs));
    const items = docs(12);
    const [a, b] = await Promise.all([bulk.submit(items, { batchId: 'same' }), bulk.submit(items, { batchId: 'same' })]);
    const first = await a.done();
    expect(await b.done()).toEqual(first);
    const again = await bulk.submit(items, { batchId: 'same' });
    const second = await again.done();
    expect({ ...second, elapsedMs: 0 }).toEqual({ ...first, elapsedMs: 0 });
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(24);
    expect((await collect(again.results())).length).toBe(12);

    const err = await bulk.submit(docs(11), { batchId: 'same' }).catch((e: unknown) => e);
    expect(isTaqubaError(err, 'INPUT_MISMATCH') && err.details.reason).toBe('batch_mismatch');
  });

  it('streams from a cursor after a restart: the rest of the items, none twice', async () => {
    const store = new MemoryObjectStore();
    const runs = new Map<string, number>();
    const items = docs(25);
    const firstRun = await setup(summarise(runs), { maxConcurrentItems: 3 }, store);
    const batch = await firstRun.bulk.submit(items, { batchId: 'stream' });
    const head = await collect(batch.results(), 8);
    expect(head).toHaveLength(8);
    const cursor = head.at(-1)!.cursor;
    // A second stream from the same cursor sees the rest (in process).
    const restInProcess = await collect(batch.results({ after: cursor }));
    await batch.done();
    await firstRun.worker.shutdown();
    await firstRun.queue.close();

    const secondRun = await setup(summarise(runs), {}, store);
    const resumed = await secondRun.bulk.resume('stream');
    const rest = await collect(resumed.results({ after: cursor }));
    expect(rest.map((r) => r.key)).toEqual(restInProcess.map((r) => r.key));
    const keys = [...head, ...rest].map((r) => r.key);
    expect(new Set(keys).size).toBe(25);
    expect(keys.length).toBe(25);
    const full = await collect(resumed.results());
    expect(full.map((r) => r.key)).toEqual(keys);
    expect((await resumed.done()).succeeded).toBe(25);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
  });

  it('status reads the durable view and forget removes the batch so it starts over', async () => {
    const runs = new Map<string, number>();
    const { bulk } = await setup(summarise(runs));
    const items = docs(4);
    const report = await (await bulk.submit(items, { batchId: 'gone' })).done();
    expect(await bulk.status('gone')).toEqual({ batchId: 'gone', total: 4, succeeded: 4, failed: 0, cancelled: 0, pending: 0, stopReason: null, failedKeys: [], cost: report.cost });
    expect(await bulk.forget('gone')).toBe(true);
    expect(await bulk.forget('gone')).toBe(false);
    await expect(bulk.status('gone')).rejects.toMatchObject({ code: 'NOT_FOUND', details: { reason: 'batch_not_found' } });
    await (await bulk.submit(items, { batchId: 'gone' })).done();
    expect(runs.get('extract:item-0')).toBe(2);
  });

  it('status counts the items nobody worked yet, and forget cancels their queued runs', async () => {
    const runs = new Map<string, number>();
    const first = await open();
    // Submitted, never worked: this process goes away with every item still queued.
    await new Bulk(first.queue, first.store, summarise(runs), { logger: false }).submit(docs(5), { batchId: 'idle' });
    await first.queue.close();

    const { bulk, queue } = await setup(summarise(runs), {}, first.store);
    expect(await bulk.status('idle')).toEqual({
      batchId: 'idle', total: 5, succeeded: 0, failed: 0, cancelled: 0, pending: 5, stopReason: null, failedKeys: [], cost: { phases: {}, total: {} },
    });
    expect(await bulk.forget('idle')).toBe(true);
    await queue.whenIdle();
    expect((await bulk.runtime.listRuns()).runs).toEqual([]);
    expect(runs.size).toBe(0);
    await expect(bulk.resume('idle')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a phase value too large for a KV entry is kept in the step memo and replayed from there', async () => {
    let big = 0;
    let tries = 0;
    const p = pipeline<number>()
      .phase('big', (n) => {
        big++;
        return 'x'.repeat(300 * 1024 + n);
      })
      .phase('size', (text) => {
        if (++tries === 1) throw new Error('flaky');
        return text.length;
      });
    const { queue, store } = await open();
    const bulk = new Bulk(queue, store, p, { pollIntervalMs: 10, logger: false });
    const worker = bulk.spawn();
    cleanups.push(() => worker.shutdown());
    const report = await (await bulk.submit([1])).done();
    expect(report.succeeded).toBe(1);
    expect(tries).toBe(2);
    expect(big).toBe(1);
    const [result] = await collect((await bulk.resume(report.batchId)).results());
    expect(result?.output).toBe(300 * 1024 + 1);
  });

  it('a shutdown mid-batch rejects done() with CANCELLED; resuming finishes it without rerunning a phase', async () => {
    const runs = new Map<string, number>();
    // The first three items pass; the others wait at this gate, so the shutdown below lands with
    // items in flight and most not started. The gate opens once the shutdown has begun.
    let passed = 0;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const slowly = (p: Pipeline<Doc, { id: string; words: number }>) =>
      pipeline<Doc>()
        .phase('wait', async (doc) => {
          if (++passed > 3) await gate;
          return doc;
        })
        .phase('run', async (doc, ctx) => {
          let value: unknown = doc;
          for (const phase of p.phases) value = await phase.run(value, ctx as never);
          return value as { id: string; words: number };
        });
    const { bulk, worker, queue, store } = await setup(slowly(summarise(runs)), { maxConcurrentItems: 2 });
    const items = docs(16);
    const batch = await bulk.submit(items, { batchId: 'interrupted', key: (d) => d.id });
    const head = await collect(batch.results(), 3);
    const stopping = worker.shutdown(); // stops claiming, then waits for the items at the gate
    openGate();
    await stopping;
    await expect(batch.done()).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(batch.progress().done).toBeLessThan(16);

    const again = new Bulk(queue, store, slowly(summarise(runs)), { pollIntervalMs: 10, logger: false });
    const second = again.spawn();
    cleanups.push(() => second.shutdown());
    const resumed = await again.resume('interrupted');
    const rest = await collect(resumed.results({ after: head.at(-1)!.cursor }));
    expect(new Set([...head, ...rest].map((r) => r.key)).size).toBe(16);
    expect(await resumed.done()).toMatchObject({ outcome: 'completed', succeeded: 16 });
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(32);
  });

  it('an empty batch is finished at once', async () => {
    const { bulk } = await setup(summarise(new Map()));
    const batch = await bulk.submit([], { batchId: 'empty' });
    expect(batch.progress()).toMatchObject({ total: 0, done: 0, doneFraction: 1, finished: true, etaMs: 0 });
    expect(await batch.done()).toMatchObject({ outcome: 'completed', total: 0, succeeded: 0, cost: { phases: {}, total: {} } });
    expect(await collect(batch.results())).toEqual([]);
  });

  it('rejects bad inputs with typed errors', async () => {
    const { bulk, queue, store } = await setup(summarise(new Map()));
    const reason = async (p: Promise<unknown> | (() => unknown)) => {
      try {
        await (typeof p === 'function' ? p() : p);
      } catch (e) {
        return isTaqubaError(e) ? `${e.code}:${String(e.details.reason ?? e.details.option ?? '')}` : String(e);
      }
      return 'no error';
    };
    expect(await reason(bulk.submit(docs(1), { batchId: 'bad id!' }))).toBe('INVALID_ARGUMENT:invalid_batch_id');
    expect(await reason(bulk.submit([...docs(2), docs(1)[0]!], { key: (d) => d.id }))).toBe('INVALID_ARGUMENT:duplicate_item_key');
    expect(await reason(bulk.submit(docs(2), { key: () => '' }))).toBe('INVALID_ARGUMENT:invalid_item_key');
    expect(await reason(bulk.submit([{ id: 'x', text: 'y', f: () => 1 } as Doc]))).toBe('INVALID_ARGUMENT:invalid_item');
    expect(await reason(bulk.submit(docs(1), { failurePolicy: { maxFailures: -1 } }))).toBe('INVALID_ARGUMENT:invalid_policy');
    expect(await reason(bulk.submit(docs(1), { failurePolicy: { maxFailureFraction: 1.5 } }))).toBe('INVALID_ARGUMENT:invalid_policy');
    expect(await reason(bulk.submit(docs(1), { failurePolicy: { maxFailure: 1 } as never }))).toBe('INVALID_ARGUMENT:invalid_policy');
    expect(await reason(bulk.submit(null as never))).toBe('INVALID_ARGUMENT:invalid_spec');
    expect(await reason(bulk.submit(docs(1), { headers: { 'workflow.x': '1' } }))).toBe('INVALID_ARGUMENT:reserved_header');
    const unknown = await bulk.submit(docs(1), { batchID: 'x' } as never).catch((e: unknown) => e);
    expect(isTaqubaError(unknown, 'INVALID_ARGUMENT') && unknown.details.suggestion).toBe('batchId');
    expect(await reason(bulk.resume('never-submitted'))).toBe('NOT_FOUND:batch_not_found');
    const batch = await bulk.submit(docs(1), { batchId: 'cursor' });
    expect(await reason(() => batch.results({ after: 'abc' }))).toBe('INVALID_ARGUMENT:invalid_cursor');
    expect(await reason(() => batch.onProgress(null as never))).toBe('INVALID_ARGUMENT:invalid_listener');
    await batch.done();
    expect(await reason(() => new Bulk(queue, store, pipeline<Doc>()))).toBe('INVALID_ARGUMENT:invalid_pipeline');
    expect(await reason(() => pipeline<Doc>().phase('a', (d) => d).phase('a', (d) => d))).toBe('INVALID_ARGUMENT:invalid_pipeline');
    expect(await reason(() => pipeline<Doc>().phase('', (d) => d))).toBe('INVALID_ARGUMENT:invalid_pipeline');
    expect(await reason(() => new Bulk(queue, store, summarise(new Map()), { maxConcurrentItems: 0 }))).toBe('INVALID_CONFIG:maxConcurrentItems');
    const typo = (() => {
      try {
        new Bulk(queue, store, summarise(new Map()), { maxConcurrentItem: 3 } as never);
      } catch (e) {
        return isTaqubaError(e, 'INVALID_CONFIG') ? e.details.suggestion : e;
      }
    })();
    expect(typo).toBe('maxConcurrentItems');
  });

  it('a phase reporting a bad cost or returning an unstorable value fails its item permanently', async () => {
    let calls = 0;
    const p = pipeline<number>()
      .phase('a', (n, ctx) => {
        calls++;
        if (n === 1) ctx.cost('', 1);
        if (n === 2) ctx.cost('usd', Number.NaN);
        return n === 3 ? (() => n) : n;
      });
    const { queue, store } = await open();
    const bulk = new Bulk(queue, store, p, { pollIntervalMs: 10, logger: false });
    const worker = bulk.spawn();
    cleanups.push(() => worker.shutdown());
    const batch = await bulk.submit([0, 1, 2, 3]);
    const results = await collect(batch.results());
    const byKey = new Map(results.map((r) => [r.key, r]));
    expect(byKey.get('item-0')).toMatchObject({ status: 'succeeded', output: 0 });
    for (const k of ['item-1', 'item-2', 'item-3']) expect(byKey.get(k)?.status).toBe('failed');
    expect(byKey.get('item-1')?.error).toContain('cost metric');
    expect(byKey.get('item-3')?.error).toContain('phase a');
    expect(calls).toBe(4);
  });

  it("an item whose phase record syncs lends its worker slot: the next item's phase runs meanwhile, phases never overlap", async () => {
    const gated = new GatedStore(new MemoryObjectStore());
    const queue = await Queue.open(gated, 'app', { logger: false });
    cleanups.push(async () => queue.close().catch(() => undefined));
    let held: HeldPuts | undefined;
    const extracted: string[] = [];
    let running = 0;
    let most = 0;
    const p = pipeline<Doc>()
      .phase('extract', async (doc) => {
        running++;
        most = Math.max(most, running);
        extracted.push(doc.id);
        // The first item's record cannot become durable until the test says so.
        held ??= gated.hold();
        await Promise.resolve();
        running--;
        return doc.text.length;
      })
      .phase('report', (chars, ctx) => `${ctx.item.id}:${chars}`);
    const bulk = new Bulk(queue, gated, p, { pollIntervalMs: 10, logger: false, maxConcurrentItems: 1 });
    const worker = bulk.spawn();
    cleanups.push(() => worker.shutdown().catch(() => undefined));
    const items = docs(2);
    const batch = await bulk.submit(items, { batchId: 'lends', key: (d) => d.id });
    try {
      // One slot: without lending it, the second item could not start while the first one's record is held.
      await waitFor(() => extracted.length === 2, "the second item's phase running while the first one's record is held");
    } finally {
      held?.release();
    }
    const report = await batch.done();
    expect(report).toMatchObject({ total: 2, succeeded: 2, failed: 0 });
    expect(most).toBe(1);
    expect(extracted.sort()).toEqual(['doc-0', 'doc-1']); // each phase ran once
  });
});
