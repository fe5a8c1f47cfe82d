/**
 * Rate-limit records are swept (flow/rate-limit.ts): a key unused for longer than its period
 * leaves no record once the running runtime's background pass has run, while a key whose starts
 * still bind a later one keeps its record, so the limit holds across the sweep.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { RATE_SWEEP_INTERVAL_MS } from '../../../src/core/workflow/flow/rate-limit.js';
import { encodeRateStarts } from '../../../src/core/workflow/flow/flow-records.js';
import { flowRateKey } from '../../../src/core/workflow/keys.js';
import { eventually, kvKeys, makeHarness, QUEUE, RecordingHook } from './harness.js';

const HOUR = 3_600_000;
const RATE_PREFIX = `workflow/flow/${QUEUE}/rate/`;

async function setup() {
  const h = await makeHarness(() => new MemoryObjectStore());
  const hook = new RecordingHook();
  // Slow polls: minutes of mock time then wake the runtime's loops a few times, not thousands.
  const { runtime } = h.start(async (step: Step) => StepOutcome.succeed(step.payload), hook, { pollIntervalMs: 30_000 });
  return { h, hook, runtime };
}

describe('flow control: rate-limit records are swept', () => {
  it("a key's record goes once its period has passed since its last start; a busy key keeps its own", async () => {
    const { h, hook, runtime } = await setup();
    const t0 = h.clock.now();
    const brief = { key: 'tenant-brief', limit: 2, periodMs: 10_000 };
    for (let i = 0; i < 3; i++) await runtime.submit({ runId: `brief-${i}`, rateLimit: brief });
    await runtime.submit({ runId: 'long-0', rateLimit: { key: 'tenant-long', limit: 1, periodMs: 24 * HOUR } });
    await hook.waitFor(3);
    await h.advance(10_000);
    await hook.waitFor(4);
    expect(await kvKeys(h.queue, RATE_PREFIX)).toEqual([`${RATE_PREFIX}tenant-brief`, `${RATE_PREFIX}tenant-long`]);

    // The brief key's last start was at t0 + 10 s: its record binds nothing after t0 + 20 s. The
    // sweep runs every RATE_SWEEP_INTERVAL_MS of the runtime's clock.
    await h.advance(RATE_SWEEP_INTERVAL_MS);
    await eventually(async () => (await kvKeys(h.queue, RATE_PREFIX)).length === 1, 15_000, 'the brief key to be swept');
    expect(await kvKeys(h.queue, RATE_PREFIX)).toEqual([`${RATE_PREFIX}tenant-long`]);
    expect(h.clock.now() - t0).toBeGreaterThanOrEqual(20_000);

    // Used again, the swept key starts from scratch: its limit applies as before.
    await runtime.submit({ runId: 'brief-3', rateLimit: brief });
    await runtime.submit({ runId: 'brief-4', rateLimit: brief });
    await runtime.submit({ runId: 'brief-5', rateLimit: brief });
    await hook.waitFor(6);
    const third = await runtime.getRun('brief-5');
    expect(third?.waitingFor).toMatchObject({ type: 'timer', at: h.clock.now() + 10_000 });
  });

  it('the limit holds across a sweep: a record whose starts still bind is kept, and the next run waits for its period', async () => {
    const { h, hook, runtime } = await setup();
    const t0 = h.clock.now();
    const rateLimit = { key: 'tenant-1', limit: 2, periodMs: HOUR };
    await runtime.submit({ runId: 'r0', rateLimit });
    await runtime.submit({ runId: 'r1', rateLimit });
    await hook.waitFor(2);
    // Several sweeps pass within the hour: the record stays. A key of a short period, used each
    // time, shows that a sweep ran (it goes) before the look.
    for (let i = 0; i < 3; i++) {
      await runtime.submit({ runId: `marker-${i}`, rateLimit: { key: 'marker', limit: 1, periodMs: 1000 } });
      await hook.waitFor(3 + i);
      await h.advance(RATE_SWEEP_INTERVAL_MS);
      await eventually(async () => !(await kvKeys(h.queue, RATE_PREFIX)).includes(`${RATE_PREFIX}marker`), 15_000, 'a sweep');
      expect(await kvKeys(h.queue, RATE_PREFIX)).toEqual([`${RATE_PREFIX}tenant-1`]);
    }
    await runtime.submit({ runId: 'r2', rateLimit });
    expect((await runtime.getRun('r2'))?.waitingFor).toMatchObject({ type: 'timer', at: t0 + HOUR });
  });

  it('a record of an earlier version (no end of its period kept) is left alone', async () => {
    const { h, hook, runtime } = await setup();
    const key = flowRateKey(QUEUE, 'old-key');
    await h.queue.commitEffects({ kvWrites: [[key, encodeRateStarts({ starts: [h.clock.now(), 1], until: undefined })]] });
    await runtime.submit({ runId: 'marker', rateLimit: { key: 'marker', limit: 1, periodMs: 1000 } });
    await hook.waitFor(1);
    await h.advance(RATE_SWEEP_INTERVAL_MS);
    await eventually(async () => !(await kvKeys(h.queue, RATE_PREFIX)).includes(`${RATE_PREFIX}marker`), 15_000, 'a sweep');
    expect(await kvKeys(h.queue, RATE_PREFIX)).toEqual([`${RATE_PREFIX}old-key`]);
  });
});
