/**
 * The browser host in real Chromium, inside one page: workers serving the runtime, the typed
 * client, events, errors crossing the boundary, one leader among several workers of a store, and
 * a worker terminated mid-step. (Workers stand in for tabs here: Web Locks and BroadcastChannel
 * are per origin, so two workers of one page coordinate exactly as two tabs do. Real tabs,
 * reloads and a persistent profile are in tabs.persistent.browser.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, isTaqubaError } from '../../../src/core/errors.js';
import { InputMismatchError } from '../../../src/core/workflow/index.js';
import type { RunEvent } from '../../../src/browser/index.js';
import { durabilityBarrier, planInput, startHost, TestLog, text, uniqueName, waitFor, type TestHost } from './harness.js';

const started: TestHost[] = [];
const logs: TestLog[] = [];

function host(store: 'indexeddb' | 'opfs', name: string, log: TestLog): TestHost {
  const h = startHost(store, name, log.name);
  started.push(h);
  return h;
}

function newLog(): TestLog {
  const log = new TestLog(uniqueName('log'));
  logs.push(log);
  return log;
}

afterEach(async () => {
  for (const h of started.splice(0)) h.worker.terminate();
  for (const l of logs.splice(0)) l.close();
});

/** The run events of `runId` a host received, as `type:step` strings. */
function trace(h: TestHost, runId: string): string[] {
  return h.events
    .filter((e): e is RunEvent => e.type !== 'role-changed' && e.runId === runId)
    .map((e) => ('stepNumber' in e ? `${e.type}:${e.stepNumber}` : e.type));
}

describe.each(['indexeddb', 'opfs'] as const)('worker host over %s', (store) => {
  it('serves the runtime: submit, events in order, status, KV, memo, listing', async () => {
    const log = newLog();
    const a = host(store, uniqueName('basic'), log);
    await a.role('leader');
    const info = await a.client.info();
    expect(info).toMatchObject({ hostId: a.hostId, role: 'leader', leader: a.hostId, store });

    const stop = new AbortController();
    const iterated: string[] = [];
    const iterating = (async () => {
      for await (const e of a.client.events({ runId: 'iterated', signal: stop.signal })) {
        if (e.type === 'role-changed') continue;
        iterated.push(e.type);
        if (e.type === 'terminal') stop.abort();
      }
    })();
    const { runId, newlySubmitted } = await a.client.submit({ input: planInput({ steps: 3 }), headers: { app: 'x' } });
    expect(newlySubmitted).toBe(true);
    await a.client.submit({ runId: 'iterated', input: planInput({ steps: 1 }) });
    await iterating;
    expect(iterated).toEqual(['step-started', 'step-finished', 'terminal']);
    const terminal = await a.event('terminal', (e) => e.runId === runId);
    expect(terminal).toMatchObject({ status: 'succeeded', finalStep: 2, executor: a.hostId, headers: { app: 'x' } });
    expect(text(terminal.result)).toBe(`done:${runId}`);
    expect(trace(a, runId)).toEqual([
      'step-started:0',
      'step-finished:0',
      'step-started:1',
      'step-finished:1',
      'step-started:2',
      'step-finished:2',
      'terminal',
    ]);

    expect(await a.client.status(runId)).toMatchObject({ runId, state: 'succeeded', currentStep: 2 });
    expect(text(await a.client.kvGet(`exec/${runId}/1`))).toBe(a.hostId);
    await waitFor(async () => text(await a.client.kvGet(`done/${runId}`)) === 'succeeded', 'the app hook');
    const page = await a.client.kvScan(`exec/${runId}/`);
    expect(page.entries.map(([k]) => text(k))).toEqual([0, 1, 2].map((n) => `exec/${runId}/${n}`));
    expect(await a.client.memoGet(runId, 1, 'work')).toBeInstanceOf(Uint8Array);
    expect(await a.client.memoGet(runId, 'run', 'nothing')).toBeNull();
    expect((await a.client.listRuns()).runs).toEqual([]);
  });
});

