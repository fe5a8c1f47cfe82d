/**
 * The demo's agent as a StepRunner, in Node on the real runtime over the memory store (no
 * browser): the stages, the approval signal and its escalation, the KV records the page reads,
 * and that a redelivered step reads its completed model call back from the memo.
 */
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/core/objects/index.js';
import { Queue } from '../../src/core/queue/index.js';
import { detachedStep, MemoStore, StepOutcome, WorkflowRuntime, type RunOutcome, type TerminalEffects } from '../../src/core/workflow/index.js';
import { AgentRunner, type AgentEnvironment } from '../../demo/src/agent/agent-runner.js';
import { approvalKey, decodeJson, encodeJson, keys, type AgentState, type Decision, type StepRecord, type TaskSpec } from '../../demo/src/shared/agent-state.js';
import { summarize, type ModelCallRecord } from '../../demo/src/shared/demo-db.js';

const task = (overrides: Partial<TaskSpec> = {}): TaskSpec => ({
  topic: 'durable agents',
  researchCalls: 2,
  approvalTimeoutMs: 60_000,
  tokenDelayMs: 0,
  flaky: false,
  outage: false,
  ...overrides,
});
const start = (spec: TaskSpec): AgentState => ({ task: spec, phase: 'research', index: 0, notes: [], draft: null, escalated: false });

function environment(): AgentEnvironment & { calls: ModelCallRecord[] } {
  const calls: ModelCallRecord[] = [];
  return {
    calls,
    afterCallMs: 0,
    loadModelSettings: async () => ({ kind: 'simulated' }),
    recordModelCall: async (record) => void calls.push({ ...record, store: 'indexeddb' }),
    post: () => undefined,
  };
}

const quiet = { warn: () => undefined };

async function until<T>(probe: () => Promise<T | undefined | null>, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await probe();
    if (value !== undefined && value !== null) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('the demo agent on the runtime', () => {
  it('researches, drafts, waits for approval, publishes; every step leaves its record', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'demo', { logger: quiet, schedulerIntervalMs: 20 });
    const env = environment();
    const outcomes: RunOutcome[] = [];
    const hook = {
      async onTermination(outcome: RunOutcome, effects: TerminalEffects) {
        outcomes.push(outcome);
        effects.put(keys.outcome(outcome.runId), encodeJson({ status: outcome.status }));
      },
    };
    const runtime = new WorkflowRuntime(queue, store, new AgentRunner(env), hook, { logger: quiet });
    const worker = runtime.spawn();
    try {
      // A decision sent before the run reaches the approval step is buffered, not lost.
      expect(await runtime.signal(approvalKey('r1'), encodeJson({ decision: 'approve', reason: '' } satisfies Decision))).toBe('buffered');
      await runtime.submit({ runId: 'r1', input: encodeJson(start(task())) });
      await until(() => queue.kvGet(new TextEncoder().encode(keys.outcome('r1'))), 'the outcome record');
      expect(outcomes).toMatchObject([{ runId: 'r1', status: 'succeeded', finalStep: 4 }]);
      const article = decodeJson<{ article: string }>(outcomes[0]!.result!).article;
      expect(article).toMatch(/^# durable agents/);
      expect(article).toContain('Sources:\n1. ');

      const records: StepRecord[] = [];
      for (let n = 0; n <= 4; n++) records.push(decodeJson<StepRecord>((await queue.kvGet(new TextEncoder().encode(keys.step('r1', n))))!));
      expect(records.map((r) => r.label)).toEqual(['Research 1/2', 'Research 2/2', 'Draft', 'Approval', 'Publish']);
      expect(records.map((r) => r.usedModel)).toEqual([true, true, true, false, false]);
      expect(records.every((r) => r.attempt === 1 && !r.memoHit)).toBe(true);
      expect(records[3]!.output).toBe('Approved.');
      expect(summarize(env.calls)).toEqual({ calls: 3, memoHits: 0, repeated: 0 });
    } finally {
      await worker.shutdown();
      await queue.close();
    }
  });
});

