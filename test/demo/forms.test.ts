/**
 * The demo's forms and status line as a person meets them: validation messages that name the
 * fields by their labels, next to the form; endpoint fields only for an endpoint model, with a
 * confirmation on save; the page saying when it is offline and which tab executes; checkboxes
 * large enough to hit; on a phone-sized screen, the run a task starts in view.
 */
import { afterEach, beforeEach, expect, inject, test } from 'vitest';
import { connected, launchDemo, runDetail, startTask, tabRole, type DemoBrowser } from './demo-browser.js';

const url = inject('demoUrl');
let browser: DemoBrowser;

beforeEach(async () => {
  browser = await launchDemo(url);
});

afterEach(async () => {
  await browser.close();
});

test('a bad value is named by its label next to the form, and the field takes focus', async () => {
  const page = await browser.open();
  const form = page.getByRole('region', { name: 'New task' });
  await page.getByLabel('Research calls').fill('9');
  await page.getByRole('button', { name: 'Start task' }).click();
  await form.getByRole('alert').getByText('Research calls: enter a whole number from 1 to 6 (not 9).').waitFor();
  expect(await page.getByLabel('Research calls').evaluate((el) => el === document.activeElement && el.getAttribute('aria-invalid'))).toBe('true');
  expect(await page.getByText(/researchCalls/).count()).toBe(0);

  await page.getByLabel('Research calls').fill('2');
  await page.getByLabel('Topic').fill('');
  await page.getByRole('button', { name: 'Start task' }).click();
  await form.getByRole('alert').getByText('Topic: enter 1 to 120 characters.').waitFor();
  expect(await page.getByLabel('Research calls').getAttribute('aria-invalid')).toBeNull();

  // Checkboxes a finger or an unsteady hand can hit.
  const box = await page.getByLabel(/Model outage/).boundingBox();
  expect(box?.width).toBeGreaterThanOrEqual(20);
  expect(browser.errors).toEqual([]);
});

test('endpoint fields show only for an endpoint model, and saving says what was saved', async () => {
  const page = await browser.open();
  const model = page.getByRole('region', { name: 'Model', exact: true });
  expect(await model.getByLabel('Endpoint', { exact: true }).isVisible()).toBe(false);
  await model.getByLabel('Model source').selectOption('openai');
  await model.getByLabel('Endpoint', { exact: true }).waitFor();
  await model.getByRole('button', { name: 'Save model' }).click();
  await model.getByRole('alert').getByText(/^Endpoint: enter an http\(s\) URL/).waitFor();

  await model.getByLabel('Model source').selectOption('simulated');
  await model.getByLabel('Endpoint', { exact: true }).waitFor({ state: 'hidden' });
  await model.getByRole('button', { name: 'Save model' }).click();
  await model.getByRole('status').getByText(/^Saved: the simulated model/).waitFor();
  expect(browser.errors).toEqual([]);
});

test('the page says when it is offline and which tab executes the steps', async () => {
  const page = await browser.open();
  expect(await connected(page)).toBe('leader');
  await page.getByText('online', { exact: true }).waitFor();
  expect(await page.title()).toMatch(/^▶ Executing/);
  const other = await browser.open();
  expect(await connected(other)).toBe('follower');
  expect(await tabRole(other).textContent()).toMatch(/another tab executes the steps/);
  expect(await other.title()).not.toMatch(/Executing/);

  await browser.context.setOffline(true);
  await page.getByText('offline (runs carry on here)').waitFor();
  await browser.context.setOffline(false);
  await page.getByText('online', { exact: true }).waitFor();
  expect(browser.errors).toEqual([]);
});

test('on a 390 px wide screen the run panel follows the task form and comes into view when a task starts', async () => {
  const page = await browser.open();
  await page.setViewportSize({ width: 390, height: 844 });
  const form = page.getByRole('region', { name: 'New task' });
  const run = runDetail(page);
  // One column: the task form, then the run, then the inspector; the model settings last.
  const [formBox, runBox, modelBox] = await Promise.all([form.boundingBox(), run.boundingBox(), page.getByRole('region', { name: 'Model', exact: true }).boundingBox()]);
  expect(runBox!.y).toBeGreaterThan(formBox!.y);
  expect(modelBox!.y).toBeGreaterThan(runBox!.y);
  expect(runBox!.width).toBeLessThanOrEqual(390);

  await startTask(page, { topic: 'on a phone', researchCalls: 1 });
  await expect
    .poll(async () => {
      const box = await run.getByRole('heading', { name: 'Run', exact: true }).boundingBox();
      return box !== null && box.y >= 0 && box.y < 844 / 2;
    }, { timeout: 5_000 })
    .toBe(true);
  // Nothing is wider than the screen.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  expect(browser.errors).toEqual([]);
});
