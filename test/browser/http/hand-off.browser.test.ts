/**
 * Issue 30, item 4, in Chromium: `client.handOff(runId, backend)` moves a run started in the
 * page's worker (IndexedDB) to a Node backend (a child process, test/setup/hand-off-backend.ts),
 * where it finishes: the steps that completed in the page do not run again (the backend logs
 * every step execution; the page's worker reports its own), and the page reads the result from
 * the backend. Handing the same run off twice gives one run. A hand-off that cannot be delivered
 * (a fetch that fails, the backend process down) stays pending, the run running nowhere, and is
 * delivered once the backend answers again: after a reload (`resumeHandOffs`), or by the
 * client's own retry. The backend killed (kill -9) in the middle of a step and started again
 * runs that step again and nothing before it. And back: a backend's run exported over HTTP
 * continues in the page's worker.
 *
 * The backend runs on a filesystem store; the move and the kill -9 run against a second one on
 * the S3 test server too (a restarted process there fences the killed writer in the bucket).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectHttp, type HttpWorkflowClient } from '../../../src/browser/index.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { waitFor } from '../../support/wait.js';
import { afterThisTest, backendSteps, openPage as openBasePage, pageStepLog, runCleanups, uniqueName, type Page as BasePage } from './hand-off-page.js';
import { travel, type StepExecution } from './hand-off-workflows.js';

/** A backend process and its control server (test/setup/http-host.ts starts both). */
interface Target {
  readonly store: string;
  readonly url: string;
  readonly controlUrl: string;
}

const onFs: Target = { store: 'fs', url: inject('handOffBackendUrl'), controlUrl: inject('handOffControlUrl') };
const onS3: Target = { store: 's3', url: inject('handOffS3BackendUrl'), controlUrl: inject('handOffS3ControlUrl') };

/** A page (hand-off-page.ts) and the step executions its worker reports. */
interface Page extends BasePage {
  readonly steps: StepExecution[];
}

afterEach(runCleanups);

function openPage(storeName: string): Page {
  return { ...openBasePage(storeName), steps: pageStepLog(storeName) };
}

function backend(target: Target, options: Parameters<typeof connectHttp>[1] = {}): HttpWorkflowClient {
  const client = connectHttp(target.url, options);
  afterThisTest(() => client.close());
  return client;
}

async function control(target: Target, method: 'GET' | 'POST', path: string): Promise<unknown> {
  const response = await fetch(`${target.controlUrl}${path}`, { method });
  const body = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`control ${method} ${path} failed: ${JSON.stringify(body)}`);
  return body;
}

const count = (steps: readonly StepExecution[], step: string, phase: StepExecution['phase']): number => steps.filter((s) => s.step === step && s.phase === phase).length;

/** Starts `travel` in the page and waits until it waits for `go` (between steps: it can move). */
async function startWaiting(page: Page, holdB = false): Promise<string> {
  const run = await page.client.start(travel, { name: 'page', holdB });
  await waitFor(async () => (await page.client.status(run.runId))?.state === 'waiting-for-signal', 'the run to wait for go', { timeoutMs: 20_000 });
  return run.runId;
}

