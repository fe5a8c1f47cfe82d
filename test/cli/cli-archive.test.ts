/**
 * `taquba export` / `taquba import` on two filesystem stores: a workflow function's run waiting
 * for a signal is handed off from store A to store B and finishes there with its completed step
 * not run again; store A answers that it moved; a second import changes nothing; a copy imports
 * under the id asked for; a damaged file is CORRUPT_DATA with a hint about the file.
 *
 * The stores are written in this process (path `app`) and closed before the CLI opens them.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/core/queue/index.js';
import { WorkflowReader, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { defineWorkflow } from '../../src/core/workflow/functions/define.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { waitFor } from '../support/wait.js';
import { cliHere, json } from './cli-harness.js';

const calls = { book: 0, pay: 0 };
const trip = defineWorkflow({
  name: 'trip',
  async run(ctx, to: string) {
    const booking = await ctx.step('book', () => (calls.book++, `booked ${to}`));
    const ok = await ctx.waitForSignal<string>('confirm', { timeoutMs: 3_600_000 });
    return ctx.step('pay', () => (calls.pay++, `${booking}, paid by ${ok.timedOut ? 'nobody' : ok.value}`));
  },
});

let dir: string;
let storeA: string;
let storeB: string;

/** Opens `root` as the app would, runs `use` with its runtime's worker going, and closes it. */
async function withApp<T>(root: string, use: (runtime: WorkflowRuntime) => Promise<T>): Promise<T> {
  const queue = await Queue.open(new FileSystemObjectStore({ root }), 'app', { logger: false });
  const runtime = new WorkflowRuntime(queue, new FileSystemObjectStore({ root }), { workflows: [trip] }, undefined, { logger: false, commandPollMs: null });
  const handle = runtime.spawn();
  try {
    return await use(runtime);
  } finally {
    await handle.shutdown();
    await queue.close();
  }
}

const waiting = (runtime: WorkflowRuntime, runId: string) =>
  waitFor(async () => ((await runtime.getRun(runId))?.state === 'waiting-for-signal' ? true : undefined), `${runId} to wait for its signal`, { timeoutMs: 15_000 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-cli-archive-'));
  storeA = join(dir, 'a');
  storeB = join(dir, 'b');
  await withApp(storeA, async (runtime) => {
    await runtime.start(trip, 'Lisbon', { runId: 'r1' });
    await runtime.start(trip, 'Oslo', { runId: 'r2' });
    await waiting(runtime, 'r1');
    await waiting(runtime, 'r2');
  });
  // Store B exists (its app ran once) and holds no run.
  await withApp(storeB, async () => undefined);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('taquba export / import (two filesystem stores)', () => {
  it('hands a run off from one store to the other, where it finishes with no step run again', async () => {
    const file = join(dir, 'r1.taquba-run');
    const exported = await cliHere(['--store', storeA, '--json', 'export', 'r1', '--out', file, '--hand-off', '--to', 'store-b']);
    expect(exported.code, exported.stderr).toBe(0);
    const doc = json(exported);
    expect(doc).toMatchObject({ command: 'export', queue: 'workflow-steps', runId: 'r1', file, archive: { runId: 'r1', handOff: true, to: 'store-b', kind: 'function', state: 'waiting-for-signal', step: 1 } });
    expect(doc.bytes).toBe((await readFile(file)).length);

    // Store A no longer runs it and says where it went.
    const reader = await WorkflowReader.open(new FileSystemObjectStore({ root: storeA }), 'app', { pollIntervalMs: null, logger: false });
    try {
      expect(await reader.getRun('r1')).toBeNull();
      expect(await reader.readStatus('r1', { includeFinished: true })).toEqual({ runId: 'r1', state: 'moved', currentStep: 1, movedTo: 'store-b' });
    } finally {
      await reader.close();
    }
    const runs = json(await cliHere(['--store', storeA, '--json', 'runs']));
    expect(runs.runs.map((r: { runId: string }) => r.runId)).toEqual(['r2']);

    const imported = await cliHere(['--store', storeB, 'import', file]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('run r1 imported from');
    const again = await cliHere(['--store', storeB, '--json', 'import', file]);
    expect(json(again)).toMatchObject({ command: 'import', runId: 'r1', newlyImported: false });

    const booked = calls.book;
    const result = await withApp(storeB, async (runtime) => {
      await waiting(runtime, 'r1');
      expect(await runtime.signal('r1', 'confirm', 'ann')).toBe('delivered');
      return (await runtime.result('r1', { timeoutMs: 15_000 })).result;
    });
    expect(new TextDecoder().decode(result!)).toContain('booked Lisbon, paid by ann');
    // `book` ran in store A before the move, not again in store B.
    expect([calls.book, calls.pay]).toEqual([booked, 1]);
  }, 60_000);

  it('exports a copy (the source keeps running it) and imports it under the id asked for', async () => {
    const file = join(dir, 'copy.taquba-run');
    const exported = await cliHere(['--store', storeA, 'export', 'r2', '--out', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain(', copy');
    const imported = await cliHere(['--store', storeB, '--json', 'import', file, '--run-id', 'r2-copy']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(json(imported)).toMatchObject({ runId: 'r2-copy', newlyImported: true, step: 1 });
    const runs = json(await cliHere(['--store', storeA, '--json', 'runs']));
    expect(runs.runs.map((r: { runId: string }) => r.runId)).toEqual(['r2']);
    const copied = json(await cliHere(['--store', storeB, '--json', 'runs']));
    expect(copied.runs.map((r: { runId: string }) => r.runId)).toEqual(['r2-copy']);
  }, 60_000);

  it('beside a live writer: copies, and refuses a hand-off (LOCKED)', async () => {
    const queue = await Queue.open(new FileSystemObjectStore({ root: storeA }), 'app', { logger: false });
    try {
      const copy = await cliHere(['--store', storeA, 'export', 'r2', '--out', join(dir, 'beside.taquba-run')]);
      expect(copy.code, copy.stderr).toBe(0);
      const handOff = await cliHere(['--store', storeA, 'export', 'r2', '--out', join(dir, 'refused.taquba-run'), '--hand-off']);
      expect(handOff.code).toBe(1);
      expect(handOff.stderr).toMatch(/^taquba: LOCKED: a hand-off changes the store, and a live writer holds it/);
    } finally {
      await queue.close();
    }
  }, 60_000);

  it('refuses a damaged file, naming the file', async () => {
    const good = await readFile(join(dir, 'copy.taquba-run'));
    const bad = join(dir, 'bad.taquba-run');
    await writeFile(bad, good.subarray(0, good.length - 5));
    const result = await cliHere(['--store', storeB, 'import', bad]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^taquba: CORRUPT_DATA: run archive is damaged\. problem=length mismatch .*file=.*bad\.taquba-run.*\(hint: the file is not an intact run archive/);
    const missing = await cliHere(['--store', storeA, 'export', 'nope', '--out', join(dir, 'nope')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');
  }, 60_000);
});
