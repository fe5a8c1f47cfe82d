/**
 * The browser host's lifecycle with real tabs on a persistent profile (IndexedDB and OPFS on
 * disk): a reload in the middle of a step, a reloaded page re-attaching to a pending job, timers
 * that came due while no tab was open, two tabs with one executor, and the leader tab closed or
 * crashed with the other taking over.
 *
 * Runs in the `browser-persistent` project, whose browser commands (test/setup/browser-tabs.ts)
 * open, reload, close and crash tabs of pages/app.html and call into them. The `browser`
 * project collects this file too and skips it. Each tab's worker reports what it executes on a
 * BroadcastChannel this test listens to (harness.ts `TestLog`).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { commands } from 'vitest/browser';
import type { HostInfo, RunView } from '../../../src/browser/index.js';
import { durabilityBarrier, TestLog, uniqueName, waitFor, type Plan } from './harness.js';

declare module 'vitest/browser' {
  interface BrowserCommands {
    openTab(query: string): Promise<string>;
    reloadTab(id: string): Promise<void>;
    closeTab(id: string, mode?: 'close' | 'crash'): Promise<void>;
    tabCall(id: string, method: string, args?: unknown[]): Promise<unknown>;
    closeTabs(): Promise<void>;
  }
}

declare module 'vitest' {
  interface ProvidedContext {
    persistentProfile?: boolean;
  }
}

type Store = 'indexeddb' | 'opfs';
type TabInfo = HostInfo & { persistence: boolean | null };

const logs: TestLog[] = [];

afterEach(async () => {
  await commands.closeTabs();
  for (const l of logs.splice(0)) l.close();
});

/** A store, its log, and a way to open tabs on it. */
function app(store: Store, prefix: string, extra = '') {
  const name = uniqueName(prefix);
  const log = new TestLog(uniqueName('log'));
  logs.push(log);
  let tabs = 0;
  return {
    log,
    open: (host = `t${++tabs}`) => commands.openTab(`store=${store}&name=${name}&host=${host}&log=${log.name}${extra}`),
  };
}

const call = <T>(tab: string, method: string, ...args: unknown[]): Promise<T> => commands.tabCall(tab, method, args) as Promise<T>;
const waitRole = (tab: string, role: string): Promise<TabInfo> => call<TabInfo>(tab, 'waitRole', role);
const submit = (tab: string, plan: Plan, runId?: string): Promise<{ runId: string }> => (runId === undefined ? call(tab, 'submit', plan) : call(tab, 'submit', plan, runId));

