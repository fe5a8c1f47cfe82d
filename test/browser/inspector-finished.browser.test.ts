/**
 * Finished runs in real Chromium: the page client lists them, reads one and awaits a run's
 * outcome (`result`) through the leader; and `<taquba-inspector>`, opened in another tab after
 * the runs ended, lists them from the store's finished-run records (its status filters included)
 * and shows a finished run's outcome: status, result or reason, when it ended.
 */
import { afterEach, expect, it } from 'vitest';
import { defineTaqubaInspector, type TaqubaInspectorElement } from '../../src/browser/inspector/index.js';
import { planInput, startHost, TestLog, text, uniqueName, waitFor, type TestHost } from './host/harness.js';

const hosts: TestHost[] = [];
let log: TestLog | undefined;
let element: TaqubaInspectorElement | undefined;

afterEach(() => {
  element?.remove();
  for (const h of hosts.splice(0)) h.worker.terminate();
  log?.close();
});

const shadow = (el: TaqubaInspectorElement): ShadowRoot => el.shadowRoot!;
const textOf = (el: TaqubaInspectorElement, part: string): string => shadow(el).querySelector(`[part~="${part}"]`)?.textContent ?? '';

async function shows(el: TaqubaInspectorElement, part: string, pattern: RegExp): Promise<void> {
  await waitFor(() => new RegExp(pattern.source, 's').test(textOf(el, part)), `${part} to show ${pattern} (it shows: ${textOf(el, part).slice(0, 300)})`, 20_000);
}

function choose(el: TaqubaInspectorElement, filter: string): void {
  const select = shadow(el).querySelector<HTMLSelectElement>('[part~="filter"]')!;
  select.value = filter;
  select.dispatchEvent(new Event('change'));
}

it('lists finished runs from the store, reads their outcome and awaits a run; the inspector of a later tab shows them', async () => {
  log = new TestLog(uniqueName('log'));
  const name = uniqueName('inspector-finished');
  const leader = startHost('indexeddb', name, log.name);
  hosts.push(leader);
  await leader.role('leader');
  const { client } = leader;

  await client.submit({ runId: 'early-ok', input: planInput({ steps: 2 }) });
  await client.submit({ runId: 'early-bad', input: planInput({ steps: 1, failWith: 'no luck' }) });
  await client.submit({ runId: 'early-held', input: planInput({ steps: 1, holdAt: 0 }) });
  const ok = await client.result('early-ok');
  expect(ok).toMatchObject({ runId: 'early-ok', status: 'succeeded', finalStep: 1, error: null });
  expect(text(ok.result)).toBe('done:early-ok');
  expect(await client.result('early-bad')).toMatchObject({ status: 'failed', error: 'no luck' });
  // `result` waits for a run still active: here until it is cancelled.
  await log.waitFor('holding', (e) => e.runId === 'early-held');
  const held = client.result('early-held');
  expect(await client.cancel('early-held')).toBe(true);
  expect(await held).toMatchObject({ status: 'cancelled', finalStep: 0 });
  await expect(client.result('never-submitted')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  const aborted = new AbortController();
  aborted.abort();
  await expect(client.result('early-ok', { signal: aborted.signal })).rejects.toMatchObject({ code: 'CANCELLED' });

  const listed = await client.listFinishedRuns();
  expect(listed.runs.map((r) => [r.runId, r.status])).toEqual([
    ['early-bad', 'failed'],
    ['early-held', 'cancelled'],
    ['early-ok', 'succeeded'],
  ]);
  expect((await client.listFinishedRuns({ status: 'failed' })).runs.map((r) => r.runId)).toEqual(['early-bad']);
  await expect(client.listFinishedRuns({ status: 'running' as never })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_status' } });
  expect(await client.getFinishedRun('early-ok')).toMatchObject({ status: 'succeeded', endedAtMs: expect.any(Number) });

  // A tab opened now saw none of these runs: its inspector reads them from the store.
  const later = startHost('indexeddb', name, log.name);
  hosts.push(later);
  await later.role('follower');
  defineTaqubaInspector();
  const el = (element = document.createElement('taquba-inspector'));
  el.options = { pollMs: 100 };
  el.client = later.client;
  document.body.append(el);

  await shows(el, 'run-list', /early-bad.*Failed.*ended/);
  await shows(el, 'run-list', /early-ok.*Succeeded.*step 2.*ended/);
  await shows(el, 'run-list', /early-held.*Cancelled/);

  el.selectRun('early-ok');
  await shows(el, 'detail', /early-ok.*Succeeded.*ended/);
  await shows(el, 'outcome', /Result.*done:early-ok/);
  el.selectRun('early-bad');
  await shows(el, 'detail', /Failed.*Reason: no luck/);

  choose(el, 'succeeded');
  await waitFor(() => textOf(el, 'runs').includes('early-ok') && !textOf(el, 'runs').includes('early-bad'), 'the succeeded filter to keep only early-ok');
  choose(el, 'cancelled');
  await waitFor(() => textOf(el, 'runs').includes('early-held') && !textOf(el, 'runs').includes('early-ok'), 'the cancelled filter to keep only early-held');
  choose(el, 'failed');
  await waitFor(() => textOf(el, 'runs').includes('early-bad') && !textOf(el, 'runs').includes('early-held'), 'the failed filter to keep only early-bad');
});
