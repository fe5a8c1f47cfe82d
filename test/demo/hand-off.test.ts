/**
 * The demo's "Continue on the server" (issue 30, item 5), end to end in real Chromium: without a
 * server the button is disabled and says how to start one; with the demo's Node backend
 * (demo/scripts/server.ts, what `npm run demo:server` runs, here on a temp store) named by
 * `?server=`, a task waiting for its approval moves there, the panel reads it from there, the
 * approval goes there, the server publishes the brief, and every step says where it ran.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, inject, test } from 'vitest';
import { startDemoServer } from '../../demo/scripts/server.js';
import { connected, expectStatus, launchDemo, runDetail, startTask, stepItem, type DemoBrowser } from './demo-browser.js';

const url = inject('demoUrl');
let browser: DemoBrowser;

beforeEach(async () => {
  browser = await launchDemo(url);
});

afterEach(async () => {
  await browser.close();
});

test('a task waiting for approval continues on the demo server: the server finishes it and each step says where it ran', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'taquba-demo-server-'));
  const server = await startDemoServer({ port: 0, dataDir: join(dir, 'data'), allowOrigins: '*' });
  try {
    const page = await browser.open();
    const detail = runDetail(page);
    const button = detail.getByRole('button', { name: 'Continue on the server' });
    await startTask(page, { topic: 'no server yet', researchCalls: 1 });
    await expectStatus(page, 'Waiting for a signal');
    expect(await button.isDisabled()).toBe(true);
    expect(await button.getAttribute('title')).toMatch(/npm run demo:server/);

    await page.goto(`${url}?server=${encodeURIComponent(server.url)}`);
    await connected(page);
    await startTask(page, { topic: 'moves to the server', researchCalls: 2 });
    await expectStatus(page, 'Waiting for a signal');
    await expect.poll(() => button.isEnabled(), { timeout: 20_000 }).toBe(true);
    await button.click();

    await detail.getByText(/^Continues on the server \(http:\/\/127\.0\.0\.1:\d+\) since step \d+/).waitFor();
    await stepItem(page, 'research 1 of 2').getByText(/ran in this browser/).waitFor();
    await detail.getByRole('button', { name: 'Approve', exact: true }).click();
    await expectStatus(page, 'Succeeded');
    await detail.getByText('Published brief').waitFor();
    await stepItem(page, 'publish').getByText(/ran on the server/).waitFor();
    expect(await stepItem(page, 'draft').textContent()).toMatch(/ran in this browser/);
    expect(browser.errors).toEqual([]);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