describe('worker host', () => {
  it('errors cross the boundary with their class, code and details', async () => {
    const log = newLog();
    const name = uniqueName('errors');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    await a.client.submit({ runId: 'held', input: planInput({ steps: 2, holdAt: 0 }) });
    await log.waitFor('holding');
    expect((await a.client.status('held'))?.state).toBe('running');
    expect((await a.client.listRuns()).runs).toMatchObject([{ runId: 'held', currentStep: 0 }]);

    const mismatch = await a.client.submit({ runId: 'held', input: planInput({ steps: 3 }) }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(InputMismatchError);
    expect(isTaqubaError(mismatch, 'INPUT_MISMATCH')).toBe(true);
    expect(mismatch).toMatchObject({ name: 'InputMismatchError', code: 'INPUT_MISMATCH', details: { runId: 'held' } });

    const badId = await a.client.status('not a run id!').catch((e: unknown) => e);
    expect(badId).toBeInstanceOf(InvalidArgumentError);
    expect(badId).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id', why: 'invalid_character' } });
    await expect(a.client.memoGet('held', -1, 'k')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_memo_scope' } });

    // The same through a follower: the error crosses the BroadcastChannel, then Comlink.
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const forwarded = await b.client.submit({ runId: 'held', input: planInput({ steps: 9 }) }).catch((e: unknown) => e);
    expect(forwarded).toBeInstanceOf(InputMismatchError);
    expect(forwarded).toMatchObject({ code: 'INPUT_MISMATCH', details: { runId: 'held' } });
    expect(await b.client.submit({ runId: 'held', input: planInput({ steps: 2, holdAt: 0 }) })).toMatchObject({ runId: 'held', newlySubmitted: false });

    expect(await a.client.cancel('held')).toBe(true);
    expect(await a.event('terminal', (e) => e.runId === 'held')).toMatchObject({ status: 'cancelled' });
  });

  it('dead steps are listed from any tab, page by page', async () => {
    const log = newLog();
    const name = uniqueName('dead');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    expect(await a.client.listDeadSteps()).toEqual([]);
    for (const runId of ['poison-1', 'poison-2']) {
      await a.client.submit({ runId, input: planInput({ steps: 3, poisonAt: 1 }) });
      expect(await a.event('terminal', (e) => e.runId === runId)).toMatchObject({ status: 'failed' });
    }
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const dead = await b.client.listDeadSteps();
    expect(dead).toHaveLength(2);
    expect(dead.map((d) => d.runId).sort()).toEqual(['poison-1', 'poison-2']);
    for (const d of dead) {
      expect(d).toMatchObject({ stepNumber: 1, notification: false, attempts: 1, payloadError: null });
      expect(d.lastError).toContain('poisoned input');
      expect(d.failedAt).toBeTypeOf('number');
    }
    const first = await b.client.listDeadSteps({ limit: 1 });
    expect(first).toEqual([dead[0]]);
    expect(await b.client.listDeadSteps({ afterJobId: first[0]!.jobId })).toEqual([dead[1]]);
    await expect(b.client.listDeadSteps({ limit: 0 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_limit' } });
  });

  it('a worker terminated mid-step: a new worker resumes the run without redoing memoized work', async () => {
    const log = newLog();
    const name = uniqueName('terminate');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const { runId } = await a.client.submit({ input: planInput({ steps: 3, holdAt: 1 }) });
    await log.waitFor('holding', (e) => e.runId === runId && e.step === 1);
    await durabilityBarrier((key) => a.client.signal(key, new Uint8Array([1])));
    a.worker.terminate();

    const b = host('indexeddb', name, log);
    const terminal = await b.event('terminal', (e) => e.runId === runId);
    expect(terminal).toMatchObject({ status: 'succeeded', executor: b.hostId });
    // Step 1 ran twice (the second delivery after the open requeued the interrupted claim) ...
    // (an interrupted delivery is not a failed attempt: attempt stays 1, interruptions 1; #13)
    expect(log.of('run', (e) => e.runId === runId).map((e) => `${e.host}:${e.step}:${e.attempt}:${e.interruptions}`)).toEqual([
      `${a.hostId}:0:1:0`,
      `${a.hostId}:1:1:0`,
      `${b.hostId}:1:1:1`,
      `${b.hostId}:2:1:0`,
    ]);
    // ... but its memoized work ran once, and step 0 was not redone at all.
    expect(log.of('computed', (e) => e.runId === runId).map((e) => `${e.host}:${e.step}`)).toEqual([`${a.hostId}:0`, `${a.hostId}:1`, `${b.hostId}:2`]);
    expect(text(await b.client.kvGet(`exec/${runId}/1`))).toBe(b.hostId);
  });

  it('two workers on one store: one leads and executes every step, both submit and see every event', async () => {
    const log = newLog();
    const name = uniqueName('two');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const b = host('indexeddb', name, log);
    await b.role('follower');
    expect((await b.client.info()).leader).toBe(a.hostId);

    const plan = planInput({ steps: 3, delayMs: 5 });
    const runs = await Promise.all([
      ...[1, 2, 3].map(() => a.client.submit({ input: plan })),
      ...[1, 2, 3].map(() => b.client.submit({ input: plan })),
    ]);
    expect(new Set(runs.map((r) => r.runId)).size).toBe(6);
    for (const { runId } of runs) {
      await b.event('terminal', (e) => e.runId === runId);
      await a.event('terminal', (e) => e.runId === runId);
    }
    const executed = log.of('run');
    expect(executed).toHaveLength(18);
    expect(new Set(executed.map((e) => e.host))).toEqual(new Set([a.hostId]));
    expect(b.events.filter((e) => e.type === 'step-started')).toHaveLength(18);
    expect(await b.client.status(runs[0].runId)).toMatchObject({ state: 'succeeded' });
    expect(text(await b.client.kvGet(`exec/${runs[5].runId}/2`))).toBe(a.hostId);
  });

  it('the follower takes over when the leader worker dies; calls made meanwhile are answered', async () => {
    const log = newLog();
    const name = uniqueName('takeover');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const held = await b.client.submit({ input: planInput({ steps: 2, holdAt: 1 }) });
    const slow = await Promise.all([1, 2, 3].map(() => b.client.submit({ input: planInput({ steps: 4, delayMs: 30 }) })));
    await log.waitFor('holding', (e) => e.runId === held.runId);
    await durabilityBarrier((key) => a.client.signal(key, new Uint8Array([1])));

    a.worker.terminate();
    // Sent while no tab leads: held until the next leader announces itself.
    const late = b.client.submit({ input: planInput({ steps: 2 }) });
    const status = b.client.status(held.runId);
    await b.role('leader');
    expect(await status).toMatchObject({ runId: held.runId, currentStep: 1 });
    const lateRun = await late;
    for (const { runId } of [held, lateRun, ...slow]) {
      expect(await b.event('terminal', (e) => e.runId === runId)).toMatchObject({ status: 'succeeded', executor: b.hostId });
    }
    expect(log.of('run', (e) => e.runId === held.runId && e.step === 1).map((e) => `${e.host}:${e.attempt}:${e.interruptions}`)).toEqual([`${a.hostId}:1:0`, `${b.hostId}:1:1`]);
  });

  it('after a takeover, runs parked on a signal or a timer by the old leader can be cancelled', async () => {
    const log = newLog();
    const name = uniqueName('cancel-parked');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const onSignal = await a.client.submit({ input: planInput({ steps: 3, signalAt: { step: 0, key: 'never', timeoutMs: 3_600_000 } }) });
    const onTimer = await a.client.submit({ input: planInput({ steps: 3, afterAt: { step: 0, ms: 3_600_000 } }) });
    await a.event('waiting-for-signal', (e) => e.runId === onSignal.runId);
    await waitFor(async () => (await a.client.status(onTimer.runId))?.state === 'scheduled', 'the timer run parked');
    await waitFor(async () => (await a.client.status(onSignal.runId))?.state === 'waiting-for-signal', 'the signal run parked');
    // Both parks are visible now, but their commits may not be stored yet, and a crash before
    // that would redo step 0 (at-least-once, correct, not what this test is about).
    await durabilityBarrier((key) => a.client.signal(key, new Uint8Array([1])));

    a.worker.terminate();
    await b.role('leader');
    expect(await b.client.status(onSignal.runId)).toMatchObject({ state: 'waiting-for-signal', currentStep: 1 });
    expect(await b.client.cancel(onSignal.runId)).toBe(true);
    expect(await b.client.cancel(onTimer.runId)).toBe(true);
    for (const { runId } of [onSignal, onTimer]) {
      expect(await b.event('terminal', (e) => e.runId === runId)).toMatchObject({ status: 'cancelled', executor: b.hostId });
    }
    expect(await b.client.cancel(onSignal.runId)).toBe(false);
    // Nothing of either run ran again under the new leader.
    expect(log.of('run', (e) => e.host === b.hostId)).toEqual([]);
  });

  it('a graceful close hands the store over: in-flight steps finish first, nothing runs twice', async () => {
    const log = newLog();
    const name = uniqueName('handover');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const runs = await Promise.all([1, 2, 3, 4].map(() => a.client.submit({ input: planInput({ steps: 3, delayMs: 100 }) })));
    await log.waitFor('run', (e) => e.step === 1);
    await a.client.close();
    await b.role('leader');
    for (const { runId } of runs) await b.event('terminal', (e) => e.runId === runId && e.status === 'succeeded');
    const deliveries = log.of('run').map((e) => `${e.runId}:${e.step}`);
    expect(deliveries).toHaveLength(12);
    expect(new Set(deliveries).size).toBe(12);
    expect(new Set(log.of('run').map((e) => e.host))).toEqual(new Set([a.hostId, b.hostId]));
  });

  it('reports waiting for a signal, a signal sent from another worker, and a scheduled retry', async () => {
    const log = newLog();
    const name = uniqueName('signals');
    const a = host('indexeddb', name, log);
    await a.role('leader');
    const b = host('indexeddb', name, log);
    await b.role('follower');
    const { runId } = await b.client.submit({ input: planInput({ steps: 3, signalAt: { step: 0, key: 'approve', timeoutMs: 60_000 }, failOnceAt: 2 }) });
    expect(await b.event('waiting-for-signal', (e) => e.runId === runId)).toMatchObject({ stepNumber: 1, correlationKey: 'approve', timeoutMs: 60_000, executor: a.hostId });
    await waitFor(async () => (await b.client.status(runId))?.state === 'waiting-for-signal', 'the waiting state');
    expect(await b.client.signal('approve', new TextEncoder().encode('yes'))).toBe('delivered');
    expect(await b.event('retry-scheduled', (e) => e.runId === runId)).toMatchObject({ stepNumber: 2, nextAttempt: 2, delayMs: 50, error: 'flaky dependency' });
    expect(await b.event('terminal', (e) => e.runId === runId)).toMatchObject({ status: 'succeeded' });
    expect(log.of('run', (e) => e.runId === runId && e.step === 1)[0].signal).toBe('yes');
    expect(await b.client.signal('nobody-waits', new Uint8Array([1]))).toBe('buffered');
    expect(await b.client.clearSignal('nobody-waits')).toBe(true);
    expect(trace(b, runId)).toContain('step-finished:2');
  });

  it('moves large byte payloads across intact', async () => {
    const log = newLog();
    const a = host('indexeddb', uniqueName('bytes'), log);
    await a.role('leader');
    const big = new Uint8Array(200_000).map((_, i) => i % 251);
    const runId = 'bytes-run';
    await a.client.submit({ runId, input: planInput({ steps: 1 }), kvWrites: new Map([['blob', big]]) });
    const back = await a.client.kvGet('blob');
    expect(back?.byteLength).toBe(200_000);
    expect(back?.[199_999]).toBe(199_999 % 251);
    // The cached terminal result survives being handed out (and transferred) twice.
    await a.event('terminal', (e) => e.runId === runId);
    expect(text((await a.client.status(runId))?.result)).toBe(`done:${runId}`);
    expect(text((await a.client.status(runId))?.result)).toBe(`done:${runId}`);
  });
});
