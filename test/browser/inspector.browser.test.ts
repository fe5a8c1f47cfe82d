/**
 * `<taquba-inspector>` in real Chromium against a real worker host (the test app's worker,
 * host/pages/app-worker.ts): what it shows of a held step, a parked run and a poisoned step, the
 * status filter, retry and discard from its buttons, keyboard focus across live re-renders, and
 * its custom properties.
 */
import { afterEach, expect, it } from 'vitest';
import { defineTaqubaInspector, INSPECTOR_CSS_PROPERTIES, RUN_SELECT_EVENT, type TaqubaInspectorElement } from '../../src/browser/inspector/index.js';
import { planInput, startHost, TestLog, uniqueName, waitFor, type TestHost } from './host/harness.js';

let host: TestHost | undefined;
let log: TestLog | undefined;
let element: TaqubaInspectorElement | undefined;

afterEach(async () => {
  element?.remove();
  host?.worker.terminate();
  log?.close();
});

function mount(h: TestHost): TaqubaInspectorElement {
  defineTaqubaInspector();
  const el = document.createElement('taquba-inspector');
  el.options = { memoKeys: ['work'], pollMs: 100, describeRun: (runId) => (runId === 'held' ? { title: 'A held run', steps: [{ name: 'first' }, { name: 'second' }, { name: 'third' }], kvPrefixes: ['exec/held/'] } : undefined) };
  el.client = h.client;
  document.body.append(el);
  return el;
}

const shadow = (el: TaqubaInspectorElement): ShadowRoot => el.shadowRoot!;
const textOf = (el: TaqubaInspectorElement, part: string): string => shadow(el).querySelector(`[part~="${part}"]`)?.textContent ?? '';

async function shows(el: TaqubaInspectorElement, part: string, pattern: RegExp): Promise<void> {
  await waitFor(() => new RegExp(pattern.source, 's').test(textOf(el, part)), `${part} to show ${pattern} (it shows: ${textOf(el, part).slice(0, 300)})`, 20_000);
}

it('shows runs live: a held step running, steps to come, memo and KV values, a parked run, a filter', async () => {
  log = new TestLog(uniqueName('log'));
  host = startHost('indexeddb', uniqueName('inspector'), log.name);
  await host.role('leader');
  const el = (element = mount(host));
  const selected: string[] = [];
  el.addEventListener(RUN_SELECT_EVENT, (e) => selected.push((e as CustomEvent<{ runId: string }>).detail.runId));

  await host.client.submit({ runId: 'held', input: planInput({ steps: 3, holdAt: 1 }) });
  await host.client.submit({ runId: 'parked', input: planInput({ steps: 3, signalAt: { step: 0, key: 'go-parked', timeoutMs: 60_000 } }) });
  await shows(el, 'run-list', /A held run.*Running/);
  await shows(el, 'run-list', /parked.*Waiting for a signal/);

  const heldButton = [...shadow(el).querySelectorAll<HTMLButtonElement>('button.run')].find((b) => b.textContent?.includes('A held run'))!;
  heldButton.click();
  expect(selected).toEqual(['held']);
  await shows(el, 'timeline', /Step 1: first.*done.*Step 2: second.*running.*attempt 1 of \d+: running.*Step 3: third.*still to come/);
  await shows(el, 'detail', /Memo \(2\).*step 1 · work.*step 2 · work/);
  await shows(el, 'detail', /exec\/held\/0.*h\d+/);
  expect(shadow(el).querySelector('[part~="run-selected"]')?.getAttribute('aria-current')).toBe('true');

  // Keyboard focus survives a live re-render of the list (a new run appears above the focused one).
  [...shadow(el).querySelectorAll<HTMLButtonElement>('button.run')].find((b) => b.textContent?.includes('A held run'))!.focus();
  await host.client.submit({ runId: 'another', input: planInput({ steps: 1 }) });
  await shows(el, 'run-list', /another/);
  expect((shadow(el).activeElement as HTMLElement | null)?.dataset.focus).toBe('run:held');
  expect(heldButton.isConnected).toBe(false);

  el.selectRun('parked');
  await shows(el, 'timeline', /Step 1.*waiting.*waiting for signal "go-parked" · times out/);

  const filter = shadow(el).querySelector<HTMLSelectElement>('[part~="filter"]')!;
  filter.value = 'waiting-for-signal';
  filter.dispatchEvent(new Event('change'));
  await waitFor(() => !textOf(el, 'runs').includes('A held run') && textOf(el, 'runs').includes('parked'), 'the filter to keep only the parked run');

  await host.client.signal('go-parked', new TextEncoder().encode('go'));
  await shows(el, 'runs', /No runs in this state/);
  filter.value = 'all';
  filter.dispatchEvent(new Event('change'));
  await shows(el, 'run-list', /parked.*Succeeded/);
  await shows(el, 'queues', /workflow-steps/);
});

it('retries and discards a dead step from its buttons; an app restyles it through custom properties', async () => {
  log = new TestLog(uniqueName('log'));
  host = startHost('indexeddb', uniqueName('inspector-dead'), log.name);
  await host.role('leader');
  const el = (element = mount(host));
  await host.client.submit({ runId: 'poisoned', input: planInput({ steps: 2, poisonAt: 0 }) });
  await shows(el, 'dead-letters', /Dead letters \(1\).*Step 1 of poisoned.*poisoned input/);

  const button = (name: RegExp): HTMLButtonElement | undefined => [...shadow(el).querySelectorAll<HTMLButtonElement>('[part~="dead-letter"] button')].find((b) => name.test(b.getAttribute('aria-label') ?? b.textContent ?? ''));
  button(/^Retry step 1 of poisoned/)!.click();
  await shows(el, 'announcer', /Retried: step 1 of poisoned runs again/);
  // A permanent error: the retried step dead-letters again at once.
  await waitFor(() => log!.of('run', (e) => e.runId === 'poisoned').length >= 2, 'the retried step to run again');
  await shows(el, 'dead-letters', /Dead letters \(1\)/);

  button(/^Discard step 1 of poisoned/)!.click();
  expect((shadow(el).activeElement as HTMLElement | null)?.textContent).toBe('Yes, discard');
  (shadow(el).activeElement as HTMLButtonElement).click();
  await shows(el, 'dead-letters', /Dead letters \(0\)/);
  expect(await host.client.listDeadSteps()).toEqual([]);

  expect(INSPECTOR_CSS_PROPERTIES).toContain('--taquba-inspector-accent');
  el.style.setProperty('--taquba-inspector-fg', 'rgb(1, 2, 3)');
  expect(getComputedStyle(shadow(el).querySelector('[part~="inspector"]')!).color).toBe('rgb(1, 2, 3)');
});
