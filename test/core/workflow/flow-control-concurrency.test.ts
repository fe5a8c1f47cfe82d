/**
 * Concurrency limits per key (flow/concurrency.ts): admission in submission order, a side log
 * that never sees a key over its limit, cancel of a waiting run, cancel of a running holder (its
 * slot released by its real ending only), restarts with runs waiting (on
 * the memory store and on the filesystem store), a raised limit, large inputs, what queries
 * report for a waiting run.
 */
import { describe, expect, it } from 'vitest';
import { equalBytes } from '../../../src/core/bytes.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { StepError, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { randomInt, seededRandom } from '../../support/random.js';
import { fsStore } from '../../support/stores.js';
import { b, deferred, eventually, kvKeys, makeHarness, QUEUE, RecordingHook, s } from './harness.js';

const memory = (): MemoryObjectStore => new MemoryObjectStore();

/** A runner whose runs wait on a gate per run id (opened by the test) and log their start and end. */
function gatedRunner(): { runner: (step: Step) => Promise<StepOutcome>; log: string[]; open: (runId: string) => void; started: (runId: string) => boolean } {
  const log: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred<void>>>();
  const gate = (runId: string): ReturnType<typeof deferred<void>> => {
    let g = gates.get(runId);
    if (g === undefined) {
      g = deferred<void>();
      gates.set(runId, g);
    }
    return g;
  };
  return {
    log,
    open: (runId) => gate(runId).resolve(),
    started: (runId) => log.includes(`start ${runId}`),
    runner: async (step) => {
      log.push(`start ${step.runId}`);
      await gate(step.runId).promise;
      log.push(`end ${step.runId}`);
      return StepOutcome.succeed(step.payload);
    },
  };
}

/** Lets the runtime's background work move (a few macrotask turns). */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

