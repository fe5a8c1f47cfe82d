/**
 * `ctx.invoke` killed with SIGKILL: a parent workflow invoking a 3-step child runs on the
 * filesystem store in a child process that is killed while the child's second step runs, then
 * (next process) once the child's run ended and its outcome went to the parent, then (next) once
 * the parent has the child's value; a last process finishes the run. Counts every step's runs in a
 * side file: no step whose value its workflow received runs again (only the interrupted one), the
 * child is not started again, the parent gets the child's value and completes once, and nothing is
 * left behind (history, jobs, buffered signals).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { runScript, type ScriptRun } from '../support/run-script.js';

const worker = fileURLToPath(new URL('./workflow-fn-invoke-crash-worker.ts', import.meta.url));
/** The kill points in the order the run passes them, one process each. */
const POINTS = ['inside c2', 'child ended', 'after invoke'];

describe('ctx.invoke crash recovery (child process killed while the child runs and after it ended, filesystem store)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  it('the parent gets the child value; no completed step of either runs again; the parent completes once', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-fn-invoke-crash-'));
    roots.push(root);
    const store = join(root, 'store');
    const sideFile = join(root, 'side.log');
    for (const [i, point] of POINTS.entries()) {
      const r: ScriptRun = await runScript(worker, [store, point, sideFile], { signal: { on: (line) => line === `at ${point}`, with: 'SIGKILL' }, timeoutMs: 60_000 });
      expect(r.signal, `${point}: ${r.stderr}`).toBe('SIGKILL');
      expect(r.signalled, `${point}: the process never reached the point. ${r.lines.join(' | ')} ${r.stderr}`).toBe(true);
      expect(r.lines[0]).toBe(i === 0 ? 'started new' : 'started dup');
    }
    const last = await runScript(worker, [store, 'none', sideFile], { timeoutMs: 60_000 });
    expect(last.code, last.stderr).toBe(0);
    const results = last.lines.filter((l) => l.startsWith('result '));
    expect(results, last.lines.join(' | ')).toEqual([`result ${JSON.stringify('in!>1>2>3>finished')}`]);

    const ran = new Map<string, number>();
    const done = new Set<string>();
    const violations: string[] = [];
    for (const line of (await readFile(sideFile, 'utf8')).split('\n').filter(Boolean)) {
      const [kind, step] = line.split(' ') as [string, string];
      if (kind === 'ran') {
        if (done.has(step)) violations.push(`${step} ran again after its workflow received its value`);
        ran.set(step, (ran.get(step) ?? 0) + 1);
      } else done.add(step);
    }
    expect(violations).toEqual([]);
    // c2 was interrupted once and completed in the next process; every other step ran once (a
    // second start of the child would have run c1 again).
    expect(Object.fromEntries(ran)).toEqual({ prepare: 1, c1: 1, c2: 2, c3: 1, finish: 1 });

    // Both runs ended cleanly: no history, no job, no signal left (the outcome sent again by the
    // redelivered notification was dropped with the parent's ending).
    const queue = await Queue.open(new FileSystemObjectStore({ root: store }), 'fn-invoke-crash', { logger: { warn: () => undefined } });
    expect((await queue.kvScan(utf8('workflow/fn/'))).entries).toEqual([]);
    expect((await queue.kvScan(utf8('workflow/signal-buf/'))).entries).toEqual([]);
    expect(await queue.stats('workflow-steps')).toMatchObject({ pending: 0, claimed: 0, scheduled: 0, dead: 0 });
    await queue.close();
  }, 240_000);
});
