/**
 * Issue 30, in Chromium: a hand-off interrupted at every point between the export and the
 * source's mark, the run running in exactly one place. `createHandOffs` (src/browser/hand-off.ts)
 * is driven over fault-injecting wrappers of the page client's operations and of a `connectHttp`
 * backend client: at one await of the protocol (export, import, confirm) the page "dies", the call
 * either never sent or applied with its answer lost, and every later call of that page fails
 * unsent. Then the page goes (its worker terminated), a new one opens the same IndexedDB store (a
 * reload) and `resumeHandOffs` delivers what is left. At every observation point the run is in the
 * page, at the backend, or moved and undelivered in the page's store: never two, never none; it
 * finishes once, and no step that completed runs again (the page's worker reports its steps on a
 * BroadcastChannel, the backend logs its own).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectHttp, type HttpWorkflowClient } from '../../../src/browser/index.js';
import { createHandOffs, type HandOffBackend, type HandOffs, type HandOffSource } from '../../../src/browser/hand-off.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { waitFor } from '../../support/wait.js';
import { afterThisTest, backendSteps, openPage, pageStepLog, runCleanups, uniqueName, type Page } from './hand-off-page.js';
import { travel, type StepExecution } from './hand-off-workflows.js';

// The backend no test kills: hand-off.browser.test.ts kills its own while this file may run.
const backendUrl = inject('handOffSteadyBackendUrl');
const controlUrl = inject('handOffSteadyControlUrl');

afterEach(runCleanups);

const phases = (steps: readonly StepExecution[], runId: string): string[] => steps.filter((s) => s.runId === runId).map((s) => `${s.step}:${s.phase}`);

type Place = 'page' | 'backend' | 'in transit' | 'lost';

/**
 * Where the run is now: active (or finished) in the page's store, at the backend, or moved and
 * undelivered in the page's store (it runs nowhere). Fails when it is in the page and at the backend.
 */
async function placeOf(page: Page, server: HttpWorkflowClient, runId: string, at: string): Promise<Place> {
  const here = await page.client.status(runId);
  const there = await server.status(runId);
  expect(here === null || there === null, `${at}: the run is in two places, the page (${here?.state}) and the backend (${there?.state})`).toBe(true);
  if (here !== null) return 'page';
  if (there !== null) return 'backend';
  const undelivered = await page.client.listMovedRuns({ undelivered: true });
  return undelivered.runs.some((r) => r.runId === runId) ? 'in transit' : 'lost';
}

type ProtocolCall = 'exportRun' | 'importRun' | 'confirmHandOff';

/** Where the page dies: before the call is sent, or after it was applied (its answer lost). */
interface Fault {
  readonly call: ProtocolCall;
  readonly when: 'before' | 'after';
}

class PageDied extends Error {}

/**
 * The page client's operations and the backend client, as `createHandOffs` sees them in a page
 * that dies at `fault`: from then on no call is sent. Around every call sent, where the run is
 * goes to `observed` (a repeat of the last place is not listed again: an export asked again while
 * the run moves observes the same place twice).
 */
function dyingAt(fault: Fault, page: Page, server: HttpWorkflowClient, runId: string) {
  const observed: string[] = [];
  let dead = false;
  const observe = async (at: string): Promise<void> => {
    const entry = `${at}: ${await placeOf(page, server, runId, at)}`;
    if (observed.at(-1) !== entry) observed.push(entry);
  };
  const intercept = async <T>(call: ProtocolCall | 'listMovedRuns', send: () => Promise<T>): Promise<T> => {
    if (dead) throw new PageDied(`${call} not sent: the page died earlier`);
    await observe(`before ${call}`);
    if (fault.call === call && fault.when === 'before') {
      dead = true;
      throw new PageDied(`${call} not sent: the page died`);
    }
    const answer = await send();
    await observe(`after ${call}`);
    if (fault.call === call && fault.when === 'after') {
      dead = true;
      throw new PageDied(`${call} applied, its answer lost: the page died`);
    }
    return answer;
  };
  const source: HandOffSource = {
    exportRun: (...args) => intercept('exportRun', () => page.client.exportRun(...args)),
    listMovedRuns: (...args) => intercept('listMovedRuns', () => page.client.listMovedRuns(...args)),
    confirmHandOff: (...args) => intercept('confirmHandOff', () => page.client.confirmHandOff(...args)),
  };
  const backend: HandOffBackend = {
    url: server.url,
    importRun: (...args) => intercept('importRun', () => server.importRun(...args)),
    status: (...args) => server.status(...args),
    result: (...args) => server.result(...args),
    subscribe: (...args) => server.subscribe(...args),
    events: (...args) => server.events(...args),
  };
  return { source, backend, observed };
}

