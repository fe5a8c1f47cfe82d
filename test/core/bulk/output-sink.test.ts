/**
 * Output sinks (reference `OutputSink`, `JsonlSink`, `NullSink`) and how a batch run feeds them
 * (spec §3.3 steps 4-5): every item reaches the sink once per batch run, the sink is flushed when
 * the run ends, and a flush error is the run's error unless an item (or write) error already is.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Bulk,
  JsonlSink,
  MemoryObjectStore,
  NullSink,
  pipeline,
  Queue,
  readJsonl,
  StepError,
  type BulkOptions,
  type OutputRecord,
  type OutputSink,
  type Pipeline,
} from '../../../src/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Keeps every record and counts flushes; `failWrite` / `failFlush` make it fail. */
class MemorySink implements OutputSink {
  readonly records: OutputRecord[] = [];
  flushes = 0;
  constructor(private readonly options: { failWrite?: (r: OutputRecord) => boolean; failFlush?: boolean } = {}) {}
  async write(record: OutputRecord): Promise<void> {
    if (this.options.failWrite?.(record)) throw new Error(`cannot write ${record.key}`);
    this.records.push(record);
  }
  async flush(): Promise<void> {
    this.flushes++;
    if (this.options.failFlush) throw new Error('flush failed');
  }
}

const double = pipeline<number>().phase('double', (n) => {
  if (n < 0) throw StepError.permanent(`negative: ${n}`);
  return n * 2;
});

async function setup<O>(p: Pipeline<number, O>, options: BulkOptions = {}) {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'app', { logger: false, schedulerIntervalMs: 10, queueConfigs: { 'bulk-items': { retryBackoffBaseMs: 1, retryBackoffMaxMs: 5, maxAttempts: 2 } } });
  cleanups.push(async () => queue.close().catch(() => undefined));
  const bulk = new Bulk(queue, store, p, { pollIntervalMs: 10, logger: false, ...options });
  const worker = bulk.spawn();
  cleanups.push(() => worker.shutdown().catch(() => undefined));
  return { store, queue, bulk, worker };
}

const byKey = (records: readonly OutputRecord[]) => [...records].sort((a, b) => a.key.localeCompare(b.key));

describe('JsonlSink', () => {
  it('writes one JSON object per line with key, status and output or error, in write order', async () => {
    let text = '';
    const sink = new JsonlSink((line) => {
      text += line;
    });
    // Written at once, without waiting: still one whole line each, in order.
    await Promise.all([
      sink.write({ key: 'a', status: 'succeeded', output: { n: 1, at: new Date(0) } }),
      sink.write({ key: 'b', status: 'failed', error: 'phase x: boom' }),
      sink.write({ key: 'c', status: 'cancelled', error: 'not started' }),
      sink.write({ key: 'd', status: 'succeeded', output: null }),
    ]);
    await sink.flush();
    expect(text).toBe(
      '{"key":"a","status":"succeeded","output":{"n":1,"at":"1970-01-01T00:00:00.000Z"}}\n' +
        '{"key":"b","status":"failed","error":"phase x: boom"}\n' +
        '{"key":"c","status":"cancelled","error":"not started"}\n' +
        '{"key":"d","status":"succeeded","output":null}\n',
    );
  });

  it('writes bytes to a WritableStream and closes it on close()', async () => {
    const chunks: Uint8Array[] = [];
    let closed = false;
    const stream = new WritableStream<Uint8Array>({
      write: async (chunk) => {
        await new Promise((r) => setTimeout(r, 1));
        chunks.push(chunk);
      },
      close: () => {
        closed = true;
      },
    });
    const sink = new JsonlSink(stream);
    void sink.write({ key: 'a', status: 'succeeded', output: 1 });
    void sink.write({ key: 'b', status: 'succeeded', output: 2 });
    await sink.close();
    expect(closed).toBe(true);
    const lines = [];
    for await (const item of readJsonl(chunks)) lines.push(item.ok ? item.value : item.error);
    expect(lines).toEqual([{ key: 'a', status: 'succeeded', output: 1 }, { key: 'b', status: 'succeeded', output: 2 }]);
  });

  it('rejects an output JSON cannot hold, a bad target, a locked stream; a failed target fails later writes and flush', async () => {
    const sink = new JsonlSink(() => undefined);
    await expect(sink.write({ key: 'big', status: 'succeeded', output: 10n })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unserializable_output', key: 'big' } });
    await sink.flush(); // a record refused before queueing leaves the sink usable
    for (const target of [null, 42, {}]) expect(() => new JsonlSink(target as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_sink' }) }));
    const locked = new WritableStream<Uint8Array>();
    locked.getWriter();
    expect(() => new JsonlSink(locked)).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: 'invalid_sink' }) }));
    let calls = 0;
    const broken = new JsonlSink(() => {
      calls++;
      throw new Error('disk full');
    });
    await expect(broken.write({ key: 'a', status: 'succeeded' })).rejects.toThrow('disk full');
    await expect(broken.write({ key: 'b', status: 'succeeded' })).rejects.toThrow('disk full');
    await expect(broken.flush()).rejects.toThrow('disk full');
    expect(calls).toBe(1);
  });

  it("works over Node's streams without a Node-only helper: Writable.toWeb out, a read stream back in", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'taquba-jsonl-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'out.jsonl');
    const sink = new JsonlSink(Writable.toWeb(createWriteStream(file)));
    await sink.write({ key: 'a', status: 'succeeded', output: 'é'.repeat(3) });
    await sink.write({ key: 'b', status: 'failed', error: 'boom' });
    await sink.close();
    const back = [];
    for await (const item of readJsonl<OutputRecord>(createReadStream(file, { highWaterMark: 7 }))) back.push(item.ok ? item.value : item.error);
    expect(back).toEqual([{ key: 'a', status: 'succeeded', output: 'ééé' }, { key: 'b', status: 'failed', error: 'boom' }]);
  });

  it('NullSink takes and discards records', async () => {
    const sink = new NullSink();
    expect(sink.write()).toBeUndefined();
    expect(sink.flush()).toBeUndefined();
  });
});