describe.skipIf(!inject('persistentProfile'))('browser host tabs (persistent profile)', () => {
  it.each(['indexeddb', 'opfs'] as const)('a run survives a page reload in the middle of a step (%s)', async (store) => {
    const { log, open } = app(store, 'reload');
    const tab = await open();
    const before = await waitRole(tab, 'leader');
    // The page asked for persistent storage; the answer is there for the app (headless Chromium may say no).
    expect(typeof (await call<TabInfo>(tab, 'info')).persistence).toBe('boolean');
    const { runId } = await submit(tab, { steps: 3, holdAt: 1 });
    await log.waitFor('holding', (e) => e.runId === runId && e.step === 1);
    await durabilityBarrier((key) => call<string>(tab, 'signal', key, 'barrier'));

    await commands.reloadTab(tab);
    const after = await waitRole(tab, 'leader');
    expect(after.hostId).not.toBe(before.hostId);
    await log.waitFor('hook', (e) => e.runId === runId);

    // Only the in-flight step ran again, on the reloaded page; its memoized work did not.
    // The reload is an interruption, not a failed attempt (#13): attempt stays 1, interruptions 1.
    expect(log.of('run', (e) => e.runId === runId).map((e) => `${e.host}:${e.step}:${e.attempt}:${e.interruptions}`)).toEqual([
      `${before.hostId}:0:1:0`,
      `${before.hostId}:1:1:0`,
      `${after.hostId}:1:1:1`,
      `${after.hostId}:2:1:0`,
    ]);
    expect(log.of('computed', (e) => e.runId === runId).map((e) => `${e.host}:${e.step}`)).toEqual([`${before.hostId}:0`, `${before.hostId}:1`, `${after.hostId}:2`]);
    expect(await call<RunView>(tab, 'status', runId)).toMatchObject({ state: 'succeeded', currentStep: 2, result: `done:${runId}` });
    expect(await call(tab, 'kvGet', `done/${runId}`)).toBe('succeeded');
  });

  it.each(['indexeddb', 'opfs'] as const)('a reloaded page re-attaches to a pending job by id and gets its result (%s)', async (store) => {
    const { log, open } = app(store, 'job-reload');
    const tab = await open();
    await waitRole(tab, 'leader');
    const id = await call<string>(tab, 'submitGreet', 'reloaded', 1500, log.name);
    await log.waitFor('job', (e) => e.jobId === id);

    await commands.reloadTab(tab);
    await waitRole(tab, 'leader');
    // The page forgot everything but the id; the job is pending again (its run was cut off).
    expect(await call(tab, 'greetResult', id, false)).toBeNull();
    expect(await call(tab, 'greetResult', id, true)).toBe('hello reloaded');
    expect(await call(tab, 'greetResult', id, false)).toBe('hello reloaded');
    // It ran once before the reload and once, to completion, in the reloaded page's worker.
    expect(log.of('job', (e) => e.jobId === id)).toHaveLength(2);
  });

  it('a timer that came due while no tab was open fires promptly after reopening', async () => {
    // A 1 h scheduler tick: without the promotion at open the step would wait for it, far past
    // the test timeout. So the step running at all is the proof; no latency bound needed.
    const { log, open } = app('indexeddb', 'timer', '&scheduler=3600000');
    const first = await open();
    await waitRole(first, 'leader');
    const { runId } = await submit(first, { steps: 2, afterAt: { step: 0, ms: 800 } });
    await waitFor(async () => (await call<RunView | null>(first, 'status', runId))?.state === 'scheduled', 'the timer to be scheduled');
    // Reads see commits before they are stored; closing the tab now could lose the timer's commit
    // (step 0 would then run again after the reopen and wait for the 1 h tick). Store it first.
    await durabilityBarrier((key) => call<string>(first, 'signal', key, 'barrier'));
    // The timer was stored before this point, so it is due by dueBy (not before: 800 ms must pass).
    const dueBy = Date.now() + 800;
    await commands.closeTab(first);
    // Time passing with no tab open is the scenario itself: wait until the timer is due, no margin.
    await waitFor(() => Date.now() >= dueBy, 'the timer to come due with no tab open', 5_000);

    const second = await open();
    const leader = await waitRole(second, 'leader');
    const ran = await log.waitFor('run', (e) => e.runId === runId && e.step === 1);
    const led = log.of('role', (e) => e.host === leader.hostId && e.role === 'leader')[0];
    expect(ran.host).toBe(leader.hostId);
    // Causality instead of a latency bound: the step ran after this tab took the lead (and so
    // after the reopen), not on some earlier host.
    expect(ran.at).toBeGreaterThanOrEqual(led.at);
    await log.waitFor('hook', (e) => e.runId === runId && e.status === 'succeeded');
  });

  it('two tabs on one store: exactly one executes steps, both submit and both see every run', async () => {
    const { log, open } = app('indexeddb', 'two-tabs');
    const a = await open();
    const leader = await waitRole(a, 'leader');
    const b = await open();
    const follower = await waitRole(b, 'follower');
    expect(follower.leader).toBe(leader.hostId);

    const plan: Plan = { steps: 3, delayMs: 10 };
    const runs = await Promise.all([submit(a, plan), submit(b, plan), submit(a, plan), submit(b, plan), submit(b, plan)]);
    for (const { runId } of runs) await log.waitFor('hook', (e) => e.runId === runId && e.status === 'succeeded');

    const executed = log.of('run');
    expect(executed).toHaveLength(15);
    expect(new Set(executed.map((e) => e.host))).toEqual(new Set([leader.hostId]));
    for (const tab of [a, b]) {
      const seen = await call<string[]>(tab, 'events');
      for (const { runId } of runs) expect(seen).toContain(`terminal:${runId}`);
      expect(seen.filter((e) => e.startsWith('step-started:'))).toHaveLength(15);
    }
    expect(await call<RunView>(b, 'status', runs[0].runId)).toMatchObject({ state: 'succeeded' });
  });

  it.each([
    ['closed', 'close'],
    ['crashed', 'crash'],
  ] as const)('the leader tab %s: the other takes over and no run is lost', async (_, mode) => {
    const { log, open } = app('indexeddb', `takeover-${mode}`);
    const a = await open();
    const leader = await waitRole(a, 'leader');
    const b = await open();
    await waitRole(b, 'follower');
    const plan: Plan = { steps: 5, delayMs: 150 };
    const runs = await Promise.all([submit(a, plan), submit(a, plan), submit(b, plan), submit(b, plan), submit(b, plan)]);
    await log.waitFor('run', (e) => e.step === 1);

    await commands.closeTab(a, mode);
    const successor = await waitRole(b, 'leader');
    const late = await submit(b, plan);
    for (const { runId } of [...runs, late]) await log.waitFor('hook', (e) => e.runId === runId && e.status === 'succeeded');

    // Every step of every run committed, the last ones by the successor.
    const committed = new Map(await call<[string, string][]>(b, 'kvKeys', 'exec/'));
    for (const { runId } of [...runs, late]) {
      for (let step = 0; step < 5; step++) expect(committed.has(`exec/${runId}/${step}`)).toBe(true);
      expect(committed.get(`exec/${runId}/4`)).toBe(successor.hostId);
      expect(await call(b, 'kvGet', `done/${runId}`)).toBe('succeeded');
    }
    // Before the takeover only the leader executed; after it only the successor.
    const hosts = new Set(log.of('run').map((e) => e.host));
    expect(hosts).toEqual(new Set([leader.hostId, successor.hostId]));
  });
});
