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

  it("a handle of a job waiting for its key's slot waits a poll interval between reads, never spins", async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app');
    const runner = new JobRunner(queue, store, { pollIntervalMs: 50, logger: false });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const work = defineJob({
      name: 'test.hold',
      run: async (n: number) => {
        if (n === 1) await held;
        return n;
      },
    });
    runner.register(work);
    let looks = 0;
    const waitForCompletion = queue.waitForCompletion.bind(queue);
    queue.waitForCompletion = (...args: Parameters<Queue['waitForCompletion']>) => {
      looks++;
      return waitForCompletion(...args);
    };
    const worker = runner.spawn();
    try {
      const first = await runner.submit(work, 1, { concurrency: { key: 'k', limit: 1 } });
      const second = await runner.submit(work, 2, { concurrency: { key: 'k', limit: 1 } });
      const result = second.result();
      await new Promise((resolve) => setTimeout(resolve, 400));
      // 400 ms at one look per 50 ms: about 8 (the first job's own wait is not started).
      expect(looks).toBeGreaterThan(1);
      expect(looks).toBeLessThan(20);
      release();
      expect(await result).toBe(2);
      expect(await first.result()).toBe(1);
    } finally {
      release();
      await worker.shutdown();
      await queue.close();
    }
  });
});