describe('flow control: concurrency per key', () => {
  it('limit 1 runs one run of a key at a time, in submission order, while another key runs beside it', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    const { runtime } = h.start(g.runner, hook);
    const a = { key: 'user-a', limit: 1 };
    for (const runId of ['a1', 'a2', 'a3']) expect(await runtime.submit({ runId, input: b(runId), concurrency: a })).toMatchObject({ runId, newlySubmitted: true });
    await runtime.submit({ runId: 'b1', concurrency: { key: 'user-b', limit: 1 } });
    await eventually(() => g.started('a1') && g.started('b1'));
    await settle();
    expect(g.started('a2') || g.started('a3')).toBe(false);
    expect(await runtime.getRun('a2')).toMatchObject({ state: 'waiting-for-slot', currentStep: 0, attempts: 0, waitingFor: { type: 'slot', key: 'user-a', position: 0 } });
    expect(await runtime.getRun('a3')).toMatchObject({ state: 'waiting-for-slot', waitingFor: { type: 'slot', key: 'user-a', position: 1 } });
    expect(await runtime.readStatus('a3')).toEqual({ runId: 'a3', state: 'pending', currentStep: 0 });
    expect((await runtime.listRuns({ status: 'waiting-for-slot' })).runs.map((r) => r.runId)).toEqual(['a2', 'a3']);
    // A waiting run has no job yet: the queue holds only the two running ones.
    expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, scheduled: 0, claimed: 2 });

    g.open('a1');
    await eventually(() => g.started('a2'));
    await settle();
    expect(g.started('a3')).toBe(false);
    g.open('a2');
    g.open('a3');
    g.open('b1');
    await hook.waitFor(4);
    expect(g.log.filter((l) => l.endsWith('a1') || l.endsWith('a2') || l.endsWith('a3'))).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}:${s(o.result ?? b(''))}`).sort()).toEqual(['a1:succeeded:a1', 'a2:succeeded:a2', 'a3:succeeded:a3', 'b1:succeeded:'].sort());
    // Nothing of the keys is left once their runs ended.
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  it('never lets a key exceed its limit: 20 runs over 3 keys, steps of random length, retries and a failure (side log)', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const rand = seededRandom(29);
    const limits: Record<string, number> = { k1: 1, k2: 2, k3: 3 };
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const violations: string[] = [];
    const keyOf = (step: Step): string => step.headers.key!;
    const { runtime } = h.start(
      async (step) => {
        const key = keyOf(step);
        if (step.stepNumber === 0 && step.attempt === 1) {
          const now = (active.get(key) ?? 0) + 1;
          active.set(key, now);
          peak.set(key, Math.max(peak.get(key) ?? 0, now));
          if (now > limits[key]!) violations.push(`${key} had ${now} active runs (limit ${limits[key]})`);
        }
        for (let i = randomInt(rand, 30); i > 0; i--) await new Promise((r) => setImmediate(r));
        if (rand() < 0.15) throw StepError.transient('flaky');
        const last = step.stepNumber === 2;
        // The run releases its slot only when its ending commits, after this returns.
        if (last || s(step.payload) === 'fail') active.set(key, active.get(key)! - 1);
        if (s(step.payload) === 'fail') return StepOutcome.fail('asked to fail');
        return last ? StepOutcome.succeed(step.payload) : StepOutcome.continueNow(step.payload);
      },
      hook,
      { stepMaxAttempts: 10 },
    );
    const keys = Object.keys(limits);
    const submitted: string[] = [];
    for (let i = 0; i < 20; i++) {
      const key = keys[i % 3]!;
      const { runId } = await runtime.submit({ input: b(i === 7 ? 'fail' : `run-${i}`), headers: { key }, concurrency: { key, limit: limits[key]! } });
      submitted.push(runId);
    }
    await hook.waitFor(20, 30_000);
    expect(violations).toEqual([]);
    expect(Object.fromEntries(peak)).toEqual({ k1: 1, k2: 2, k3: 3 });
    expect(hook.outcomes.filter((o) => o.status === 'succeeded')).toHaveLength(19);
    expect(new Set(hook.outcomes.map((o) => o.runId))).toEqual(new Set(submitted));
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  it('cancel of a waiting run removes it from the list: it never runs, the next one takes the slot', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    const { runtime } = h.start(g.runner, hook);
    const c = { key: 'k', limit: 1 };
    for (const runId of ['r1', 'r2', 'r3']) await runtime.submit({ runId, concurrency: c });
    await eventually(() => g.started('r1'));
    expect(await runtime.cancel('r2')).toBe(true);
    expect(await runtime.getRun('r2')).toBeNull();
    expect(await runtime.cancel('r2')).toBe(false);
    expect(await runtime.getRun('r3')).toMatchObject({ state: 'waiting-for-slot', waitingFor: { position: 0 } });
    g.open('r1');
    g.open('r3');
    await hook.waitFor(3);
    expect(g.started('r2')).toBe(false);
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}`)).toEqual(['r2:cancelled', 'r1:succeeded', 'r3:succeeded']);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  it('a cancel that only flags a running holder leaves its slot to its real ending: the waiting run starts once, after it', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    const { runtime } = h.start(g.runner, hook);
    const c = { key: 'k', limit: 1 };
    for (const runId of ['r0', 'r1', 'r2']) await runtime.submit({ runId, concurrency: c });
    await eventually(() => g.started('r0'));
    g.open('r0');
    await eventually(() => g.started('r1'));
    // r1 is running: the cancel only flags it, and the slot release its ending prepared is discarded with the cancel's effects.
    expect(await runtime.cancel('r1')).toBe(true);
    await settle();
    expect(g.started('r2')).toBe(false);
    expect(await runtime.getRun('r2')).toMatchObject({ state: 'waiting-for-slot', waitingFor: { position: 0 } });
    g.open('r1');
    await eventually(() => g.started('r2'));
    g.open('r2');
    await hook.waitFor(3);
    await h.stopRuntimes();
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}`)).toEqual(['r0:succeeded', 'r1:cancelled', 'r2:succeeded']);
    expect(g.log).toEqual(['start r0', 'end r0', 'start r1', 'end r1', 'start r2', 'end r2']);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  // The store a Node process restarts on, beside the memory store (its writer lock is off: the
  // harness reopens the queue in this process).
  const stores = [{ name: 'memory', factory: memory }, fsStore({ writerLock: false })];

  it.each(stores)('a waiting run submitted by an earlier process is found through its records: cancel, duplicate, status ($name)', async ({ factory }) => {
    const h = await makeHarness(factory);
    const hook = new RecordingHook();
    const first = h.runtime(async (step) => StepOutcome.succeed(step.payload), hook);
    const c = { key: 'k', limit: 1 };
    await first.submit({ runId: 'r1', concurrency: c });
    await first.submit({ runId: 'r2', input: b('two'), concurrency: c });
    await first.submit({ runId: 'r3', concurrency: c });
    await h.restart();
    // A new process: nothing of these runs in its registry.
    const g = gatedRunner();
    const { runtime } = h.start(g.runner, hook);
    expect(runtime.status('r2')).toBeNull();
    expect(await runtime.readStatus('r2')).toEqual({ runId: 'r2', state: 'pending', currentStep: 0 });
    expect(await runtime.submit({ runId: 'r2', input: b('two'), concurrency: c })).toMatchObject({ runId: 'r2', newlySubmitted: false });
    await expect(runtime.submit({ runId: 'r2', input: b('other'), concurrency: c })).rejects.toMatchObject({ code: 'INPUT_MISMATCH' });
    expect(await runtime.cancel('r2')).toBe(true);
    await eventually(() => g.started('r1'));
    g.open('r1');
    g.open('r3');
    await hook.waitFor(3);
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}`)).toEqual(['r2:cancelled', 'r1:succeeded', 'r3:succeeded']);
  });

  it.each(stores)('a crash with runs holding and waiting for slots loses nothing: the holder resumes, keeps its slot, and hands it on ($name)', async ({ factory }) => {
    const h = await makeHarness(factory);
    const hook = new RecordingHook();
    const g1 = gatedRunner();
    const first = h.start(g1.runner, hook);
    const c = { key: 'k', limit: 1 };
    for (const runId of ['r1', 'r2', 'r3']) await first.runtime.submit({ runId, input: b(runId), concurrency: c });
    await eventually(() => g1.started('r1'));
    await h.crashRestart();
    const g2 = gatedRunner();
    const { runtime } = h.start(g2.runner, hook);
    // The interrupted holder runs again; the others still wait behind it.
    await eventually(() => g2.started('r1'));
    await settle();
    expect(g2.started('r2')).toBe(false);
    expect(await runtime.getRun('r2')).toMatchObject({ state: 'waiting-for-slot' });
    for (const runId of ['r1', 'r2', 'r3']) g2.open(runId);
    await hook.waitFor(3);
    expect(hook.outcomes.map((o) => `${o.runId}:${s(o.result!)}`)).toEqual(['r1:r1', 'r2:r2', 'r3:r3']);
    expect(g2.log).toEqual(['start r1', 'end r1', 'start r2', 'end r2', 'start r3', 'end r3']);
  });

  it('a run revived by retryDeadStep takes its slot back (over the limit): runs submitted meanwhile wait until it ends', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    let failOnce = true;
    const { runtime } = h.start(async (step) => {
      if (step.runId === 'r1' && failOnce) {
        failOnce = false;
        throw StepError.permanent('broken');
      }
      return g.runner(step);
    }, hook);
    const c = { key: 'k', limit: 1 };
    await runtime.submit({ runId: 'r1', concurrency: c });
    await runtime.submit({ runId: 'r2', concurrency: c });
    // r1 failed: its ending handed the slot to r2.
    await eventually(() => g.started('r2'));
    expect(hook.outcomes.map((o) => `${o.runId}:${o.status}`)).toEqual(['r1:failed']);
    const [dead] = await runtime.listDeadSteps();
    expect(await runtime.retryDeadStep(dead!.jobId)).toBe('revived');
    await eventually(() => g.started('r1'));
    await runtime.submit({ runId: 'r3', concurrency: c });
    expect(await runtime.getRun('r3')).toMatchObject({ state: 'waiting-for-slot' });
    g.open('r2');
    await settle();
    // One of the two holders ended: the key is still full (the revived run holds a slot too).
    expect(g.started('r3')).toBe(false);
    g.open('r1');
    await eventually(() => g.started('r3'));
    g.open('r3');
    await hook.waitFor(4);
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });

  it('the latest limit is the key limit: raising it admits waiting runs at once, oldest first', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    const { runtime } = h.start(g.runner, hook);
    for (const runId of ['r1', 'r2', 'r3']) await runtime.submit({ runId, concurrency: { key: 'k', limit: 1 } });
    await eventually(() => g.started('r1'));
    await runtime.submit({ runId: 'r4', concurrency: { key: 'k', limit: 3 } });
    // r2 and r3 came first: they take the two new slots, r4 waits.
    await eventually(() => g.started('r2') && g.started('r3'));
    await settle();
    expect(g.started('r4')).toBe(false);
    expect(await runtime.getRun('r4')).toMatchObject({ state: 'waiting-for-slot', waitingFor: { position: 0 } });
    g.open('r2');
    await eventually(() => g.started('r4'));
    for (const runId of ['r1', 'r3', 'r4']) g.open(runId);
    await hook.waitFor(4);
  });

  it('a waiting run keeps a large input (stored in chunks) and its headers, priority and attempts', async () => {
    const h = await makeHarness(memory);
    const hook = new RecordingHook();
    const g = gatedRunner();
    const seen: { runId: string; size: number; headers: Record<string, string>; maxAttempts: number }[] = [];
    const { runtime } = h.start(async (step) => {
      seen.push({ runId: step.runId, size: step.payload.length, headers: { ...step.headers }, maxAttempts: step.maxAttempts });
      return g.runner(step);
    }, hook);
    const big = new Uint8Array(300_000).map((_, i) => i % 251);
    await runtime.submit({ runId: 'r1', concurrency: { key: 'k', limit: 1 } });
    await runtime.submit({ runId: 'r2', input: big, headers: { who: 'me' }, maxAttemptsPerStep: 7, priority: 5, concurrency: { key: 'k', limit: 1 } });
    expect((await kvKeys(h.queue, 'workflow/flow/')).filter((k) => k.includes('/input/r2/'))).toHaveLength(2);
    expect(await runtime.getRun('r2')).toMatchObject({ maxAttempts: 7, headers: { who: 'me' } });
    await eventually(() => g.started('r1'));
    g.open('r1');
    g.open('r2');
    const outcomes = await hook.waitFor(2);
    // (a byte comparison: deep equality over 300 000 elements takes seconds)
    expect(equalBytes(outcomes[1]!.result!, big)).toBe(true);
    expect(seen[1]).toEqual({ runId: 'r2', size: big.length, headers: { who: 'me' }, maxAttempts: 7 });
    expect(await kvKeys(h.queue, 'workflow/flow/')).toEqual([]);
  });
});