describe.each([onFs, onS3])('with the backend on the $store store', (target) => {
  it('a run started in the page moves to the Node backend between steps and finishes there; no completed step runs again', async () => {
    const page = openPage(uniqueName('hand-off'));
    const runId = await startWaiting(page);
    const server = backend(target);

    const moved = await page.client.handOff(runId, server);
    const imported = await moved.delivered;
    expect(imported).toMatchObject({ runId, archiveId: moved.archiveId, newlyImported: true });
    expect(moved.isDelivered()).toBe(true);
    expect(moved.to).toBe(server.url);
    // The page's store no longer runs it, and keeps where it went, delivered.
    expect(await page.client.status(runId)).toBeNull();
    const movedHere = (await page.client.listMovedRuns()).runs.find((r) => r.runId === runId);
    expect(movedHere).toMatchObject({ movedTo: server.url, archiveId: moved.archiveId });
    expect(movedHere?.deliveredAtMs).toEqual(expect.any(Number));
    expect((await page.client.listMovedRuns({ undelivered: true })).runs.map((r) => r.runId)).not.toContain(runId);

    expect(await server.signal(runId, 'go', 'Hello')).toBe('delivered');
    expect(await server.workflowRun(travel, runId).result()).toEqual({ a: 'browser', b: 'node', c: 'node', greeting: 'Hello, page' });
    expect(await moved.result()).toMatchObject({ runId, status: 'succeeded' });
    expect(await moved.status()).toMatchObject({ runId, state: 'succeeded' });

    // Step a ran once, in the page; b and c once each, on the backend.
    const there = await backendSteps(target.controlUrl, runId);
    expect([count(there, 'a', 'start'), count(there, 'b', 'start'), count(there, 'b', 'end'), count(there, 'c', 'start'), count(there, 'c', 'end')]).toEqual([0, 1, 1, 1, 1]);
    expect(page.steps.filter((s) => s.runId === runId).map((s) => `${s.step}:${s.phase}`)).toEqual(['a:start', 'a:end']);
  });

  it('a backend down at the hand-off gets the run when it is back; killed (kill -9) in the middle of a step, it runs that step again and nothing before it', async () => {
    const page = openPage(uniqueName('hand-off-kill'));
    const runId = await startWaiting(page, true);
    const pending = backend(target, { retries: 0 });

    await control(target, 'POST', '/kill');
    try {
      const moved = await page.client.handOff(runId, pending);
      // The import met a closed port: pending, tried again after a backoff.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(moved.isDelivered()).toBe(false);
      await control(target, 'POST', '/start');
      // Coming back online wakes the retry at once (it would come after its backoff anyway).
      window.dispatchEvent(new Event('online'));
      expect(await moved.delivered).toMatchObject({ runId, newlyImported: true });
    } finally {
      await control(target, 'POST', '/start');
    }

    const server = backend(target);
    await server.signal(runId, 'go', 'Bye');
    await waitFor(async () => count(await backendSteps(target.controlUrl, runId), 'b', 'start') === 1, 'step b to start on the backend', { timeoutMs: 20_000, intervalMs: 100 });
    await control(target, 'POST', '/kill');
    await control(target, 'POST', '/start');
    // The new process fences the killed one as it opens the store and puts its claim of step b back: it runs b again, then goes on.
    await control(target, 'POST', `/gate?runId=${runId}`);
    expect(await server.workflowRun(travel, runId).result()).toEqual({ a: 'browser', b: 'node', c: 'node', greeting: 'Bye, page' });
    const there = await backendSteps(target.controlUrl, runId);
    expect([count(there, 'a', 'start'), count(there, 'b', 'start'), count(there, 'b', 'end'), count(there, 'c', 'start'), count(there, 'c', 'end')]).toEqual([0, 2, 1, 1, 1]);
    expect(new Set(there.filter((s) => s.step === 'b').map((s) => (s as StepExecution & { pid: number }).pid)).size).toBe(2);
  });
});

it('handing off the same run twice gives one run', async () => {
  const page = openPage(uniqueName('hand-off-twice'));
  const runId = await startWaiting(page);
  const server = backend(onFs);

  const first = await page.client.handOff(runId, server);
  const second = await page.client.handOff(runId, server);
  expect(second.archiveId).toBe(first.archiveId);
  expect((await first.delivered).newlyImported).toBe(true);
  // Delivered again (a retry after a lost answer, a reload): the backend answers its first import.
  const again = await (await page.client.handOff(runId, server)).delivered;
  expect(again).toMatchObject({ runId, archiveId: first.archiveId, newlyImported: false });

  expect((await server.listRuns()).runs.filter((r) => r.runId === runId)).toHaveLength(1);
  await server.signal(runId, 'go', 'Twice');
  expect(await server.workflowRun(travel, runId).result()).toMatchObject({ b: 'node', c: 'node', greeting: 'Twice, page' });
  const there = await backendSteps(onFs.controlUrl, runId);
  expect([count(there, 'b', 'start'), count(there, 'c', 'start')]).toEqual([1, 1]);

  // Handed off elsewhere now, it is refused: the run continues where it went.
  const elsewhere = connectHttp('http://127.0.0.1:9/elsewhere', { retries: 0 });
  const refused = await page.client.handOff(runId, elsewhere).catch((e: unknown) => e);
  expect(isTaqubaError(refused, 'CONFLICT') && refused.details['reason']).toBe('handed_off_elsewhere');
  await elsewhere.close();
  const notABackend = await page.client.handOff(runId, {} as HttpWorkflowClient).catch((e: unknown) => e);
  expect(isTaqubaError(notABackend, 'INVALID_ARGUMENT') && notABackend.details['reason']).toBe('invalid_backend');
  const badId = await page.client.handOff('no such/id', server).catch((e: unknown) => e);
  expect(isTaqubaError(badId, 'INVALID_ARGUMENT')).toBe(true);
});

