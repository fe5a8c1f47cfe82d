/**
 * Bulk batches through the browser host: the worker serves a pipeline (pages/app-bulk.ts), the
 * page submits a batch and watches its progress arrive as `batch-progress` events through the
 * typed client; a follower's calls reach the leader; errors cross as the library's codes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import type { BatchProgressEvent } from '../../../src/browser/index.js';
import { startHost, TestLog, uniqueName, waitFor, type TestHost } from './harness.js';

const started: TestHost[] = [];
const logs: TestLog[] = [];

function host(name: string): TestHost {
  const log = new TestLog(uniqueName('log'));
  logs.push(log);
  const h = startHost('indexeddb', name, log.name);
  started.push(h);
  return h;
}

afterEach(() => {
  for (const h of started.splice(0)) h.worker.terminate();
  for (const l of logs.splice(0)) l.close();
});

describe('bulk batches through the worker host', () => {
  it('streams batch progress as events to the page, ending with the finished counts and cost', async () => {
    const name = uniqueName('bulk');
    const a = host(name);
    await a.role('leader');
    const events: BatchProgressEvent[] = [];
    a.client.onBatchProgress((e) => events.push(e), { batchId: 'squares-1' });
    const other: BatchProgressEvent[] = [];
    a.client.onBatchProgress((e) => other.push(e), { batchId: 'someone-else' });

    const inputs = Array.from({ length: 20 }, (_, n) => ({ n, fail: n === 7 }));
    const first = await a.client.bulkSubmit(inputs, { batchId: 'squares-1', keys: inputs.map((i) => `n${i.n}`) });
    expect(first).toMatchObject({ batchId: 'squares-1', total: 20 });
    const last = await waitFor(() => events.find((e) => e.progress.finished), 'the finished progress event', 30_000);
    expect(last).toMatchObject({ type: 'batch-progress', batchId: 'squares-1', executor: a.hostId });
    expect(last.progress).toMatchObject({ total: 20, done: 20, doneFraction: 1, counts: { succeeded: 19, failed: 1, cancelled: 0, running: 0, waiting: 0 } });
    expect(last.progress.cost).toEqual({ calls: 19, chars: inputs.filter((i) => !i.fail).reduce((sum, i) => sum + String(i.n * i.n).length, 0) });
    for (let i = 1; i < events.length; i++) expect(events[i]!.progress.done).toBeGreaterThanOrEqual(events[i - 1]!.progress.done);
    expect(other).toEqual([]);
    // Batch events stay out of the run-event stream.
    expect(a.events.some((e) => (e as { type: string }).type === 'batch-progress')).toBe(false);

    const status = await a.client.bulkStatus('squares-1');
    expect(status).toMatchObject({ total: 20, succeeded: 19, failed: 1, pending: 0, failedKeys: ['n7'] });
    expect(status.cost.phases.square).toEqual({ calls: 19 });

    // A follower's calls are answered by the leader; resubmitting is idempotent.
    const b = host(name);
    await b.role('follower');
    expect(await b.client.bulkProgress('squares-1')).toMatchObject({ total: 20, done: 20, finished: true });
    const again = await b.client.bulkSubmit(inputs, { batchId: 'squares-1', keys: inputs.map((i) => `n${i.n}`) });
    expect(again).toMatchObject({ done: 20 });
  });

  it('bad batch calls reject with the library error codes', async () => {
    const a = host(uniqueName('bulk-errors'));
    await a.role('leader');
    const code = async (p: Promise<unknown>) =>
      p.then(
        () => 'no error',
        (e: unknown) => (isTaqubaError(e) ? `${e.code}:${String(e.details.reason)}` : String(e)),
      );
    expect(await code(a.client.bulkProgress('never-submitted'))).toBe('NOT_FOUND:batch_not_found');
    expect(await code(a.client.bulkSubmit([{ n: 1 }], { batchId: 'bad id' }))).toBe('INVALID_ARGUMENT:invalid_batch_id');
    expect(await code(a.client.bulkSubmit([{ n: 1 }, { n: 2 }], { keys: ['k'] }))).toBe('INVALID_ARGUMENT:invalid_spec');
    expect(await code(a.client.bulkSubmit([{ n: 1 }, { n: 2 }], { keys: ['k', 'k'] }))).toBe('INVALID_ARGUMENT:duplicate_item_key');
  });
});
