/** Typed jobs under a concurrency key: the job runner passes `concurrency` to the job's run. */
import { describe, expect, it } from 'vitest';
import { defineJob, JobRunner, MemoryObjectStore, Queue } from '../../../src/index.js';

describe('JobRunner flow control', () => {
  it('runs jobs of one concurrency key one at a time, in submission order; bad options are INVALID_ARGUMENT', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app', { schedulerIntervalMs: 10 });
    const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false });
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    const work = defineJob({
      name: 'test.flow',
      run: async (n: number) => {
        peak = Math.max(peak, ++active);
        order.push(n);
        for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
        active--;
        return n * 2;
      },
    });
    runner.register(work);
    try {
      const handles = [];
      for (const n of [1, 2, 3, 4]) handles.push(await runner.submit(work, n, { concurrency: { key: 'account-9', limit: 1 } }));
      const worker = runner.spawn();
      expect(await Promise.all(handles.map((h) => h.result()))).toEqual([2, 4, 6, 8]);
      await worker.shutdown();
      expect(peak).toBe(1);
      expect(order).toEqual([1, 2, 3, 4]);
      await expect(runner.submit(work, 5, { concurrency: { key: 'k', limit: 0 } })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_flow_control', field: 'concurrency.limit' } });
    } finally {
      await queue.close();
    }
  });
});
