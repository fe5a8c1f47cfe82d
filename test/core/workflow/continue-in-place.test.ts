/**
 * A run whose next step is due at once continues without a claim: the ack that stores a step turns
 * the step's job into the next step's (queue `ackContinuing`) and the worker loop runs it, once that ack is
 * durable, in its next free slot before anything new is claimed. A run of higher priority waiting
 * still goes first, and a stopping runtime leaves the next step queued.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { PRIORITY_HIGH } from '../../../src/core/queue/constants.js';
import { HEADER_RUN_ID, HEADER_STEP } from '../../../src/core/workflow/constants.js';
import { StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { b, deferred, eventually, makeHarness, QUEUE, RecordingHook } from './harness.js';

const STEPS = 3;

/**
 * A runner that records `run:step` and forwards its payload for STEPS steps; the first step
 * `holds` accepts waits for `gate` (once `started` resolved).
 */
function recorder(holds: (step: Step) => boolean = () => false) {
  const order: string[] = [];
  const gate = deferred();
  const started = deferred();
  const runner = async (step: Step) => {
    order.push(`${step.runId}:${step.stepNumber}`);
    if (holds(step)) {
      started.resolve();
      await gate.promise;
    }
    return step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload);
  };
  return { order, runner, gate, started };
}

describe('a run continues in place', () => {
  it('claims each run once: its later steps are taken by the acks, each after the step before it', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const { order, runner } = recorder();
    const hook = new RecordingHook();
    const runtime = h.runtime(runner, hook, { maxConcurrentSteps: 1 });
    for (const id of ['a', 'b', 'c']) await runtime.submit({ runId: id, input: b(id) });
    // Step jobs claimed from the queue, as `run:step` (terminal notifications are claimed too).
    const claimed: string[] = [];
    const claimBatch = h.queue.claimBatch.bind(h.queue);
    h.queue.claimBatch = async (...args) => {
      const got = await claimBatch(...args);
      for (const c of got) if (c.job.headers[HEADER_STEP] !== undefined) claimed.push(`${c.job.headers[HEADER_RUN_ID]}:${c.job.headers[HEADER_STEP]}`);
      return got;
    };
    h.start(runner, hook, { maxConcurrentSteps: 1 });
    await hook.waitFor(3);
    for (const id of ['a', 'b', 'c']) expect(order.filter((o) => o.startsWith(`${id}:`))).toEqual([`${id}:0`, `${id}:1`, `${id}:2`]);
    expect(hook.outcomes.map((o) => [o.runId, o.status]).sort()).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', 'succeeded'],
    ]);
    // Steps 1 and 2 were taken by the acks, never claimed from the queue.
    expect(claimed).toEqual(['a:0', 'b:0', 'c:0']);
    expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 0, claimed: 0 });
  });

  it("leaves the step pointer as it is: the run's job is the same, and readers take its step from the job", async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const { runner, gate, started } = recorder((step) => step.stepNumber === 2);
    const hook = new RecordingHook();
    const { runtime } = h.start(runner, hook, { maxConcurrentSteps: 1 });
    await runtime.submit({ runId: 'held', input: b('held') });
    const pointer = await h.queue.kvGet(b('workflow/steps/held'));
    await started.promise;
    expect(await h.queue.kvGet(b('workflow/steps/held'))).toEqual(pointer);
    const listed = (await runtime.listRuns()).runs.find((r) => r.runId === 'held');
    expect(listed).toMatchObject({ state: 'running', currentStep: 2 });
    gate.resolve();
    await hook.waitFor(1);
  });

  it('does not take the next step while a run of higher priority waits: that run starts first', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const { order, runner, gate, started } = recorder((step) => step.runId === 'low' && step.stepNumber === 0);
    const hook = new RecordingHook();
    const { runtime } = h.start(runner, hook, { maxConcurrentSteps: 1 });
    await runtime.submit({ runId: 'low', input: b('low') });
    await started.promise;
    await runtime.submit({ runId: 'high', input: b('high'), priority: PRIORITY_HIGH });
    gate.resolve();
    await hook.waitFor(2);
    expect(order.slice(0, 2)).toEqual(['low:0', 'high:0']);
    expect(order.filter((o) => o.startsWith('high:'))).toEqual(['high:0', 'high:1', 'high:2']);
    expect(order.filter((o) => o.startsWith('low:'))).toEqual(['low:0', 'low:1', 'low:2']);
  });

  it('a runtime that is stopping leaves the next step in the queue for the next worker', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    const { order, runner, gate, started } = recorder((step) => step.stepNumber === 0);
    const hook = new RecordingHook();
    const { runtime, handle } = h.start(runner, hook, { maxConcurrentSteps: 1 });
    await runtime.submit({ runId: 'r', input: b('r') });
    await started.promise;
    const stopped = handle.shutdown();
    gate.resolve();
    await stopped;
    expect(order).toEqual(['r:0']);
    expect(await h.queue.stats(QUEUE)).toMatchObject({ pending: 1, claimed: 0 });
    h.start(runner, hook, { maxConcurrentSteps: 1 });
    await hook.waitFor(1);
    expect(order).toEqual(['r:0', 'r:1', 'r:2']);
    await eventually(async () => (await h.queue.stats(QUEUE)).claimed === 0);
  });

  it("runs one after another leave no idle waits behind: no leak warning from the worker loop's signal", async () => {
    // A resumed step ends the worker loop's idle wait; disposing of the waiter did not end its
    // sleep, which went on for the poll interval with a listener on the loop's signal: after
    // ten sequential runs Node warned of a possible EventTarget memory leak.
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const h = await makeHarness(() => new MemoryObjectStore());
      const { runner } = recorder();
      const hook = new RecordingHook();
      const runtime = h.runtime(runner, hook, { pollIntervalMs: 60_000 });
      const worker = runtime.spawn();
      for (let i = 0; i < 30; i++) {
        await runtime.submit({ runId: `seq-${i}`, input: b('x') });
        await hook.waitFor(i + 1);
      }
      await worker.shutdown();
      // Node emits the warning on a later tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
