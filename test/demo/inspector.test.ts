/**
 * `<taquba-inspector>` in the demo, in real Chromium on a persistent profile: what a person sees
 * of the agent's workflow run after a reload (its calls by name with their values, its executions
 * with their tries, the signal it waits for), a decision sent before the run waits, a step out of
 * attempts that the panel and the inspector show alike until Retry, and a second tab that follows
 * a run live (its calls stay shown after the run ended), and the scheduled daily digest with its
 * next firing. Each test reads visible text and roles only (Playwright's locators reach into shadow DOM).
 */
import {
  connected,
  demoTest,
  expectStatus,
  inspector,
  inspectorCall,
  inspectorCalls,
  inspectorDeadLetters,
  inspectorTimeline,
  listedRun,
  runDetail,
  runInList,
  startTask,
  stepItem,
} from './demo-browser.js';

demoTest.concurrent("after a reload the inspector shows the workflow's calls by name with their values, and its executions", async ({ browser, expect }) => {
  const page = await browser.open();
  await startTask(page, { topic: 'timeline after reload', researchCalls: 3, tokenDelayMs: 60 });
  const timeline = inspectorTimeline(page);
  await inspectorCall(page, 'step research 1').getByText('done', { exact: true }).waitFor();

  await page.reload();
  expect(await connected(page)).toBe('leader');
  // The selected run comes back from the URL; everything below is read from the store.
  await timeline.getByText('timeline after reload', { exact: true }).waitFor();
  await timeline.getByRole('heading', { name: 'Workflow research-agent@1' }).waitFor();
  const research1 = inspectorCall(page, 'step research 1');
  await research1.getByText('done', { exact: true }).waitFor();
  // Its value, decoded: the model's answer to the first research question.
  await research1.getByText(/Value · .*What is timeline after reload/).waitFor();
  // The execution the reload cut off shows the interruption, then runs on in this tab.
  await timeline.getByRole('list', { name: 'Executions' }).getByText(/interrupted by a reload, crash or closed tab/).waitFor();

  // The run waits for its approval: the call says for which signal and until when.
  await expectStatus(page, 'Waiting for a signal');
  await listedRun(page, 'timeline after reload').getByText('Waiting for a signal').waitFor();
  await inspectorCall(page, 'signal approve').getByText('waiting for the signal').waitFor();
  await inspectorCall(page, 'signal approve').getByText(/^until .* \(in \d+ min/).waitFor();
  await inspectorCall(page, 'step draft').getByText('done', { exact: true }).waitFor();
  expect(await inspectorCalls(page).getByRole('listitem').filter({ hasText: /^step / }).count()).toBe(4);
  await timeline.getByText(/waited for, not sent yet/).waitFor();
  expect(browser.errors).toEqual([]);
});

demoTest.concurrent('a signal sent before the run waits shows as buffered; approving early says so', async ({ browser, expect }) => {
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
  // The run's value, as the store kept it.
  await inspectorTimeline(page).getByText(/Result · .*# approve early/).waitFor();
  expect(browser.errors).toEqual([]);
});

demoTest.concurrent('a step out of attempts: the panel and the inspector show the same state and error until Retry ends the outage', async ({ browser, expect }) => {
  const page = await browser.open();
  await startTask(page, { topic: 'outage to retry', researchCalls: 1, outage: true });
  const detail = runDetail(page);
  await expectStatus(page, 'Waiting for a signal');
  await listedRun(page, 'outage to retry').getByText('Waiting for a signal').waitFor();
  const failed = inspectorCall(page, 'step research 1');
  await failed.getByText('failed after 5 attempts').waitFor();
  await failed.getByText('Error: model unavailable (simulated outage)').waitFor();
  await inspectorCall(page, 'signal retry').getByText('no timeout').waitFor();
  await stepItem(page, 'research 1 of 1').getByText(/^research 1 of 1 failed · 5 attempts · 5 failed/).waitFor();
  // Not a dead letter: the workflow caught the step's failure and asks.
  await inspectorDeadLetters(page).getByRole('heading', { name: 'Dead letters (0)' }).waitFor();

  await detail.getByRole('button', { name: 'Retry step' }).click();
  await inspectorCall(page, 'step research 1').last().getByText('done', { exact: true }).waitFor();
  await inspectorCall(page, 'signal retry').getByText('received').waitFor();
  await expectStatus(page, 'Waiting for a signal');
  await detail.getByRole('button', { name: 'Approve', exact: true }).click();
  await expectStatus(page, 'Succeeded');
  await listedRun(page, 'outage to retry').getByText('Succeeded').waitFor();
  expect(browser.errors).toEqual([]);
});

demoTest.concurrent('a second tab follows a run live: its running execution, each call, the end', async ({ browser, expect }) => {
  const first = await browser.open();
  expect(await connected(first)).toBe('leader');
  const second = await browser.open();
  expect(await connected(second)).toBe('follower');

  await startTask(first, { topic: 'watched from another tab', researchCalls: 3, tokenDelayMs: 30 });
  // No reload in the second tab: the run appears in its list and its calls advance there.
  await runInList(second, 'watched from another tab').click();
  const timeline = inspectorTimeline(second);
  // A follower draws the execution the leader runs as running (not as a grey "pending").
  await timeline.getByRole('list', { name: 'Executions' }).getByText('running', { exact: true }).first().waitFor();
  await inspectorCall(second, 'step research 1').getByText('done', { exact: true }).waitFor();
  await stepItem(second, 'research 1 of 3').getByText('done', { exact: true }).waitFor();
  await listedRun(second, 'watched from another tab').getByText('Waiting for a signal').waitFor();

  await expectStatus(first, 'Waiting for a signal');
  await runDetail(first).getByRole('button', { name: 'Approve', exact: true }).click();
  await listedRun(second, 'watched from another tab').getByText('Succeeded').waitFor();
  await expectStatus(second, 'Succeeded');
  // The run's ending deleted its history; this tab saw its calls reported and still shows them.
  await inspectorCall(second, 'step publish').getByText('done', { exact: true }).waitFor();
  await inspectorCall(second, 'signal approve').getByText('received', { exact: true }).waitFor();
  expect(await inspector(second).getByText(/Calls not kept/).count()).toBe(0);
  expect(browser.errors).toEqual([]);
});

demoTest.concurrent('the daily digest is scheduled: the page and the inspector (of a second tab too) show it with its next firing', async ({ browser, expect }) => {
  const page = await browser.open();
  expect(await connected(page)).toBe('leader');
  const item = page.getByRole('region', { name: 'Scheduled tasks' }).getByRole('listitem').filter({ hasText: 'Daily digest' });
  await item.getByText(/^every day at 08:00 \(.+\)$/).waitFor();
  await item.getByText(/^Next: .+ · last: not yet$/).waitFor();

  // The inspector lists it from the store (the follower's through the leader).
  const second = await browser.open();
  expect(await connected(second)).toBe('follower');
  for (const tab of [page, second]) {
    const row = inspector(tab).getByRole('region', { name: 'Schedules' }).getByRole('row').filter({ hasText: 'daily-digest' });
    await row.getByText('0 8 * * *', { exact: true }).waitFor();
    await row.getByText('workflow daily-digest@1', { exact: true }).waitFor();
    await row.getByRole('cell', { name: /\(in \d+ (s|min|h)/ }).waitFor();
    await row.getByRole('cell', { name: 'not yet' }).waitFor();
  }
  expect(browser.errors).toEqual([]);
});
