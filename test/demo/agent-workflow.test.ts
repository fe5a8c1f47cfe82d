/**
 * The demo's agent as a workflow function, in Node on the real runtime over the memory store (no
 * browser): research, draft, the approval signal (sent early, rejected, escalated once after its
 * timeout, then given up), the steps' retries (a rate-limited call), an outage that runs a step
 * out of attempts and waits for Retry (which ends it) or Give up, and the demo's logs the page
 * reads: every attempt with its error, model calls made once and served from history after.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryObjectStore, Queue, WorkflowRuntime, type WorkflowRun } from '../../src/index.js';
import { agent, provideAgentEnvironment } from '../../demo/src/agent/agent-workflow.js';
import { SIGNALS, type AgentResult, type Decision, type RetryDecision, type TaskSpec } from '../../demo/src/shared/agent-state.js';
import { summarize, type AttemptRecord, type ModelCallRecord } from '../../demo/src/shared/demo-db.js';

const task = (overrides: Partial<TaskSpec> = {}): TaskSpec => ({
  topic: 'durable agents',
  researchCalls: 2,
  approvalTimeoutMs: 60_000,
  tokenDelayMs: 0,
  flaky: false,
  outage: false,
  ...overrides,
});

/** The demo's logs, in memory. */
function environment() {
  const calls: ModelCallRecord[] = [];
  const attempts: AttemptRecord[] = [];
  provideAgentEnvironment({
    host: 'node',
    loadModelSettings: async () => ({ kind: 'simulated' }),
    recordModelCall: async (record) => void calls.push({ ...record, store: 'indexeddb' }),
    startAttempt: async (record) => {
      const index = attempts.push({ ...record, store: 'indexeddb' }) - 1;
      return async (update) => void (attempts[index] = { ...attempts[index]!, ...update });
    },
    post: () => undefined,
  });
  return { calls, attempts };
}

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
});

async function world() {
  const logs = environment();
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'demo', { logger: quiet, schedulerIntervalMs: 20 });
  const runtime = new WorkflowRuntime(queue, store, { workflows: [agent] }, undefined, { logger: quiet });
  const worker = runtime.spawn();
  close = async () => {
    await worker.shutdown();
    await queue.close();
  };
  return { ...logs, runtime };
}

async function until<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const waitsFor = (runtime: WorkflowRuntime, run: WorkflowRun<AgentResult>, name: string) =>
  until(async () => {
    const wait = (await runtime.getRun(run.runId))?.waitingFor;
    return wait?.type === 'signal' && wait.correlationKey === `${run.runId}#${name}`;
  }, `the run to wait for ${name}`);

