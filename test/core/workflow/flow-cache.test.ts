/**
 * The writer's in-memory copy of its concurrency keys (flow/flow-cache.ts): its bounds, and that
 * what it remembers always equals the store. The agreement is audited at rest after workloads
 * that take every path that changes a key: admissions, waiting runs, endings that hand slots on,
 * cancels of waiting runs, duplicates and resubmissions, a raised limit, a revived dead step,
 * transient failures. That a value is noted only by a commit that applied it is the queue's
 * `onCommitted` (test/core/queue/commit-effects.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { Queue } from '../../../src/core/queue/index.js';
import { StepError, StepOutcome, type Step } from '../../../src/core/workflow/index.js';
import { FlowCache, flowCache } from '../../../src/core/workflow/flow/flow-cache.js';
import { decodeQueuedRun, decodeSlotState, type QueuedRun } from '../../../src/core/workflow/flow/flow-records.js';
import { flowQueuedKey, flowSlotsKey } from '../../../src/core/workflow/keys.js';
import { randomInt, seededRandom } from '../../support/random.js';
import { b, eventually, makeHarness, RecordingHook } from './harness.js';

const entry = (runId: string, bytes: number): QueuedRun => ({
  runId,
  jobId: `job-${runId}`,
  headers: {},
  priority: undefined,
  maxAttempts: 3,
  runAt: undefined,
  input: new Uint8Array(bytes),
  chunks: 0,
});

/** Every remembered value checked against the store; returns how many were checked. */
async function audit(queue: Queue): Promise<number> {
  const { slots, waiting } = flowCache(queue).remembered();
  for (const { queueName, key, state } of slots) {
    const bytes = await queue.kvGet(flowSlotsKey(queueName, key));
    expect(bytes === undefined ? null : decodeSlotState(bytes), `slot state of ${key}`).toEqual(state);
  }
  for (const { queueName, key, seq, run } of waiting) {
    const bytes = await queue.kvGet(flowQueuedKey(queueName, key, seq));
    expect(bytes, `waiting entry ${key}/${seq}`).toBeDefined();
    expect(decodeQueuedRun(bytes!), `waiting entry ${key}/${seq}`).toEqual(run);
  }
  return slots.length + waiting.length;
}

