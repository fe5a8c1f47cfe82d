/**
 * Costs of one run. Store round trips on an idle runtime: a 3-step run needs 1 durable submit and
 * 3 durable acks; each step's claim is a non-durable commit that must ride the ack's WAL put
 * rather than start one of its own (which the ack would then wait behind: 7 sequential puts per
 * run instead of 4, the main cost of workflow.latency on the fs store). Allocations: a delivery's
 * cancel signal (an AbortController) is created only if the runner reads `step.signal`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import type { Claim } from '../../../src/core/queue/index.js';
import { HEADER_RUN_ID, HEADER_STEP, NoopTerminalHook, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { makeHarness } from './harness.js';

const STEPS = 3;

/** Counts AbortControllers created for delivery cancel signals (CancelState, lease-registry.ts). */
const NativeAbortController = globalThis.AbortController;
let deliverySignals = 0;
class CountingAbortController extends NativeAbortController {
  constructor() {
    super();
    if (new Error().stack?.includes('lease-registry')) deliverySignals++;
  }
}
afterEach(() => {
  globalThis.AbortController = NativeAbortController;
});

/** Counts puts of WAL objects. */
class WalPutCounter implements ObjectStore {
  walPuts = 0;
  constructor(private readonly inner: ObjectStore) {}
  get: ObjectStore['get'] = (key, options) => this.inner.get(key, options);
  delete: ObjectStore['delete'] = (key) => this.inner.delete(key);
  list: ObjectStore['list'] = (prefix, options) => this.inner.list(prefix, options);
  put: ObjectStore['put'] = (key, data, options) => {
    if (key.includes('/wal/')) this.walPuts++;
    return this.inner.put(key, data, options);
  };
}

describe('workflow step costs', () => {
  it('a 3-step run on an idle runtime costs 4 WAL puts: the submit and one per step', async () => {
    const counter = new WalPutCounter(new MemoryObjectStore());
    const h = await makeHarness(() => counter);
    // The terminal ack resolving means the run's last settlement is durable.
    const terminal = new Map<string, () => void>();
    const ackWith = h.queue.ackWith.bind(h.queue);
    (h.queue as { ackWith: typeof ackWith }).ackWith = async (claim: Claim, effects) => {
      const results = await ackWith(claim, effects);
      if (claim.job.headers[HEADER_STEP] === String(STEPS - 1)) terminal.get(claim.job.headers[HEADER_RUN_ID])?.();
      return results;
    };
    const forward = async (step: Step) => (step.stepNumber < STEPS - 1 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload));
    const { runtime } = h.start(forward, new NoopTerminalHook());
    const perRun: number[] = [];
    for (let i = 0; i < 5; i++) {
      const runId = `run-${i}`;
      const done = new Promise<void>((resolve) => terminal.set(runId, resolve));
      const before = counter.walPuts;
      await runtime.submit({ runId, input: new Uint8Array(100) });
      await done;
      perRun.push(counter.walPuts - before);
    }
    expect(perRun).toEqual([4, 4, 4, 4, 4]);
    for (let i = 0; i < 5; i++) expect(await runtime.readStatus(`run-${i}`)).toBeNull(); // terminated
  });

  it('a delivery creates its cancel signal only when the runner reads step.signal', async () => {
    const h = await makeHarness(() => new MemoryObjectStore());
    globalThis.AbortController = CountingAbortController;
    let reads = false;
    const done = new Map<string, () => void>();
    const runner = async (step: Step) => {
      if (reads) expect(step.signal.aborted).toBe(false);
      if (step.stepNumber < STEPS - 1) return StepOutcome.continueNow(step.payload);
      queueMicrotask(() => done.get(step.runId)?.());
      return StepOutcome.succeed(step.payload);
    };
    const { runtime } = h.start(runner, new NoopTerminalHook());
    const runOne = async (runId: string): Promise<number> => {
      const before = deliverySignals;
      const finished = new Promise<void>((resolve) => done.set(runId, resolve));
      await runtime.submit({ runId });
      await finished;
      return deliverySignals - before;
    };
    expect(await runOne('quiet')).toBe(0);
    reads = true;
    expect(await runOne('reader')).toBe(STEPS);
  });
});
