/**
 * Several `WorkflowRuntime`s on one `Queue` handle (issue 19). A runtime acts only on runs whose
 * step job is on its own queue name (cancel, readStatus, getRun, listRuns), and the per-key signal
 * lock covers every runtime on the handle, so a signal never waits out a timeout because of which
 * runtime sent it. Each scenario is repeated with randomized real-time interleavings.
 */
import { describe, expect, it } from 'vitest';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { memoryStore } from '../../support/stores.js';
import { b, deferred, eventually, kvKeys, makeHarness, RecordingHook, s, sleep } from './harness.js';

const memory = memoryStore();
const ITERATIONS = 50;
/** One hour: a run that needs its timeout to finish never finishes within a test. */
const HOUR = 3_600_000;

/** Yields a random mix of microtask turns and timer turns (0..3 ms). */
async function jitter(): Promise<void> {
  const turns = Math.floor(Math.random() * 20);
  for (let i = 0; i < turns; i++) await Promise.resolve();
  // Real time is the subject: random timer turns shuffle the interleavings each iteration explores.
  if (Math.random() < 0.5) await sleep(Math.floor(Math.random() * 4));
}

/** Step 0 waits on `key(step)` (one hour); step 1 succeeds with the signal it got. */
function waiter(key: (step: Step) => string, onStep0?: (step: Step) => Promise<void>) {
  return async (step: Step) => {
    if (step.stepNumber === 0) {
      await onStep0?.(step);
      return StepOutcome.continueOnSignal(step.payload, key(step), HOUR);
    }
    return StepOutcome.succeed(step.signalPayload ?? b('timeout'));
  };
}