describe('the demo agent as a workflow function', () => {
  it('researches, drafts, reads a decision sent before it waited, publishes; model calls are made once', async () => {
    const { runtime, calls, attempts } = await world();
    // A decision sent before the run exists is not kept (it is for an active run); one sent as
    // soon as the run exists, before it waits, is kept for the wait.
    expect(await runtime.signal('r1', SIGNALS.approve, { decision: 'approve', reason: '' } satisfies Decision)).toBe('run-not-active');
    const run = await runtime.start(agent, task(), { runId: 'r1' });
    expect(await runtime.signal('r1', SIGNALS.approve, { decision: 'approve', reason: '' } satisfies Decision)).toBe('buffered');
    const result = await run.result();
    expect(result.article).toMatch(/^# durable agents/);
    expect(result.article).toContain('Sources:\n1. ');
    expect(result.notes).toHaveLength(2);
    expect(result.draft).not.toBe('');

    expect(attempts.map((a) => [a.step, a.outcome])).toEqual([
      ['research 1', 'completed'],
      ['research 2', 'completed'],
      ['draft', 'completed'],
      ['publish', 'completed'],
    ]);
    // The wait suspends the run; the next execution replays the three calls from the history.
    expect(summarize(calls)).toEqual({ calls: 3, memoHits: 3, repeated: 0 });
  });

  it('a rejection fails the run with its reason', async () => {
    const { runtime } = await world();
    const run = await runtime.start(agent, task({ researchCalls: 1 }), { runId: 'r2' });
    await waitsFor(runtime, run, SIGNALS.approve);
    expect(await runtime.signal(run.runId, SIGNALS.approve, { decision: 'reject', reason: '  too vague ' } satisfies Decision)).toBe('delivered');
    await expect(run.result()).rejects.toMatchObject({ code: 'RUN_FAILED', status: 'failed', error: 'Error: rejected: too vague' });
  });

  it('an unanswered approval escalates once (a step), then fails the run; an answer after the escalation is read', async () => {
    const { runtime, attempts } = await world();
    const silent = await runtime.start(agent, task({ researchCalls: 1, approvalTimeoutMs: 150 }), { runId: 'silent' });
    const late = await runtime.start(agent, task({ researchCalls: 1, approvalTimeoutMs: 300 }), { runId: 'late' });
    await expect(silent.result()).rejects.toMatchObject({ error: 'Error: no decision after escalation' });
    expect(attempts.filter((a) => a.runId === 'silent' && a.step === 'escalate').map((a) => a.output)).toEqual([expect.stringMatching(/^No decision within 0 s: escalated/)]);

    await until(() => attempts.some((a) => a.runId === 'late' && a.step === 'escalate' && a.outcome === 'completed'), 'the escalation');
    await waitsFor(runtime, late, SIGNALS.approve);
    await runtime.signal(late.runId, SIGNALS.approve, { decision: 'approve', reason: '' } satisfies Decision);
    expect((await late.result()).notes).toHaveLength(1);
  });

  it('a rate-limited call fails its first attempt and is retried after the backoff; the log keeps the error', async () => {
    const { runtime, attempts, calls } = await world();
    const run = await runtime.start(agent, task({ flaky: true }), { runId: 'flaky' });
    await runtime.signal('flaky', SIGNALS.approve, { decision: 'approve', reason: '' } satisfies Decision);
    await run.result();
    const second = attempts.filter((a) => a.step === 'research 2');
    expect(second.map((a) => [a.attempt, a.outcome, a.error, a.retryInMs])).toEqual([
      [1, 'failed', 'model rate limited (simulated 429)', 500],
      [2, 'completed', null, null],
    ]);
    expect(second[1]!.startedAt - second[0]!.endedAt!).toBeGreaterThanOrEqual(450);
    expect(summarize(calls).repeated).toBe(0);
  });

  it('an outage runs the step out of attempts; the run waits for Retry (which ends the outage) or Give up', { timeout: 40_000 }, async () => {
    const { runtime, attempts } = await world();
    const retried = await runtime.start(agent, task({ researchCalls: 1, outage: true }), { runId: 'retried' });
    const abandoned = await runtime.start(agent, task({ researchCalls: 1, outage: true }), { runId: 'abandoned' });
    await Promise.all([waitsFor(runtime, retried, SIGNALS.retry), waitsFor(runtime, abandoned, SIGNALS.retry)]);
    const failed = attempts.filter((a) => a.runId === 'retried');
    expect(failed.map((a) => [a.attempt, a.outcome, a.error])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'failed', 'model unavailable (simulated outage)']));
    expect(failed.map((a) => a.retryInMs)).toEqual([500, 1000, 2000, 4000, null]);

    expect(await runtime.signal(retried.runId, SIGNALS.retry, 'retry' satisfies RetryDecision)).toBe('delivered');
    await waitsFor(runtime, retried, SIGNALS.approve);
    expect(attempts.filter((a) => a.runId === 'retried' && a.step === 'research 1').at(-1)).toMatchObject({ attempt: 1, outcome: 'completed' });
    await runtime.signal(retried.runId, SIGNALS.approve, { decision: 'approve', reason: '' } satisfies Decision);
    expect((await retried.result()).notes).toHaveLength(1);

    await runtime.signal(abandoned.runId, SIGNALS.retry, 'give-up' satisfies RetryDecision);
    await expect(abandoned.result()).rejects.toMatchObject({
      error: 'STEP_FAILED: step "research 1" failed after 5 attempts: Error: model unavailable (simulated outage)',
    });
  });

  it('counts a call made again for a step whose call had completed as repeated', () => {
    const at = 0;
    const records: ModelCallRecord[] = [
      { store: 'indexeddb', runId: 'a', step: 'research 1', memoHit: false, at },
      { store: 'indexeddb', runId: 'a', step: 'research 1', memoHit: false, at },
      { store: 'indexeddb', runId: 'a', step: 'research 2', memoHit: true, at },
      { store: 'indexeddb', runId: 'b', step: 'research 1', memoHit: false, at },
    ];
    expect(summarize(records)).toEqual({ calls: 3, memoHits: 1, repeated: 1 });
    expect(summarize(records, 'b')).toEqual({ calls: 1, memoHits: 0, repeated: 0 });
  });
});