describe('the demo agent, one step at a time', () => {
  const runner = (env = environment()) => new AgentRunner(env);

  it('a redelivered research step reads its completed call from the memo', async () => {
    const env = environment();
    const memoStore = new MemoStore(new MemoryObjectStore(), 'memo');
    const payload = encodeJson(start(task()));
    const first = await runner(env).runStep(detachedStep({ runId: 'r', stepNumber: 0, payload, memoStore }));
    const again = await runner(env).runStep(detachedStep({ runId: 'r', stepNumber: 0, payload, memoStore, attempt: 2 }));
    expect(again).toEqual(first);
    expect(env.calls.map((c) => c.memoHit)).toEqual([false, true]);
    expect(summarize(env.calls)).toEqual({ calls: 1, memoHits: 1, repeated: 0 });
  });

  it('the approval step: a timeout escalates once, then gives up; a rejection fails with its reason', async () => {
    const waiting: AgentState = { ...start(task()), phase: 'decide', draft: 'draft', notes: ['n'] };
    const timedOut = detachedStep({ runId: 'r', stepNumber: 3, payload: encodeJson(waiting) });
    const escalation = await runner().runStep(timedOut);
    expect(escalation).toMatchObject({ type: 'continue', when: { type: 'onSignal', correlationKey: approvalKey('r'), timeoutMs: 60_000 } });
    expect(decodeJson<AgentState>((escalation as Extract<StepOutcome, { type: 'continue' }>).payload).escalated).toBe(true);
    expect(timedOut.effects.staged().writes.map(([k]) => new TextDecoder().decode(k))).toContain(keys.escalation('r'));

    const escalated = encodeJson({ ...waiting, escalated: true } satisfies AgentState);
    expect(await runner().runStep(detachedStep({ runId: 'r', stepNumber: 4, payload: escalated }))).toEqual(StepOutcome.fail('no decision after escalation'));

    const reject = (reason: string) =>
      runner().runStep(detachedStep({ runId: 'r', stepNumber: 3, payload: encodeJson(waiting), signalPayload: encodeJson({ decision: 'reject', reason } satisfies Decision) }));
    expect(await reject('  too vague ')).toEqual(StepOutcome.fail('rejected: too vague'));
    expect(await reject('')).toEqual(StepOutcome.fail('rejected: no reason given'));
  });

  it('a flaky call fails its first attempt only; an outage fails every attempt', async () => {
    const second = encodeJson({ ...start(task({ flaky: true })), index: 1 } satisfies AgentState);
    await expect(runner().runStep(detachedStep({ payload: second, attempt: 1 }))).rejects.toMatchObject({ kind: 'transient' });
    expect((await runner().runStep(detachedStep({ payload: second, attempt: 2 }))).type).toBe('continue');
    const outage = encodeJson(start(task({ outage: true })));
    for (const attempt of [1, 5]) await expect(runner().runStep(detachedStep({ payload: outage, attempt }))).rejects.toMatchObject({ kind: 'transient' });
  });

  it('counts a call made again for a step whose call had completed as repeated', () => {
    const at = 0;
    const records: ModelCallRecord[] = [
      { store: 'indexeddb', runId: 'a', stepNumber: 0, memoHit: false, at },
      { store: 'indexeddb', runId: 'a', stepNumber: 0, memoHit: false, at },
      { store: 'indexeddb', runId: 'a', stepNumber: 1, memoHit: true, at },
      { store: 'indexeddb', runId: 'b', stepNumber: 0, memoHit: false, at },
    ];
    expect(summarize(records)).toEqual({ calls: 3, memoHits: 1, repeated: 1 });
    expect(summarize(records, 'b')).toEqual({ calls: 1, memoHits: 0, repeated: 0 });
  });
});
