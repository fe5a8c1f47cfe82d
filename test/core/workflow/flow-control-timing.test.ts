/**
 * Rate limits and debounce per key (flow/rate-limit.ts, flow/debounce.ts) with the mock clock:
 * when each run starts, which input a burst's run carries, and what is left once runs end.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { nextStart } from '../../../src/core/workflow/flow/rate-limit.js';
import { b, deferred, eventually, kvKeys, makeHarness, QUEUE, RecordingHook, s } from './harness.js';

const memory = (): MemoryObjectStore => new MemoryObjectStore();

async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

describe('flow control: rate limit per key', () => {
  it('10 submissions at once with 3 per 1000 ms start at 0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000, 3000', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const t0 = h.clock.now();
    const started = new Map<string, number>();
    const { runtime } = h.start(async (step: Step) => {
      started.set(step.runId, h.clock.now() - t0);
      return StepOutcome.succeed(step.payload);
    }, hook);
    const rateLimit = { key: 'tenant-1', limit: 3, periodMs: 1000 };
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await runtime.submit({ runId: `r${i}`, rateLimit })).runId);
    // Another key is not held back by this one.
    await runtime.submit({ runId: 'other', rateLimit: { ...rateLimit, key: 'tenant-2' } });
    const planned = await Promise.all(ids.map(async (id) => {
      const run = await runtime.getRun(id);
      return run?.waitingFor?.type === 'timer' ? run.waitingFor.at - t0 : run === null ? 'ended' : 0;
    }));
    expect(planned.map((p) => (p === 'ended' ? 0 : p))).toEqual([0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000, 3000]);
    await hook.waitFor(4);
    for (const at of [999, 1, 999, 1, 999, 1]) {
      await h.advance(at);
      await settle();
    }
    await h.advance(1000);
    await hook.waitFor(11);
    expect(ids.map((id) => started.get(id))).toEqual([0, 0, 0, 1000, 1000, 1000, 2000, 2000, 2000, 3000]);
    expect(started.get('other')).toBe(0);
  });

  it('does not start a run before its time: nothing runs between the allowed starts', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const { runtime } = h.start(async (step: Step) => StepOutcome.succeed(step.payload), hook);
    const rateLimit = { key: 'k', limit: 2, periodMs: 10_000 };
    for (let i = 0; i < 3; i++) await runtime.submit({ rateLimit });
    await hook.waitFor(2);
    await h.advance(9_999);
    await settle();
    expect(hook.outcomes).toHaveLength(2);
    expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1 });
    await h.advance(1);
    await hook.waitFor(3);
  });

  it('nextStart keeps every window of periodMs at most at the limit, in submission order', () => {
    // Empty: now.
    expect(nextStart([], 3, 1000, 5000)).toEqual({ start: 5000, starts: [5000, 1] });
    // Starts a period old no longer count.
    expect(nextStart([4000, 3], 3, 1000, 5000)).toEqual({ start: 5000, starts: [5000, 1] });
    // Full window: a period after the limit-th latest start.
    expect(nextStart([4500, 3], 3, 1000, 5000)).toEqual({ start: 5500, starts: [4500, 2, 5500, 1] });
    // Never before the previous start, even with room in the window.
    expect(nextStart([4500, 1, 7000, 1], 3, 1000, 5000)).toEqual({ start: 7000, starts: [4500, 1, 7000, 2] });
    // Only the last `limit` starts are kept.
    expect(nextStart([4100, 1, 4200, 1, 4300, 1], 3, 1000, 5000)).toEqual({ start: 5100, starts: [4200, 1, 4300, 1, 5100, 1] });
    // A brute-force check of the guarantee over a random sequence of submission times.
    let starts: number[] = [];
    const all: number[] = [];
    let now = 0;
    for (let i = 0; i < 300; i++) {
      now += (i * 7919) % 13 === 0 ? 900 : (i * 104729) % 40;
      const next = nextStart(starts, 4, 500, now);
      expect(next.start).toBeGreaterThanOrEqual(now);
      if (all.length > 0) expect(next.start).toBeGreaterThanOrEqual(all[all.length - 1]!);
      all.push(next.start);
      starts = next.starts;
    }
    for (const t of all) expect(all.filter((u) => u >= t && u < t + 500).length).toBeLessThanOrEqual(4);
  });
});

describe('flow control: debounce per key', () => {
  it('5 submissions within the quiet period become one run with the last input, started periodMs after the last; then a new window', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const t0 = h.clock.now();
    const runs: { runId: string; input: string; at: number }[] = [];
    const hold = deferred();
    const { runtime } = h.start(async (step: Step) => {
      runs.push({ runId: step.runId, input: s(step.payload), at: h.clock.now() - t0 });
      if (s(step.payload) === 'v6') await hold.promise;
      return StepOutcome.succeed(step.payload);
    }, hook);
    const debounce = { key: 'doc-1', periodMs: 5000 };
    const answers = [];
    for (let i = 1; i <= 5; i++) {
      answers.push(await runtime.submit({ input: b(`v${i}`), headers: { n: String(i) }, debounce }));
      await h.advance(1000);
      await settle();
    }
    const runId = answers[0]!.runId;
    expect(answers.map((a) => a.runId)).toEqual([runId, runId, runId, runId, runId]);
    expect(answers.every((a) => a.newlySubmitted)).toBe(true);
    // One waiting step: the last submission's, due 5000 ms after it (t0 + 4000 + 5000).
    expect(await h.queue.stats(QUEUE)).toMatchObject({ scheduled: 1, pending: 0 });
    expect(await runtime.getRun(runId)).toMatchObject({ state: 'scheduled', headers: { n: '5' }, waitingFor: { type: 'timer', at: t0 + 9000 } });
    expect(runs).toEqual([]);
    await h.advance(3999);
    await settle();
    expect(runs).toEqual([]);
    await h.advance(1);
    await hook.waitFor(1);
    expect(runs).toEqual([{ runId, input: 'v5', at: 9000 }]);
    expect(s((await runtime.result(runId)).result!)).toBe('v5');
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);

    // After the window's run started, a submission opens a new window.
    const next = await runtime.submit({ input: b('v6'), debounce });
    expect(next.runId).not.toBe(runId);
    await h.advance(5000);
    await eventually(() => runs.length === 2);
    // Its run is running: a submission now opens a third window rather than changing it.
    const third = await runtime.submit({ input: b('v7'), debounce });
    expect(third.runId).not.toBe(next.runId);
    hold.resolve();
    await h.advance(5000);
    await hook.waitFor(3);
    expect(runs.map((r) => r.input)).toEqual(['v5', 'v6', 'v7']);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  it('a joining submission answers with the window run id whatever id it names; keys are independent; cancel ends the window', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const { runtime } = h.start(async (step: Step) => StepOutcome.succeed(step.payload), hook);
    const first = await runtime.submit({ runId: 'save-1', input: b('a'), debounce: { key: 'd', periodMs: 1000 } });
    const joined = await runtime.submit({ runId: 'save-2', input: b('b'), debounce: { key: 'd', periodMs: 1000 } });
    const other = await runtime.submit({ runId: 'save-3', input: b('c'), debounce: { key: 'e', periodMs: 1000 } });
    expect([first.runId, joined.runId, other.runId]).toEqual(['save-1', 'save-1', 'save-3']);
    expect(await runtime.getRun('save-2')).toBeNull();
    // The window's run now carries `b`: the earlier input is a mismatch for its id.
    await expect(runtime.submit({ runId: 'save-1', input: b('a') })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
    expect(await runtime.submit({ runId: 'save-1', input: b('b') })).toMatchObject({ newlySubmitted: false, jobId: joined.jobId });
    expect(await runtime.cancel('save-3')).toBe(true);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toHaveLength(1);
    await h.advance(1000);
    await hook.waitFor(2);
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}:${s(o.result ?? b('-'))}`)).toEqual(['save-3:cancelled:-', 'save-1:succeeded:b']);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });
});
