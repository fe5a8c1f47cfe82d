/**
 * A workflow function across a real page reload (persistent profile, IndexedDB on disk): the tab
 * (pages/app.html with `worker=fn`) starts the `review` function, its worker is held in the
 * middle of the `draft` step, the page reloads, and the reloaded page's worker replays the
 * function: `research`, finished before the reload, does not run again (counted on the steps'
 * log channel); the reloaded page signals the run and reads its typed result.
 *
 * Runs in the `browser-persistent` project (its tab commands); the `browser` project skips it.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { commands } from 'vitest/browser';
import type { HostInfo } from '../../../src/browser/index.js';
import { durabilityBarrier, uniqueName, waitFor } from './harness.js';
import type { FnLogEntry } from './pages/fn-workflows.js';

declare module 'vitest/browser' {
  interface BrowserCommands {
    openTab(query: string): Promise<string>;
    reloadTab(id: string): Promise<void>;
    tabCall(id: string, method: string, args?: unknown[]): Promise<unknown>;
    closeTabs(): Promise<void>;
  }
}

declare module 'vitest' {
  interface ProvidedContext {
    persistentProfile?: boolean;
  }
}

const channels: BroadcastChannel[] = [];

afterEach(async () => {
  await commands.closeTabs();
  for (const c of channels.splice(0)) c.close();
});

const call = <T>(tab: string, method: string, ...args: unknown[]): Promise<T> => commands.tabCall(tab, method, args) as Promise<T>;
const waitRole = (tab: string, role: string): Promise<HostInfo> => call<HostInfo>(tab, 'waitRole', role);

describe.skipIf(!inject('persistentProfile'))('workflow functions across a page reload (persistent profile)', () => {
  it('a reload in the middle of a step: finished steps do not run again; the reloaded page signals the run and reads its typed result', async () => {
    const name = uniqueName('fn-reload');
    const logName = uniqueName('fn-log');
    const entries: FnLogEntry[] = [];
    const log = new BroadcastChannel(logName);
    log.onmessage = (ev) => entries.push(ev.data as FnLogEntry);
    channels.push(log);

    const tab = await commands.openTab(`store=indexeddb&name=${name}&host=t1&log=${logName}&worker=fn&hold=draft`);
    const before = await waitRole(tab, 'leader');
    expect(await call(tab, 'startReview', 'tides', logName, 'review-r')).toEqual({ runId: 'review-r', newlySubmitted: true });
    await waitFor(() => entries.some((e) => e.type === 'fn-holding'), 'the draft step to hold');
    await durabilityBarrier((key) => call<string>(tab, 'signal', key, 'barrier'));

    await commands.reloadTab(tab);
    const after = await waitRole(tab, 'leader');
    expect(after.hostId).not.toBe(before.hostId);
    await waitFor(async () => (await call<string | null>(tab, 'reviewState', 'review-r')) === 'waiting-for-signal', 'the run to wait for approve');
    expect(await call(tab, 'approve', 'review-r', { approved: true, by: 'ann' })).toBe('delivered');
    expect(await call(tab, 'reviewResult', 'review-r')).toEqual({ draft: 'draft on tides from 1 note', approvedBy: 'ann', url: '/posts/review-r', sources: 3, at: '1970-01-01T00:00:00.000Z' });

    // research ran once, before the reload; draft was cut off by it and ran again after; publish once.
    expect(entries.filter((e) => e.type === 'fn-step').map((e) => `${e.host}:${e.step}`)).toEqual([
      `${before.hostId}:research`,
      `${before.hostId}:draft`,
      `${after.hostId}:draft`,
      `${after.hostId}:publish`,
    ]);
  });
});