/** Every observation of an uninterrupted hand-off, in order; a case observes a prefix of it. */
const WHOLE_HAND_OFF = [
  'before exportRun: page',
  'after exportRun: in transit',
  'before importRun: in transit',
  'after importRun: backend',
  'before confirmHandOff: backend',
  'after confirmHandOff: backend',
];

interface Case {
  readonly point: string;
  readonly fault: Fault;
  /** How many of WHOLE_HAND_OFF the dying page observes. */
  readonly observations: number;
  /** How `handOff` answers in the dying page. */
  readonly handOff: 'rejects' | 'delivery rejects' | 'delivered';
  /** Where the run is after the reload. */
  readonly afterReload: Place;
  /** Whether the page's store lists it moved and undelivered after the reload. */
  readonly undelivered: boolean;
  /** `resumeHandOffs`' delivery: none, or its `newlyImported`. */
  readonly resumed: 'none' | { readonly newlyImported: boolean };
}

const CASES: readonly Case[] = [
  { point: 'P1 export not sent', fault: { call: 'exportRun', when: 'before' }, observations: 1, handOff: 'rejects', afterReload: 'page', undelivered: false, resumed: 'none' },
  { point: 'P2 export applied, answer lost', fault: { call: 'exportRun', when: 'after' }, observations: 2, handOff: 'rejects', afterReload: 'in transit', undelivered: true, resumed: { newlyImported: true } },
  { point: 'P3 import not sent', fault: { call: 'importRun', when: 'before' }, observations: 3, handOff: 'delivery rejects', afterReload: 'in transit', undelivered: true, resumed: { newlyImported: true } },
  { point: 'P4 import applied, answer lost', fault: { call: 'importRun', when: 'after' }, observations: 4, handOff: 'delivery rejects', afterReload: 'backend', undelivered: true, resumed: { newlyImported: false } },
  // The delivery swallows a failed confirmation (a reload delivers again, answered once): `delivered` resolves.
  { point: 'P5 confirm not sent', fault: { call: 'confirmHandOff', when: 'before' }, observations: 5, handOff: 'delivered', afterReload: 'backend', undelivered: true, resumed: { newlyImported: false } },
  { point: 'P6 confirm applied, answer lost', fault: { call: 'confirmHandOff', when: 'after' }, observations: 6, handOff: 'delivered', afterReload: 'backend', undelivered: false, resumed: 'none' },
];

