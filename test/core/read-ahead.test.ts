/** `readInOrder` (core/read-ahead.ts): results used in the keys' order, at most `ahead` reads in flight, failures stop it. */
import { describe, expect, it } from 'vitest';
import { readInOrder } from '../../src/core/read-ahead.js';

/** Reads that settle when the test says, in any order, counting how many are in flight. */
function manualReads() {
  const waiting = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void }>();
  let inFlight = 0;
  let peak = 0;
  return {
    read: (key: number) =>
      new Promise<string>((resolve, reject) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        waiting.set(key, {
          resolve: (v) => {
            inFlight--;
            resolve(v);
          },
          reject: (e) => {
            inFlight--;
            reject(e);
          },
        });
      }),
    started: () => [...waiting.keys()],
    settle: (key: number, error?: Error) => (error ? waiting.get(key)!.reject(error) : waiting.get(key)!.resolve(`v${key}`)),
    peak: () => peak,
  };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('readInOrder', () => {
  it('uses the results in the keys order while up to `ahead` reads are in flight, whatever order they land in', async () => {
    const reads = manualReads();
    const used: string[] = [];
    const done = readInOrder([0, 1, 2, 3, 4], 3, reads.read, (key, value) => void used.push(`${key}:${value}`));
    await turns();
    expect(reads.started()).toEqual([0, 1, 2]);
    reads.settle(2);
    reads.settle(1);
    await turns();
    // 0 has not landed: nothing is used, and no read starts past the window.
    expect(used).toEqual([]);
    expect(reads.started()).toEqual([0, 1, 2]);
    reads.settle(0);
    await turns();
    expect(used).toEqual(['0:v0', '1:v1', '2:v2']);
    expect(reads.started()).toEqual([0, 1, 2, 3, 4]);
    reads.settle(4);
    reads.settle(3);
    await done;
    expect(used).toEqual(['0:v0', '1:v1', '2:v2', '3:v3', '4:v4']);
    expect(reads.peak()).toBe(3);
  });

  it('waits for each use before the next (an async use), and an empty list reads nothing', async () => {
    const order: string[] = [];
    await readInOrder([1, 2, 3], 8, async (k) => k * 10, async (k, v) => {
      order.push(`start ${k}`);
      await turns(2);
      order.push(`end ${k}=${v}`);
    });
    expect(order).toEqual(['start 1', 'end 1=10', 'start 2', 'end 2=20', 'start 3', 'end 3=30']);
    await readInOrder([], 8, () => Promise.reject(new Error('never read')), () => undefined);
  });

  it('rejects with the first failure in order: a failed read, or a failed use; nothing after it is used', async () => {
    const reads = manualReads();
    const used: number[] = [];
    const done = readInOrder([0, 1, 2], 3, reads.read, (key) => void used.push(key));
    await turns();
    // The later read fails first; the earlier one's value is still used, then the failure surfaces.
    reads.settle(2, new Error('read 2 failed'));
    reads.settle(1, new Error('read 1 failed'));
    reads.settle(0);
    await expect(done).rejects.toThrow('read 1 failed');
    expect(used).toEqual([0]);

    const usedToo: number[] = [];
    await expect(
      readInOrder([0, 1, 2], 2, async (k) => k, (k) => {
        if (k === 1) throw new Error('use 1 failed');
        usedToo.push(k);
      }),
    ).rejects.toThrow('use 1 failed');
    expect(usedToo).toEqual([0]);
  });
});
