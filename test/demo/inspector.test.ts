/**
 * `<taquba-inspector>` in the demo, in real Chromium on a persistent profile: what a person sees
 * of a run after a reload (its steps, attempts, what it waits for, memo and KV values), a dead
 * letter retried and discarded from the inspector, and a second tab that follows a run live.
 * Each test reads visible text and roles only (Playwright's locators reach into shadow DOM).
 */
import { afterEach, beforeEach, expect, inject, test } from 'vitest';
import {
  connected,
  expectStatus,
  inspector,
  inspectorDeadLetters,
  inspectorRuns,
  inspectorTimeline,
  launchDemo,
  runDetail,
  runInList,
  startTask,
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

/** The runtime's default logger reports each dead letter an outage provokes on the console. */
const unexpectedErrors = (errors: readonly string[]): string[] => errors.filter((e) => !/^console: \[taquba\] .*dead-lettered.*model unavailable/.test(e));

test("after a reload the inspector shows the run's timeline: steps done, the current one, those to come, memo and KV values", async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'timeline after reload', researchCalls: 3, tokenDelayMs: 40 });
  const timeline = inspectorTimeline(page);
  await timeline.getByText(/Step 2: Research 2\/3/).waitFor();
  await timeline.getByRole('listitem').filter({ hasText: 'Step 1: Research 1/3' }).getByText('done', { exact: true }).waitFor();

  await page.reload();
  expect(await connected(page)).toBe('leader');
  // The selected run comes back from the URL; everything below is read from the store.
  await timeline.getByText('timeline after reload', { exact: true }).waitFor();
  const step1 = timeline.getByRole('listitem').filter({ hasText: 'Step 1: Research 1/3' });
  await step1.getByText('done', { exact: true }).waitFor();
  await step1.getByText(/model called/).waitFor();
  // Its try comes from the step job the store kept (this page saw none of it happen).
  await step1.getByText(/attempt 1 of 5: completed · started .* · took /).waitFor();
  // The approval and publish steps are named before the run reaches them.
  await timeline.getByRole('listitem').filter({ hasText: 'Step 6: Publish' }).getByText('still to come').waitFor();

  // Memo entries that exist, by name and readable; KV values decoded, not byte counts.
  await timeline.getByText(/Memo \([1-9]\)/).waitFor();
  await timeline.getByText('step 1 · model-call', { exact: true }).waitFor();
  const runRecord = timeline.getByRole('listitem').filter({ hasText: /^demo\/runs\/run-/ });
  await runRecord.locator('summary').getByText(/"topic": "timeline after reload"/).waitFor();
  await runRecord.locator('summary').click();
  await runRecord.locator('pre').getByText(/"researchCalls": 3/).waitFor();

  // The run waits for its approval: the step says for which signal and until when, with its attempt.
  await expectStatus(page, 'Waiting for approval');
  const approval = timeline.getByRole('listitem').filter({ hasText: 'Step 5: Approval' });
  await approval.getByText(/waiting for signal "approval:run-.*" · times out/).waitFor();
  await timeline.getByRole('listitem').filter({ hasText: 'Step 4: Draft' }).getByText(/attempt 1 of 5: completed · started .* · took /).waitFor();
  await timeline.getByText(/waited for, not sent yet/).waitFor();
  expect(browser.errors).toEqual([]);
});

test('a signal sent before the run waits shows as buffered; approving early says so', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'approve early', researchCalls: 3, tokenDelayMs: 30 });
  const detail = runDetail(page);
  await detail.getByText(/has not reached the approval step yet/).waitFor();
  await detail.getByRole('button', { name: 'Approve in advance' }).click();
  await detail.getByText('Approval recorded: the run will read it when it reaches the approval step.').waitFor();
  await inspectorTimeline(page).getByText(/already sent, buffered until the run reads it/).waitFor();
  await expectStatus(page, 'Succeeded');
  await detail.getByRole('heading', { name: 'Published brief' }).waitFor();
  // The brief is rendered Markdown (a heading and a list), not raw text in a <pre>.
  await detail.getByRole('heading', { name: 'approve early' }).waitFor();
  expect(await detail.locator('pre').count()).toBe(0);
  expect(await detail.locator('article ol li').count()).toBe(3);
  expect(browser.errors).toEqual([]);
});

test('a dead letter is retried from the inspector, runs again, and can then be discarded', async () => {
  const page = await browser.open();
  await startTask(page, { topic: 'outage to retry', researchCalls: 1, outage: true });
  await expectStatus(page, 'Failed');
  const dead = inspectorDeadLetters(page);
  const letter = dead.getByRole('listitem').filter({ hasText: 'outage to retry' });
  await letter.getByText(/5 of 5 attempts/).waitFor();
  await letter.getByText('model unavailable (simulated outage)').waitFor();
  const failedAttempts = await inspectorTimeline(page).getByText(/: failed/).count();

  await letter.getByRole('button', { name: 'Retry step 1 of outage to retry' }).click();
  await inspector(page).getByRole('status').getByText('Retried: step 1 of outage to retry runs again.').waitFor();
  // The step runs again (five more tries, seen live), and lands in the dead letters again.
  await expect.poll(() => inspectorTimeline(page).getByText(/: failed/).count(), { timeout: 60_000 }).toBeGreaterThan(failedAttempts);
  await letter.getByText(/5 of 5 attempts/).waitFor({ timeout: 60_000 });

  // Discarding asks first; keyboard focus lands on the confirmation.
  await letter.getByRole('button', { name: 'Discard step 1 of outage to retry' }).click();
  const confirm = letter.getByRole('button', { name: 'Yes, discard' });
  await expect.poll(() => confirm.evaluate((el) => (el.getRootNode() as ShadowRoot).activeElement === el)).toBe(true);
  await page.keyboard.press('Enter');
  await dead.getByRole('heading', { name: 'Dead letters (0)' }).waitFor();
  await inspector(page).getByRole('region', { name: 'Queues' }).getByRole('row', { name: /workflow-steps/ }).getByRole('cell').nth(3).getByText('0', { exact: true }).waitFor();
  expect(unexpectedErrors(browser.errors)).toEqual([]);
});

test('a second tab follows a run live: its running step, each new step, the end', async () => {
  const first = await browser.open();
  expect(await connected(first)).toBe('leader');
  const second = await browser.open();
  expect(await connected(second)).toBe('follower');

  await startTask(first, { topic: 'watched from another tab', researchCalls: 3, tokenDelayMs: 30 });
  // No reload in the second tab: the run appears in its list and its steps advance there.
  await runInList(second, 'watched from another tab').click();
  const timeline = inspectorTimeline(second);
  // A follower draws the step the leader runs as running (not as a grey "pending").
  await timeline.getByRole('listitem').filter({ hasText: /Step \d: Research/ }).getByText('running', { exact: true }).first().waitFor();
  await timeline.getByRole('listitem').filter({ hasText: 'Step 1: Research 1/3' }).getByText('done', { exact: true }).waitFor();
  await inspectorRuns(second).getByRole('button', { name: /watched from another tab/ }).getByText('Waiting for a signal').waitFor();

  await expectStatus(first, 'Waiting for approval');
  await runDetail(first).getByRole('button', { name: 'Approve', exact: true }).click();
  await inspectorRuns(second).getByRole('button', { name: /watched from another tab/ }).getByText('Succeeded').waitFor();
  await timeline.getByRole('listitem').filter({ hasText: 'Step 6: Publish' }).getByText('done', { exact: true }).waitFor();
  await expectStatus(second, 'Succeeded');
  expect(browser.errors).toEqual([]);
});