describe('several runtimes on one queue handle', () => {
  // Scenario 1 of issue 19: B's cancel of A's run (parked on a signal) returned true, sent the
  // Cancelled notification to B's queue and hook, and left A's later signal only buffering.
  it("a runtime on another queue name cannot cancel a run: B's cancel of A's run is false, at any point of the run", async () => {
    const h = await makeHarness(memory.factory);
    const hookA = new RecordingHook();
    const hookB = new RecordingHook();
    const { runtime: a } = h.start(waiter((step) => `k-${s(step.payload)}`), hookA, { queueName: 'rt-a' });
    const { runtime: b2 } = h.start(async (step) => StepOutcome.succeed(step.payload), hookB, { queueName: 'rt-b' });
    for (let i = 0; i < ITERATIONS; i++) {
      const runId = `cancel-${i}`;
      await a.submit({ runId, input: b(String(i)) });
      // Anywhere in the run: step 0 pending or running, or the run parked on its signal.
      await jitter();
      expect(await b2.cancel(runId)).toBe(false);
      await eventually(async () => (await h.queue.kvGet(b(`workflow/signal-wait/k-${i}`))) !== undefined, 5000, 'waiter registered');
      expect(await b2.cancel(runId)).toBe(false);
      expect(await a.signal(`k-${i}`, b(`sig-${i}`))).toBe('delivered');
      await hookA.waitFor(i + 1);
      expect(hookA.outcomes[i]).toMatchObject({ runId, status: 'succeeded', finalStep: 1 });
      expect(s(hookA.outcomes[i].result!)).toBe(`sig-${i}`);
    }
    expect(hookB.outcomes).toEqual([]);
    expect(await h.queue.stats('rt-b')).toMatchObject({ pending: 0, scheduled: 0, claimed: 0 });
    expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
  });

  it("a run's own runtime still cancels it while the other runtime's cancel is refused", async () => {
    const h = await makeHarness(memory.factory);
    const hookA = new RecordingHook();
    const hookB = new RecordingHook();
    const { runtime: a } = h.start(waiter(() => 'parked'), hookA, { queueName: 'rt-a' });
    const { runtime: b2 } = h.start(async (step) => StepOutcome.succeed(step.payload), hookB, { queueName: 'rt-b' });
    const { runId } = await a.submit({ runId: 'own' });
    await eventually(async () => (await h.queue.kvGet(b('workflow/signal-wait/parked'))) !== undefined);
    expect(await b2.cancel(runId)).toBe(false);
    expect(await a.cancel(runId)).toBe(true);
    expect(await hookA.first()).toMatchObject({ runId, status: 'cancelled' });
    await h.stopRuntimes();
    expect(hookB.outcomes).toEqual([]);
  });

  // Scenario 2 of issue 19: B's status read reported A's run.
  it("a runtime on another queue name does not report a run: B's readStatus, getRun and listRuns never show A's run", async () => {
    const h = await makeHarness(memory.factory);
    const hookA = new RecordingHook();
    const { runtime: a } = h.start(waiter((step) => `st-${s(step.payload)}`), hookA, { queueName: 'rt-a' });
    const { runtime: b2 } = h.start(async (step) => StepOutcome.succeed(step.payload), new RecordingHook(), { queueName: 'rt-b' });
    for (let i = 0; i < ITERATIONS; i++) {
      const runId = `status-${i}`;
      await a.submit({ runId, input: b(String(i)) });
      await jitter();
      expect(await b2.readStatus(runId)).toBeNull();
      expect(b2.status(runId)).toBeNull();
      expect(await b2.getRun(runId)).toBeNull();
      expect((await b2.listRuns()).runs).toEqual([]);
      await eventually(async () => (await h.queue.kvGet(b(`workflow/signal-wait/st-${i}`))) !== undefined, 5000, 'waiter registered');
      expect(await a.readStatus(runId)).toMatchObject({ runId, state: 'pending', currentStep: 1 });
      expect(await a.getRun(runId)).toMatchObject({ runId, state: 'waiting-for-signal' });
      expect((await a.listRuns()).runs.map((r) => r.runId)).toEqual([runId]);
      expect(await b2.readStatus(runId)).toBeNull();
      expect(await b2.getRun(runId)).toBeNull();
      expect((await b2.listRuns()).runs).toEqual([]);
      await a.signal(`st-${i}`, b('go'));
      await hookA.waitFor(i + 1);
    }
  });

  // Scenario 3 of issue 19: two instances on one queue name; the second's signal raced the first's
  // waiter registration, buffered, and the waiter stayed parked until its one-hour timeout.
  it('a signal from a second runtime on the same queue name that races the waiter registration is never left for the timeout', async () => {
    const h = await makeHarness(memory.factory);
    const hook = new RecordingHook();
    const started = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const gate = (key: string) => {
      let d = started.get(key);
      if (!d) started.set(key, (d = deferred()));
      return d;
    };
    const runner = waiter(
      (step) => `race-${s(step.payload)}`,
      async (step) => {
        gate(`race-${s(step.payload)}`).resolve();
        await jitter();
      },
    );
    // The first instance submits and runs the steps (so it registers every waiter); the second,
    // on the same queue name, only signals.
    const { runtime: first } = h.start(runner, hook, { queueName: 'rt' });
    const second = h.runtime(runner, new RecordingHook(), { queueName: 'rt' });
    const outcomes = new Map<string, string>();
    await Promise.all(
      Array.from({ length: ITERATIONS }, async (_, i) => {
        const key = `race-${i}`;
        await first.submit({ runId: `race-${i}`, input: b(String(i)) });
        await gate(key).promise;
        await jitter();
        outcomes.set(key, await second.signal(key, b(`payload-${i}`)));
      }),
    );
    // The mock clock never moves: every run must finish through its signal, not its timeout.
    const done = await hook.waitFor(ITERATIONS, 10_000);
    const results = new Map(done.map((o) => [o.runId, s(o.result!)]));
    for (let i = 0; i < ITERATIONS; i++) expect(results.get(`race-${i}`)).toBe(`payload-${i}`);
    // Both sides of the race happen: a signal before the registration buffers and is consumed by it.
    for (const outcome of outcomes.values()) expect(['delivered', 'buffered']).toContain(outcome);
    expect(await kvKeys(h.queue, 'workflow/signal')).toEqual([]);
  });
});