it('a hand-off whose import fails stays pending, runs nowhere, and is delivered after a reload', async () => {
  const storeName = uniqueName('hand-off-pending');
  let page = openPage(storeName);
  const runId = await startWaiting(page);
  // A fault-injecting fetch: every request fails as a network failure does while it is set.
  let offline = true;
  const flakyFetch: typeof fetch = (input, init) => (offline ? Promise.reject(new TypeError('Failed to fetch (test: offline)')) : fetch(input, init));
  const unreachable = backend(onFs, { fetch: flakyFetch, retries: 0 });
  const server = backend(onFs);

  const moved = await page.client.handOff(runId, unreachable);
  expect(moved.isDelivered()).toBe(false);
  expect(await moved.status()).toBeNull();
  // Pending: moved out of the page's store, not in the backend's.
  expect((await page.client.listMovedRuns({ undelivered: true })).runs.map((r) => r.runId)).toContain(runId);
  expect(await page.client.status(runId)).toBeNull();
  expect(await server.status(runId)).toBeNull();

  // A reload: the client goes (its delivery with it), a new one opens the same store.
  const lost = moved.delivered.catch((e: unknown) => e);
  await page.close();
  expect(isTaqubaError(await lost, 'CLOSED')).toBe(true);
  page = openPage(storeName);
  offline = false;
  const resumed = await page.client.resumeHandOffs(unreachable);
  expect(resumed.map((r) => [r.runId, r.archiveId])).toEqual([[runId, moved.archiveId]]);
  expect(await resumed[0]!.delivered).toMatchObject({ runId, newlyImported: true });
  expect((await page.client.listMovedRuns({ undelivered: true })).runs.map((r) => r.runId)).not.toContain(runId);

  await server.signal(runId, 'go', 'Later');
  expect(await server.workflowRun(travel, runId).result()).toEqual({ a: 'browser', b: 'node', c: 'node', greeting: 'Later, page' });
});


it('and back: a run of the backend exported over HTTP continues in the page (the archive crosses both carriers as bytes)', async () => {
  const page = openPage(uniqueName('hand-back'));
  const server = backend(onFs);
  const run = await server.start(travel, { name: 'server', holdB: false });
  await waitFor(async () => (await server.status(run.runId))?.state === 'waiting-for-signal', 'the backend run to wait for go', { timeoutMs: 20_000, intervalMs: 50 });

  const archive = await server.exportRun(run.runId, { handOff: true, to: 'a page' });
  expect(archive).toBeInstanceOf(Uint8Array);
  expect(await page.client.importRun(archive)).toMatchObject({ runId: run.runId, newlyImported: true });
  expect(await server.status(run.runId)).toBeNull();
  await page.client.signal(run.runId, 'go', 'Home');
  expect(await page.client.workflowRun(travel, run.runId).result()).toEqual({ a: 'node', b: 'browser', c: 'browser', greeting: 'Home, server' });
  expect(page.steps.filter((s) => s.runId === run.runId).map((s) => `${s.step}:${s.phase}`)).toEqual(['b:start', 'b:end', 'c:start', 'c:end']);
});
