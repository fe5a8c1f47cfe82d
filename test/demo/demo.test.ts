/**
 * The demo, end to end, in real Chromium on a persistent profile: what a person sees when they
 * start an agent task, reload in the middle of it, approve or reject it from another tab, close
 * the tab that executes it, or go offline. Each test reads visible text and roles only.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { afterEach, beforeEach, expect, inject, test } from 'vitest';
import {
  connected,
  expectStatus,
  inspectorDeadLetters,
  inspectorRuns,
  inspectorTimeline,
  launchDemo,
  modelCallCounter,
  runDetail,
  runInList,
  startTask,
  tabRole,
  type DemoBrowser,
} from './demo-browser.js';

const url = inject('demoUrl');
let browser: DemoBrowser;

beforeEach(async () => {
  browser = await launchDemo(url);
});

afterEach(async () => {
  await browser.close();
});

test('a reload during research loses no completed model call; the run finishes after approval', async () => {
  const page = await browser.open();
  expect(await connected(page)).toBe('leader');
  await startTask(page, { topic: 'reload during research', researchCalls: 3, tokenDelayMs: 40 });

  // The first call has completed (counted once its answer is memoized) and its step is filing
  // notes: reload now, before the step's settlement commits.
  await page.getByText(/^1 real/).waitFor();
  await page.reload();
  expect(await connected(page)).toBe('leader');
  await expectStatus(page, 'Waiting for approval');

  const detail = runDetail(page);
  await expect.poll(() => detail.getByText(/memo hit \(model not called again\)/).count()).toBeGreaterThanOrEqual(1);
  await inspectorTimeline(page).getByText(/memo hit: the model was not called again/).waitFor();

  // The README's screenshot: the run waiting for approval, the inspector's timeline under it.
  await mkdir('test-results', { recursive: true });
  await page.setViewportSize({ width: 1280, height: 1100 });
  await page.screenshot({ path: 'test-results/demo.png' });
  if (process.env.UPDATE_DEMO_SCREENSHOT) await copyFile('test-results/demo.png', 'docs/images/demo.png');
  await detail.getByRole('button', { name: 'Approve' }).click();
  await expectStatus(page, 'Succeeded');
  await detail.getByText('Published brief').waitFor();

  // 3 research calls + 1 draft, each made once for real; the interrupted one was read back.
  const calls = await modelCallCounter(page);
  expect(calls).toEqual({ real: 4, memoHits: 1, repeated: 0 });

  expect(browser.errors).toEqual([]);
});

test('a decision sent from a second tab before the run reaches approval is not lost', async () => {
  const first = await browser.open();
  expect(await connected(first)).toBe('leader');
  // Four research calls of ~1.5 s each: the approval below arrives long before the approval step.
  await startTask(first, { topic: 'approve from another tab', researchCalls: 4, tokenDelayMs: 50 });

  const second = await browser.open();
  expect(await connected(second)).toBe('follower');
  await runInList(second, 'approve from another tab').click();
  await runDetail(second).getByRole('button', { name: 'Approve' }).click();
  await runDetail(second).getByText('Approval recorded: the run will read it when it reaches the approval step.').waitFor();

  // The first tab executes every step; the run never stops at the approval step.
  await expectStatus(first, 'Succeeded');
  await expectStatus(second, 'Succeeded');
  expect(await tabRole(second).textContent()).toMatch(/standing by/);
  expect(browser.errors).toEqual([]);
});

test('closing the executing tab hands the run to the other tab', async () => {
  const first = await browser.open();
  await startTask(first, { topic: 'close the leader', researchCalls: 3, tokenDelayMs: 60 });
  await inspectorTimeline(first).getByText(/attempt 1 of \d+: running/).waitFor();

  const second = await browser.open();
  expect(await connected(second)).toBe('follower');
  await first.close();

  await tabRole(second).getByText('executes the steps').waitFor();
  await runInList(second, 'close the leader').click();
  await expectStatus(second, 'Waiting for approval');
  await runDetail(second).getByRole('button', { name: 'Approve' }).click();
  await expectStatus(second, 'Succeeded');
  expect((await modelCallCounter(second)).repeated).toBe(0);
  expect(browser.errors).toEqual([]);
});

test('after the first visit the app loads and runs offline', async () => {
  const page = await browser.open();
  // Setup, not an assertion: the service worker has cached the build.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await browser.context.setOffline(true);
  await page.reload();
  expect(await connected(page)).toBe('leader');
  await page.getByRole('heading', { name: 'Durable agent' }).waitFor();

  await startTask(page, { topic: 'offline run', researchCalls: 1 });
  await expectStatus(page, 'Waiting for approval');
  await runDetail(page).getByRole('button', { name: 'Approve' }).click();
  await expectStatus(page, 'Succeeded');
  expect(browser.errors).toEqual([]);
});

test('a rejection fails the run with its reason; cancelling stops a running step', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'to be rejected', researchCalls: 1 });
  await expectStatus(page, 'Waiting for approval');
  const detail = runDetail(page);
  await detail.getByLabel('Reason').fill('numbers are missing');
  await detail.getByRole('button', { name: 'Reject' }).click();
  await expectStatus(page, 'Failed');
  await detail.getByText('Reason: rejected: numbers are missing').waitFor();

  await startTask(page, { topic: 'to be cancelled', researchCalls: 3, tokenDelayMs: 200 });
  await inspectorTimeline(page).getByText(/attempt 1 of \d+: running/).waitFor();
  await detail.getByRole('button', { name: 'Cancel run' }).click();
  await expectStatus(page, 'Cancelled');
  await detail.getByText('Cancelled on request.').waitFor();
  await expect.poll(() => detail.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
  // Once the run ended, nothing invites a decision: the reason field is read-only too.
  expect(await detail.getByLabel('Reason').isDisabled()).toBe(true);
  // A cancel is a cancel: not an attempt that "failed", and no internal job id.
  const timeline = inspectorTimeline(page);
  await timeline.getByText(/: cancelled/).first().waitFor();
  expect(await timeline.getByText(/failed|cancel requested|id=/).count()).toBe(0);
  expect(await detail.getByText(/failed|cancel requested|id=/).count()).toBe(0);
  expect(browser.errors).toEqual([]);
});

test('a rate-limited call is retried; a model outage ends in the dead letters', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'flaky model', researchCalls: 2, flaky: true });
  const detail = runDetail(page);
  await inspectorTimeline(page).getByText(/attempt 1( of \d+)?: failed.*rate limited/).waitFor();
  await expectStatus(page, 'Waiting for approval');

  await startTask(page, { topic: 'model outage', researchCalls: 1, outage: true });
  await expectStatus(page, 'Failed');
  await inspectorDeadLetters(page).getByRole('listitem').filter({ hasText: 'model unavailable' }).getByText(/5 of 5 attempts/).waitFor();
  // The runtime's default logger reports the dead letter this test provokes, and nothing else errs.
  expect(browser.errors).toEqual([expect.stringMatching(/^console: \[taquba\] .*dead-lettered.*reason="model unavailable \(simulated outage\)"/)]);
});

test('an unanswered approval escalates once, then fails the run', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'nobody answers', researchCalls: 1, approvalTimeoutS: 2 });
  await expectStatus(page, 'Waiting for approval (escalated)');
  // The long badge wraps below the title instead of squeezing it to a letter.
  await page.setViewportSize({ width: 900, height: 800 });
  const title = await runDetail(page).locator('.run-title strong').boundingBox();
  expect(title?.width).toBeGreaterThan(80);
  const listedTitle = inspectorRuns(page).getByText('nobody answers', { exact: true });
  await listedTitle.waitFor();
  const listed = await listedTitle.boundingBox();
  expect(listed?.width).toBeGreaterThan(80);
  await inspectorTimeline(page).getByText(/Approval \(escalated\)/).waitFor();
  await expectStatus(page, 'Failed');
  await runDetail(page).getByText('Reason: no decision after escalation').waitFor();
  expect(browser.errors).toEqual([]);
});

test('the same agent runs on OPFS when chosen, with its own runs', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'on indexeddb', researchCalls: 1 });
  await expectStatus(page, 'Waiting for approval');

  await Promise.all([page.waitForEvent('load'), page.getByLabel('Storage').selectOption('opfs')]);
  expect(await connected(page)).toBe('leader');
  await inspectorRuns(page).getByText('No runs yet.').waitFor();
  await startTask(page, { topic: 'on opfs', researchCalls: 2 });
  await expectStatus(page, 'Waiting for approval');
  await page.reload();
  await runInList(page, 'on opfs').click();
  await runDetail(page).getByRole('button', { name: 'Approve' }).click();
  await expectStatus(page, 'Succeeded');
  expect(await page.getByRole('list', { name: 'Runs' }).getByText('on indexeddb').count()).toBe(0);
  expect(browser.errors).toEqual([]);
});