describe('a batch run writes to its output sink', () => {
  it('every item once with its outcome, then one flush; the batch items read from JSONL and written as JSONL', async () => {
    let text = '';
    const sink = new JsonlSink((line) => {
      text += line;
    });
    const { bulk } = await setup(double, { output: sink });
    const inputs: number[] = [];
    for await (const item of readJsonl<number>('1\n2\n\n-3\n')) if (item.ok) inputs.push(item.value);
    const report = await (await bulk.submit(inputs, { batchId: 'jsonl', key: (n) => `n${n}` })).done();
    expect([report.succeeded, report.failed]).toEqual([2, 1]);
    const written: OutputRecord[] = [];
    for await (const item of readJsonl<OutputRecord>(text)) if (item.ok) written.push(item.value);
    expect(byKey(written)).toEqual([
      { key: 'n-3', status: 'failed', error: 'phase double: negative: -3' },
      { key: 'n1', status: 'succeeded', output: 2 },
      { key: 'n2', status: 'succeeded', output: 4 },
    ]);
  });

  it('a second run of a finished batch writes every item again from the store (6 records), flushing each run', async () => {
    const sink = new MemorySink();
    const { bulk } = await setup(double, { output: sink });
    await (await bulk.submit([1, 2, -1], { batchId: 'twice' })).done();
    expect(sink.records).toHaveLength(3);
    expect(sink.flushes).toBe(1);
    await (await bulk.resume('twice')).done();
    expect(sink.records).toHaveLength(6);
    expect(sink.flushes).toBe(2);
    expect(byKey(sink.records.slice(3))).toEqual(byKey(sink.records.slice(0, 3)));
    expect(byKey(sink.records.slice(3))).toEqual([
      { key: 'item-0', status: 'succeeded', output: 2 },
      { key: 'item-1', status: 'succeeded', output: 4 },
      { key: 'item-2', status: 'failed', error: 'phase double: negative: -1' },
    ]);
  });

  it('a submission or resume can name its own sink; batches at once each reach theirs', async () => {
    const shared = new MemorySink();
    const { bulk } = await setup(double, { output: shared });
    const a = new MemorySink();
    const b = new MemorySink();
    const [ra, rb] = await Promise.all([
      bulk.submit([1, 2], { batchId: 'a', output: a }).then((batch) => batch.done()),
      bulk.submit([3, 4, 5], { batchId: 'b', output: b }).then((batch) => batch.done()),
    ]);
    expect([ra.total, rb.total]).toEqual([2, 3]);
    expect(a.records.map((r) => r.output).sort()).toEqual([2, 4]);
    expect(b.records.map((r) => r.output).sort()).toEqual([10, 6, 8]);
    expect(shared.records).toEqual([]);
    const c = new MemorySink();
    await (await bulk.resume('a', { output: c })).done();
    expect(c.records).toHaveLength(2);
    expect(shared.records).toEqual([]);
  });

  it('items a failure policy cancelled reach the sink as cancelled', async () => {
    const sink = new MemorySink();
    // The others hold the one slot for a second each (less if a cancel aborts them): with 20 ms a
    // loaded machine once finished them all before the stop took effect, leaving none to cancel.
    const slow = pipeline<number>().phase('slow', async (n, ctx) => {
      if (n === 0) throw StepError.permanent('first fails');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1_000);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      return n;
    });
    const { bulk } = await setup(slow, { output: sink, maxConcurrentItems: 1 });
    const report = await (await bulk.submit([0, 1, 2, 3, 4, 5], { batchId: 'stopped', failurePolicy: { maxFailures: 0 } })).done();
    expect(report.outcome).toBe('stopped');
    expect(sink.records).toHaveLength(6);
    expect(sink.records.filter((r) => r.status === 'cancelled').length).toBe(report.cancelled);
    expect(report.cancelled).toBeGreaterThan(0);
  });

  it('a failed write stops the batch run with its error; the sink is still flushed and the flush error does not replace it', async () => {
    const sink = new MemorySink({ failWrite: (r) => r.key === 'item-1', failFlush: true });
    const { bulk } = await setup(double, { output: sink });
    const batch = await bulk.submit([1, 2, 3], { batchId: 'write-fails' });
    await expect(batch.done()).rejects.toThrow('cannot write item-1');
    expect(sink.flushes).toBe(1);
    // The durable state is kept: a later run with a working sink finishes it.
    const ok = new MemorySink();
    const report = await (await bulk.resume('write-fails', { output: ok })).done();
    expect(report.succeeded).toBe(3);
    expect(ok.records).toHaveLength(3);
  });

  it('a flush error is the error of a run that otherwise succeeded', async () => {
    const sink = new MemorySink({ failFlush: true });
    const { bulk } = await setup(double, { output: sink });
    await expect((await bulk.submit([1], { batchId: 'flush-fails' })).done()).rejects.toThrow('flush failed');
    expect(sink.records).toEqual([{ key: 'item-0', status: 'succeeded', output: 2 }]);
    expect((await bulk.status('flush-fails')).succeeded).toBe(1);
  });

  it('a shutdown mid-batch still writes what finished and flushes', async () => {
    const sink = new MemorySink();
    // Item 0 passes; the others wait at this gate, which opens once the shutdown has begun.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const gated = pipeline<number>().phase('gate', async (n) => {
      if (n > 0) await gate;
      return n;
    });
    const { bulk, worker } = await setup(gated, { output: sink, maxConcurrentItems: 1 });
    const batch = await bulk.submit([0, 1, 2, 3], { batchId: 'shutdown' });
    while (batch.progress().done < 1) await new Promise((r) => setTimeout(r, 5));
    const stopping = worker.shutdown();
    openGate();
    await stopping;
    await expect(batch.done()).rejects.toMatchObject({ code: 'CANCELLED' });
    const keys = sink.records.map((r) => r.key);
    expect(keys).toContain('item-0');
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBeLessThan(4);
    expect(sink.flushes).toBe(1);
  });

  it('rejects a sink without write and flush: INVALID_CONFIG as an option, INVALID_ARGUMENT in a call', async () => {
    const { bulk, queue, store } = await setup(double);
    expect(() => new Bulk(queue, store, double, { output: {} as never })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', details: expect.objectContaining({ option: 'output' }) }));
    await expect(bulk.submit([1], { output: { write: () => undefined } as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_spec', option: 'output' } });
    await expect(bulk.resume('nope', { output: null as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(bulk.resume('nope', { sink: new NullSink() } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_spec' } });
  });
});