describe('a hand-off interrupted between the export and the source\'s mark, then a reload: the run runs in exactly one place', () => {
  it.each(CASES)('$point', async (c) => {
    const storeName = uniqueName('hand-off-interrupted');
    const pageSteps = pageStepLog(storeName);
    let page = openPage(storeName);
    const server = connectHttp(backendUrl);
    afterThisTest(() => server.close());

    const run = await page.client.start(travel, { name: 'page', holdB: false });
    const { runId } = run;
    await waitFor(async () => (await page.client.status(runId))?.state === 'waiting-for-signal', 'the run to wait for go', { timeoutMs: 20_000 });
    // Step a's reports are in before the page dies (they cross a BroadcastChannel).
    await waitFor(() => phases(pageSteps, runId).includes('a:end'), 'step a to be reported', { timeoutMs: 20_000 });

    // The dying page's hand-off.
    const dying = dyingAt(c.fault, page, server, runId);
    const handOffs: HandOffs = createHandOffs(dying.source);
    const outcome = await handOffs.handOff(runId, dying.backend).then(
      async (moved) => {
        const delivered = await moved.delivered.then(
          (imported) => ({ imported }),
          (error: unknown) => ({ error }),
        );
        return { moved, ...delivered };
      },
      (error: unknown) => ({ error }),
    );
    expect(dying.observed).toEqual(WHOLE_HAND_OFF.slice(0, c.observations));
    if (c.handOff === 'rejects') {
      expect('moved' in outcome).toBe(false);
    } else {
      expect('moved' in outcome && outcome.moved.runId).toBe(runId);
    }
    if (c.handOff === 'delivered') {
      expect('imported' in outcome && outcome.imported).toMatchObject({ runId, newlyImported: true });
    } else {
      expect('error' in outcome && outcome.error).toBeInstanceOf(PageDied);
    }
    const archiveId = 'moved' in outcome ? outcome.moved.archiveId : undefined;

    // The page dies; a reload opens its store again.
    handOffs.close();
    await page.close();
    page = openPage(storeName);
    expect(await placeOf(page, server, runId, 'after the reload')).toBe(c.afterReload);
    const moved = (await page.client.listMovedRuns()).runs.filter((r) => r.runId === runId);
    const undelivered = (await page.client.listMovedRuns({ undelivered: true })).runs.filter((r) => r.runId === runId);
    expect(undelivered.length).toBe(c.undelivered ? 1 : 0);
    if (c.fault.call === 'exportRun' && c.fault.when === 'before') {
      expect(moved).toEqual([]);
    } else {
      expect(moved).toEqual([expect.objectContaining({ runId, movedTo: server.url })]);
      if (archiveId !== undefined) expect(moved[0]?.archiveId).toBe(archiveId);
    }

    // The real client delivers what is left.
    const resumed = await page.client.resumeHandOffs(server);
    if (c.resumed === 'none') {
      expect(resumed).toEqual([]);
    } else {
      expect(resumed.map((r) => [r.runId, r.archiveId])).toEqual([[runId, moved[0]?.archiveId]]);
      expect(await resumed[0]!.delivered).toMatchObject({ runId, archiveId: moved[0]?.archiveId, newlyImported: c.resumed.newlyImported });
    }
    expect((await page.client.listMovedRuns({ undelivered: true })).runs).toEqual([]);

    if (c.afterReload === 'page') {
      // Never moved: it goes on in the page; the backend never ran it and does not know it.
      expect(await placeOf(page, server, runId, 'after resumeHandOffs')).toBe('page');
      expect(await page.client.signal(runId, 'go', 'Here')).toBe('delivered');
      expect(await page.client.workflowRun(travel, runId).result()).toEqual({ a: 'browser', b: 'browser', c: 'browser', greeting: 'Here, page' });
      expect(await placeOf(page, server, runId, 'once finished')).toBe('page');
      expect(await server.status(runId)).toBeNull();
      expect(await backendSteps(controlUrl, runId)).toEqual([]);
      await waitFor(() => phases(pageSteps, runId).includes('c:end'), 'step c to be reported', { timeoutMs: 20_000 });
      expect(phases(pageSteps, runId)).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
      return;
    }

    // At the backend, once: it finishes there, the page's store only remembers where it went.
    expect(await placeOf(page, server, runId, 'after resumeHandOffs')).toBe('backend');
    expect((await server.listRuns()).runs.filter((r) => r.runId === runId)).toHaveLength(1);
    expect(await server.signal(runId, 'go', 'There')).toBe('delivered');
    expect(await server.workflowRun(travel, runId).result()).toEqual({ a: 'browser', b: 'node', c: 'node', greeting: 'There, page' });
    expect(await placeOf(page, server, runId, 'once finished')).toBe('backend');
    const notHere = await page.client.result(runId).catch((e: unknown) => e);
    expect(isTaqubaError(notHere, 'NOT_FOUND') && notHere.details['reason']).toBe('run_moved');
    const there = await backendSteps(controlUrl, runId);
    expect(phases(there, runId)).toEqual(['b:start', 'b:end', 'c:start', 'c:end']);
    expect(phases(pageSteps, runId)).toEqual(['a:start', 'a:end']);
  });
});
