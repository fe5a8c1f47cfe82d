/**
 * demo.resume: how fast the demo app picks a run up again after a reload, on its default store
 * (`idb`). The demo is built and served as `npm run demo` does (demo/scripts/serve.ts), opened
 * in headless Chromium with a persistent profile. REPEATS times: start a run whose research step
 * takes far longer than the measurement (a slow simulated model), wait until it runs, reload the
 * page, measure, cancel the run. Each reload kills the step mid-call; the new page's worker
 * takes the store's lock, opens the store, requeues the interrupted claim and runs it again.
 * (A new run each time: an interrupted delivery counts as an attempt, so reloading one step
 * ten times would exhaust its attempts.)
 *
 *   resume_ms_p50   median over the reloads of the time from navigation start to the page's
 *                   first step event (the `demo:first-step-event` performance mark the page sets
 *                   when the redelivered step's `step-started` event arrives)
 *   resume_ms_p90   the same, 90th percentile
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright';
import { buildDemo, serveDemo } from '../demo/scripts/serve.js';
import { CHROMIUM_ARGS, resolveChromium } from '../test/setup/chromium.js';
import { log, median, percentile, round, type BenchContext, type Benchmark } from './harness.js';

const REPEATS = 10;
const MARK = 'demo:first-step-event';

async function run(ctx: BenchContext): Promise<void> {
  await buildDemo();
  const server = await serveDemo();
  const profile = await mkdtemp(join(tmpdir(), 'taquba-bench-demo-'));
  const { executablePath } = await resolveChromium();
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: [...CHROMIUM_ARGS] });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(server.url);
    page.setDefaultTimeout(30_000);
    const detail = page.getByRole('region', { name: 'Run', exact: true });
    // The inspector's timeline of the selected run (Playwright's locators reach into its shadow DOM).
    const timeline = page.locator('taquba-inspector').getByRole('region', { name: 'Run timeline' });
    const samples: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      await page.locator('#tab-role').filter({ hasText: 'executes the steps' }).waitFor();
      // One research call at one word a second: far longer than a measurement.
      await page.getByLabel('Topic').fill(`resume benchmark ${i + 1}`);
      await page.getByLabel('Research calls').fill('1');
      await page.getByLabel('Model delay per word (ms)').fill('1000');
      await page.getByRole('button', { name: 'Start task' }).click();
      await timeline.getByText(/attempt 1 of \d+: running/).waitFor();
      await page.reload();
      const ms = await page.waitForFunction((mark) => performance.getEntriesByName(mark)[0]?.startTime, MARK);
      samples.push((await ms.jsonValue()) as number);
      log(`demo.resume: reload ${i + 1}: ${samples.at(-1)!.toFixed(1)} ms`);
      await timeline.getByText(/attempt \d+ of \d+: running/).waitFor();
      await detail.getByRole('button', { name: 'Cancel run' }).click();
      await detail.locator('.run-title').getByText('Cancelled').waitFor();
    }
    ctx.emit('resume_ms_p50', median(samples), 'ms', { repeats: REPEATS, p90: round(percentile(samples, 90)), min: round(Math.min(...samples)), max: round(Math.max(...samples)) });
  } finally {
    await context.close().catch(() => undefined);
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}

const benchmarks: Benchmark[] = [{ name: 'demo.resume', stores: ['idb'], run }];
export default benchmarks;
