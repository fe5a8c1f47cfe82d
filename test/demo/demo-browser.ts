/**
 * Drives the demo the way a person does, in real Chromium (Playwright with `executablePath` set,
 * never a downloaded browser) on a persistent profile of its own per test, so IndexedDB, OPFS
 * and the service worker's cache live on disk and survive reloads. Every page's console errors
 * and uncaught exceptions are collected: a test ends by asserting there were none.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright';
import { inject, test } from 'vitest';
import { CHROMIUM_ARGS, resolveChromium } from '../setup/chromium.js';

export interface DemoBrowser {
  readonly context: BrowserContext;
  /** Console errors and page errors of every tab, as text. */
  readonly errors: string[];
  /** Opens a tab on the demo and waits until it is connected (leader or follower). */
  open(): Promise<Page>;
  close(): Promise<void>;
}

/** The timeouts of one UI expectation: steps run for a few seconds on a loaded 2-core machine. */
export const UI_TIMEOUT_MS = 30_000;

export async function launchDemo(url: string): Promise<DemoBrowser> {
  const { executablePath } = await resolveChromium();
  const profile = await mkdtemp(join(tmpdir(), 'taquba-demo-profile-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: [...CHROMIUM_ARGS] });
  context.setDefaultTimeout(UI_TIMEOUT_MS);
  const errors: string[] = [];
  const watch = (page: Page): void => {
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  };
  context.on('page', watch);
  for (const page of context.pages()) watch(page);
  return {
    context,
    errors,
    async open() {
      const blank = context.pages().find((p) => p.url() === 'about:blank');
      const page = blank ?? (await context.newPage());
      await page.goto(url);
      await connected(page);
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

/**
 * A test with a Chromium of its own on the demo (`browser`), closed when the test ends. Tests of a
 * file may then run at once (`demoTest.concurrent`, the project's maxConcurrency): each mostly
 * waits on its own Chromium, and one at a time they held one of the suite's two Node workers for
 * minutes. Such a test asserts with its context's `expect`.
 */
export const demoTest = test.extend<{ browser: DemoBrowser }>({
  // eslint-disable-next-line no-empty-pattern
  browser: async ({}, use) => {
    const browser = await launchDemo(inject('demoUrl'));
    try {
      await use(browser);
    } finally {
      await browser.close();
    }
  },
});

/** Waits until the tab reports its part: executing the steps, or standing by. */
export async function connected(page: Page): Promise<'leader' | 'follower'> {
  const role = tabRole(page);
  await role.filter({ hasText: /executes the steps|standing by/ }).waitFor();
  return (await role.textContent())?.includes('standing by') ? 'follower' : 'leader';
}

/** The header's "This tab" fact. */
export const tabRole = (page: Page): Locator => page.locator('#tab-role');

export interface TaskOptions {
  readonly topic: string;
  readonly researchCalls?: number;
  readonly approvalTimeoutS?: number;
  readonly tokenDelayMs?: number;
  readonly flaky?: boolean;
  readonly outage?: boolean;
}

/** Fills the "New task" form and starts it; the new run is selected. */
export async function startTask(page: Page, task: TaskOptions): Promise<void> {
  await page.getByLabel('Topic').fill(task.topic);
  await page.getByLabel('Research calls').fill(String(task.researchCalls ?? 2));
  await page.getByLabel('Approval timeout (s)').fill(String(task.approvalTimeoutS ?? 300));
  await page.getByLabel('Model delay per word (ms)').fill(String(task.tokenDelayMs ?? 5));
  await page.getByLabel(/Rate-limit the second research call/).setChecked(task.flaky ?? false);
  await page.getByLabel(/Model outage/).setChecked(task.outage ?? false);
  await page.getByRole('button', { name: 'Start task' }).click();
  await runDetail(page).getByText(task.topic).first().waitFor();
}

/** The selected run's panel. */
export const runDetail = (page: Page): Locator => page.getByRole('region', { name: 'Run', exact: true });

/** The `<taquba-inspector>` of the page (Playwright's locators reach into its shadow DOM). */
export const inspector = (page: Page): Locator => page.locator('taquba-inspector');

/** The inspector's run list. */
export const inspectorRuns = (page: Page): Locator => inspector(page).getByRole('region', { name: 'Runs', exact: true });

/** The inspector's timeline of the selected run. */
export const inspectorTimeline = (page: Page): Locator => inspector(page).getByRole('region', { name: 'Run timeline' });

/** The inspector's dead letters. */
export const inspectorDeadLetters = (page: Page): Locator => inspector(page).getByRole('region', { name: 'Dead letters' });

/** The run's button in the inspector's run list. */
export const runInList = (page: Page, topic: string): Locator => page.getByRole('list', { name: 'Runs' }).getByRole('button', { name: new RegExp(topic) });

/** A step in the run panel's list of steps, by its label (`research 1 of 3`, `draft`, ...). */
export const stepItem = (page: Page, label: string): Locator =>
  runDetail(page)
    .getByRole('list', { name: 'Steps', exact: true })
    .getByRole('listitem')
    .filter({ hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `) });

/** The inspector's list of the selected workflow run's calls (`step research 1`, `signal approve`, ...). */
export const inspectorCalls = (page: Page): Locator => inspectorTimeline(page).getByRole('list', { name: 'Workflow calls' });

/** One call in the inspector's list, by its title (`step research 1`). */
export const inspectorCall = (page: Page, title: string): Locator => inspectorCalls(page).getByRole('listitem').filter({ has: page.getByText(title, { exact: true }) });

/** The inspector's run-list entry of the run titled `topic`. */
export const listedRun = (page: Page, topic: string): Locator => inspectorRuns(page).getByRole('button', { name: new RegExp(topic) });

/** Waits until the selected run shows `status` (its badge text). */
export async function expectStatus(page: Page, status: string | RegExp): Promise<void> {
  // Exact for a word: the run's own title may contain it ("to be cancelled").
  await runDetail(page).locator('.run-title').getByText(status, { exact: typeof status === 'string' }).waitFor();
}

/** The header's model-call counter: real calls, memo hits, repeated calls. */
export async function modelCallCounter(page: Page): Promise<{ real: number; memoHits: number; repeated: number }> {
  const text = (await page.locator('#model-calls').textContent()) ?? '';
  const match = /(\d+) real · (\d+) memo hits? · (\d+) repeated/.exec(text);
  if (!match) throw new Error(`model-call counter not readable: ${text}`);
  return { real: Number(match[1]), memoHits: Number(match[2]), repeated: Number(match[3]) };
}