describe('flow cache', () => {
  it('is bounded: the oldest slot states go first, waiting entries past the count or the input budget are not kept', () => {
    const cache = new FlowCache();
    for (let i = 0; i < 10_001; i++) cache.noteSlotState('q', `k${i}`, { active: 1, limit: 1, waiting: 0, headSeq: 0, nextSeq: 0 });
    expect(cache.slotState('q', 'k0')).toBeUndefined();
    expect(cache.slotState('q', 'k1')).toMatchObject({ active: 1 });
    expect(cache.remembered().slots).toHaveLength(10_000);
    // Noting again makes it the newest.
    cache.noteSlotState('q', 'k1', null);
    cache.noteSlotState('q', 'new', null);
    expect(cache.slotState('q', 'k1')).toBeNull();
    expect(cache.slotState('q', 'k2')).toBeUndefined();

    const budget = new FlowCache();
    budget.noteWaiting('q', 'k', 0, entry('big', 6 * 1024 * 1024));
    budget.noteWaiting('q', 'k', 1, entry('too-big', 3 * 1024 * 1024));
    budget.noteWaiting('q', 'k', 2, { ...entry('chunked', 0), input: undefined, chunks: 2 });
    expect(budget.remembered().waiting.map((w) => w.run.runId)).toEqual(['big']);
    expect(budget.takeWaiting('q', 'k', 0)?.runId).toBe('big');
    expect(budget.takeWaiting('q', 'k', 0)).toBeUndefined();
    // The budget freed by the take is there again.
    budget.noteWaiting('q', 'k', 1, entry('fits-now', 3 * 1024 * 1024));
    expect(budget.remembered().waiting.map((w) => w.run.runId)).toEqual(['fits-now']);
  });

  it("a key noted without state forgets its waiting entries (its next list starts again at place 0); keys and queues are apart", () => {
    const cache = new FlowCache();
    cache.noteWaiting('q', 'k', 0, entry('a', 10));
    cache.noteWaiting('q', 'k', 1, entry('b', 10));
    cache.noteWaiting('q', 'other', 0, entry('c', 10));
    cache.noteWaiting('q2', 'k', 0, entry('d', 10));
    cache.noteSlotState('q', 'k', null);
    expect(cache.takeWaiting('q', 'k', 0)).toBeUndefined();
    expect(cache.takeWaiting('q', 'k', 1)).toBeUndefined();
    expect(cache.takeWaiting('q', 'other', 0)?.runId).toBe('c');
    expect(cache.takeWaiting('q2', 'k', 0)?.runId).toBe('d');
    cache.noteWaiting('q', 'k', 0, entry('e', 10));
    cache.forgetWaiting('q', 'k', 0);
    expect(cache.remembered().waiting).toEqual([]);
  });

  it('remembers exactly what the store holds, at rest after every kind of change to a key (3 seeds)', async () => {
    for (const seed of [1, 2, 3]) {
      const h = await makeHarness(() => new MemoryObjectStore());
      const hook = new RecordingHook();
      const rand = seededRandom(seed);
      let dead = 0;
      const { runtime } = h.start(
        async (step: Step) => {
          for (let i = randomInt(rand, 5); i > 0; i--) await new Promise((r) => setImmediate(r));
          if (rand() < 0.1) throw StepError.transient('flaky');
          if (step.headers.dies === 'yes' && dead === 0) {
            dead++;
            throw StepError.permanent('broken');
          }
          return step.stepNumber === 1 ? StepOutcome.succeed(step.payload) : StepOutcome.continueNow(step.payload);
        },
        hook,
        { stepMaxAttempts: 10 },
      );
      // Mock time moves on, for the transient failures' backoff.
      const ticker = setInterval(() => void h.clock.advance(200), 2);
      const keys = ['k1', 'k2', 'k3'];
      const submitted = new Set<string>();
      let checked = 0;
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 12; i++) {
          const key = keys[randomInt(rand, keys.length)]!;
          const limit = round === 2 && key === 'k1' ? 3 : 1 + (key === 'k3' ? 1 : 0);
          const runId = `s${seed}-r${round}-${i}`;
          await runtime.submit({ runId, input: b(runId), headers: { dies: round === 1 && i === 0 ? 'yes' : 'no' }, concurrency: { key, limit } });
          submitted.add(runId);
          // Submitted again: a duplicate while the run is live (nothing changes), a new run of the id once it ended.
          if (rand() < 0.2) await runtime.submit({ runId, input: b(runId), concurrency: { key, limit } });
          if (rand() < 0.15) await runtime.cancel(runId);
        }
        if (round === 1) {
          await eventually(async () => (await runtime.listDeadSteps()).length === 1, 10_000, 'a dead step');
          const [step] = await runtime.listDeadSteps();
          expect(await runtime.retryDeadStep(step!.jobId)).toBe('revived');
        }
        await eventually(async () => new Set(hook.outcomes.map((o) => o.runId)).size >= submitted.size, 20_000, `round ${round} of seed ${seed} ended (${new Set(hook.outcomes.map((o) => o.runId)).size} of ${submitted.size})`);
        checked += await audit(h.queue);
      }
      clearInterval(ticker);
      await h.stopRuntimes();
      // Every run ended, last as succeeded or cancelled (the revived one failed first); every
      // key's records are gone, and the cache says so.
      const last = new Map(hook.outcomes.map((o) => [o.runId, o.status]));
      expect(new Set(last.keys())).toEqual(submitted);
      expect([...last.values()].every((status) => status === 'succeeded' || status === 'cancelled')).toBe(true);
      expect(hook.outcomes.filter((o) => o.status === 'failed')).toHaveLength(1);
      expect(flowCache(h.queue).remembered().waiting).toEqual([]);
      expect(flowCache(h.queue).remembered().slots.every((s) => s.state === null)).toBe(true);
      expect(checked).toBeGreaterThan(0);
    }
  }, 60_000);
});
