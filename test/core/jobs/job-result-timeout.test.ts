/**
 * The join timeout (reference `JobHandle::join_timeout`): `handle.result({ timeoutMs })` stops
 * waiting with TIMEOUT while the job goes on; the caller's own signal still means CANCELLED.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineJob, isTaqubaError, JobRunner, MemoryObjectStore, Queue } from '../../../src/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const gates = new Map<string, () => void>();
const gated = defineJob({
  name: 'timeout.gated',
  run: async ({ gate }: { gate: string }) => {
    await new Promise<void>((resolve) => gates.set(gate, resolve));
    return `opened ${gate}`;
  },
});
const quick = defineJob({ name: 'timeout.quick', run: async (n: number) => n + 1 });

async function setup() {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'app', { logger: false });
  cleanups.push(() => queue.close());
  const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false }).register(gated).register(quick);
  const worker = runner.spawn();
  cleanups.push(() => worker.shutdown());
  return runner;
}

async function open(gate: string): Promise<void> {
  while (!gates.has(gate)) await new Promise((r) => setTimeout(r, 5));
  gates.get(gate)!();
}

describe('JobHandle.result({ timeoutMs })', () => {
  it('rejects with TIMEOUT when the job is still running; the job goes on and a later wait gets its output', async () => {
    const runner = await setup();
    const handle = await runner.submit(gated, { gate: 'g1' });
    const started = Date.now();
    const timedOut = await handle.result({ timeoutMs: 60 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(isTaqubaError(timedOut, 'TIMEOUT')).toBe(true);
    expect(timedOut).toMatchObject({ details: { jobId: handle.id, timeoutMs: 60 } });
    const waiting = handle.result({ timeoutMs: 10_000 });
    await open('g1');
    expect(await waiting).toBe('opened g1');
  });

  it('0 answers an outcome already stored and times out at once otherwise', async () => {
    const runner = await setup();
    const done = await runner.submit(quick, 1);
    expect(await done.result()).toBe(2);
    expect(await done.result({ timeoutMs: 0 })).toBe(2);
    const running = await runner.submit(gated, { gate: 'g2' });
    await expect(running.result({ timeoutMs: 0 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    await open('g2');
    expect(await running.result()).toBe('opened g2');
  });

  it('an abort of the caller signal is CANCELLED, not TIMEOUT', async () => {
    const runner = await setup();
    const handle = await runner.submit(gated, { gate: 'g3' });
    const controller = new AbortController();
    const waiting = handle.result({ timeoutMs: 5_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(waiting).rejects.toMatchObject({ code: 'CANCELLED' });
    await open('g3');
    expect(await handle.result({ timeoutMs: 5_000 })).toBe('opened g3');
  });

  it('rejects bad options with INVALID_ARGUMENT', async () => {
    const runner = await setup();
    const handle = await runner.submit(quick, 1);
    for (const timeoutMs of [-1, Number.NaN, Infinity, 2 ** 31, '10' as never]) {
      await expect(handle.result({ timeoutMs })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_spec', option: 'timeoutMs' } });
    }
    await expect(handle.result({ timeout: 10 } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_spec' } });
    expect(await handle.result({ timeoutMs: 5_000 })).toBe(2);
  });
});
