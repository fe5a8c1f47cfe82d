/**
 * `taquba run <id>` on runs of workflow functions (issue #27, item 5): the run is shown by its
 * `ctx` calls, by name, from its history (`RunTimeline.workflowFunction`): steps with their
 * values or failures (and the attempts a step retried), the signal it waits for and until when, the sleep it sleeps, values drawn
 * with `ctx.now()`; its underlying steps as executions. A finished function run keeps no history:
 * its workflow (from its kept step jobs), executions and outcome (the value decoded) are shown.
 *
 * The store is written in this process (fs store, path `app`) and closed before the CLI reads it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/core/queue/index.js';
import { WorkflowRuntime } from '../../src/core/workflow/index.js';
import { defineWorkflow } from '../../src/core/workflow/functions/define.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { waitFor } from '../support/wait.js';
import { cliHere, json } from './cli-harness.js';

const HOUR = 3600_000;

const review = defineWorkflow({
  name: 'review',
  async run(ctx, topic: string) {
    const research = await ctx.step('research', () => ({ notes: [`about ${topic}`], score: 3 }));
    try {
      await ctx.step('flaky', () => {
        throw new Error('boom');
      }, { retries: 0 });
    } catch {
      // Compensated: the run goes on.
    }
    const decidedAt = ctx.now();
    const decision = await ctx.waitForSignal<{ ok: boolean }>('approve', { timeoutMs: HOUR });
    return { topic, notes: research.notes, approved: !decision.timedOut && decision.value.ok, decidedAt };
  },
});

const nap = defineWorkflow({
  name: 'nap',
  version: 2,
  async run(ctx) {
    await ctx.step(
      'fetch',
      ({ attempt }) => {
        if (attempt === 1) throw new Error('timeout');
        return 'page';
      },
      { backoff: { initialMs: 0 } },
    );
    await ctx.sleep(HOUR);
    return 'rested';
  },
});

let dir: string;
let root: string;
const at = (...args: string[]) => ['--store', root, ...args];

async function writeStore(): Promise<void> {
  const store = new FileSystemObjectStore({ root });
  // Kept done jobs name the workflow of a run that ended (its history is deleted with its ending).
  const queue = await Queue.open(store, 'app', { logger: false, queueConfigs: { 'workflow-steps': { keepDoneMs: HOUR } } });
  const runtime = new WorkflowRuntime(queue, store, { workflows: [review, nap] }, undefined, { logger: false });
  const worker = runtime.spawn();
  await runtime.start(review, 'cats', { runId: 'fn-wait' });
  await runtime.start(nap, undefined, { runId: 'fn-sleep' });
  const done = await runtime.start(review, 'dogs', { runId: 'fn-done' });
  await waitFor(async () => (await Promise.all(['fn-wait', 'fn-done'].map((id) => runtime.getRun(id)))).every((r) => r?.state === 'waiting-for-signal'), 'both reviews waiting', { timeoutMs: 20_000 });
  await waitFor(async () => (await runtime.getRun('fn-sleep'))?.state === 'scheduled', 'the nap sleeping', { timeoutMs: 20_000 });
  await runtime.signal('fn-done', 'approve', { ok: true });
  expect(await done.result()).toMatchObject({ topic: 'dogs', approved: true });
  await worker.shutdown();
  await queue.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-cli-fn-'));
  root = join(dir, 'store');
  await writeStore();
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('taquba run <id> on a workflow function', () => {
  it('shows the calls by name: step values, a failed step, a drawn value, the signal it waits for and until when', async () => {
    const { code, stdout } = await cliHere(at('run', 'fn-wait'));
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^run fn-wait {2}active · queue workflow-steps · waiting-for-signal · execution 1 · submitted /);
    const from = lines.indexOf('workflow review@1');
    expect(from).toBeGreaterThan(0);
    expect(lines.slice(from + 1, from + 5)).toEqual([
      '  step research: done → {"notes":["about cats"],"score":3}',
      '  step flaky: failed after 1 attempt: Error: boom',
      expect.stringMatching(/^ {2}now → \d{13}$/),
      expect.stringMatching(/^ {2}waiting for signal approve until \d{4}-\d\d-\d\dT[\d:.]+Z \(in (59|60) min\)$/),
    ]);
    // The underlying steps are executions, not the workflow's steps; no bare correlation key.
    expect(stdout).toMatch(/^execution 1 {2}waiting-for-signal$/m);
    expect(stdout).not.toMatch(/^step \d/m);
    expect(stdout).not.toContain('fn-wait#approve');
  });

  it('shows the sleep a run sleeps, with its end, and the attempts a step retried', async () => {
    const { stdout } = await cliHere(at('run', 'fn-sleep'));
    expect(stdout).toContain('workflow nap@2\n  step fetch: done after 2 attempts → "page"; attempt 1 failed: Error: timeout\n');
    expect(stdout).toMatch(/\n {2}sleeping until \d{4}-\d\d-\d\dT[\d:.]+Z \(in (59|60) min\)\n/);
  });

  it('--json: workflowFunction with each call: kind, name, status, the value as JSON and as bytes, until, error', async () => {
    const run = json(await cliHere(at('run', 'fn-wait', '--json'))).run;
    const fn = run.workflowFunction;
    expect(fn).toMatchObject({ name: 'review', version: 1 });
    expect(fn.calls.map((c: any) => [c.position, c.kind, c.name, c.status])).toEqual([
      [0, 'step', 'research', 'done'],
      [1, 'step', 'flaky', 'failed'],
      [2, 'now', '', 'done'],
      [3, 'wait', 'approve', 'waiting'],
    ]);
    expect(fn.calls[0]).toMatchObject({ value: { notes: ['about cats'], score: 3 }, valueBytes: { size: expect.any(Number), base64: expect.any(String) }, untilMs: null, error: null });
    expect(fn.calls[1]).toMatchObject({ value: null, valueBytes: null, error: 'Error: boom', attempts: 1 });
    expect(fn.calls[2].value).toBeGreaterThan(1_700_000_000_000);
    expect(fn.calls[3].untilMs).toBeGreaterThan(Date.now() + HOUR - 10 * 60_000);
    const napCalls = json(await cliHere(at('run', 'fn-sleep', '--json'))).run.workflowFunction.calls;
    expect(napCalls.map((c: any) => c.status)).toEqual(['done', 'sleeping']);
    expect(napCalls[0]).toMatchObject({ attempts: 2, retried: [{ attempt: 1, error: 'Error: timeout', atMs: expect.any(Number) }] });
  });

  it('a finished function run: its workflow (its history went with its ending), executions and the decoded result', async () => {
    const { stdout } = await cliHere(at('run', 'fn-done'));
    expect(stdout).toContain('workflow review@1\n  calls not kept (a run deletes its history when it ends)');
    expect(stdout).toMatch(/^outcome: succeeded at execution 1 result \{"topic":"dogs","notes":\["about dogs"\],"approved":true,"decidedAt":\d+\}$/m);
    expect(json(await cliHere(at('run', 'fn-done', '--json'))).run.workflowFunction).toEqual({ name: 'review', version: 1, calls: [] });
  });
});
