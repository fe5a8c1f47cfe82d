/**
 * A bulk batch across kill -9: a child drives a 60-item batch on the filesystem store and is
 * SIGKILLed mid-batch; a second child resubmits the same batch and finishes it. Its report
 * (counts, failed keys, per-phase and total cost) equals that of an uninterrupted run in another
 * directory, and no phase ran again once its memo was stored: a phase `write` that started
 * before the kill means `research` of that item was memoized, so `research` ran once; items
 * finished before the kill ran nothing after it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun } from '../support/run-script.js';

const child = fileURLToPath(new URL('./bulk-crash-worker.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const ITEMS = 60;

/** Runs the child; SIGKILLs it once `killAt(lines)` holds (if given). Resolves with its stdout lines and pid. */
async function runChild(root: string, counter: string, killAt?: (lines: readonly string[]) => boolean): Promise<ScriptRun> {
  const run = await runScript(child, [root, counter, String(ITEMS)], { signal: killAt && { on: (_line, lines) => killAt(lines), with: 'SIGKILL' } });
  const expected = run.signalled ? run.signal === 'SIGKILL' : run.code === 0;
  if (!expected) throw new Error(`child ended unexpectedly: code=${run.code} signal=${run.signal}\n${run.lines.join('\n')}\n${run.stderr}`);
  return run;
}

const reportOf = (lines: string[]) => JSON.parse(lines.find((l) => l.startsWith('report '))!.slice('report '.length));

describe('bulk batch across kill -9', () => {
  it('the resumed batch reports the same counts and cost as an uninterrupted one, and no phase ran twice past its memo', async () => {
    const crashed = await mkdtemp(join(tmpdir(), 'taquba-bulk-crash-'));
    const clean = await mkdtemp(join(tmpdir(), 'taquba-bulk-clean-'));
    dirs.push(crashed, clean);
    const counter = join(crashed, 'phases.log');

    const first = await runChild(crashed, counter, (ls) => ls.filter((l) => l.startsWith('item ')).length >= 15);
    expect(first.signalled).toBe(true);
    const finishedBeforeKill = new Set(first.lines.filter((l) => l.startsWith('item ')).map((l) => l.slice(5)));
    expect(finishedBeforeKill.size).toBeGreaterThanOrEqual(15);
    expect(finishedBeforeKill.size).toBeLessThan(ITEMS);

    const second = await runChild(crashed, counter);
    const resumed = reportOf(second.lines);
    const uninterrupted = reportOf((await runChild(clean, join(clean, 'phases.log'))).lines);

    expect(resumed).toEqual(uninterrupted);
    expect(resumed).toMatchObject({ outcome: 'completed', total: ITEMS, succeeded: ITEMS - 5, failed: 5, cancelled: 0 });
    // The resumed stream replays every item once, in the durable completion order.
    const streamed = second.lines.filter((l) => l.startsWith('item ')).map((l) => l.slice(5));
    expect(streamed).toHaveLength(ITEMS);
    expect(new Set(streamed).size).toBe(ITEMS);
    expect(streamed.slice(0, finishedBeforeKill.size).sort()).toEqual([...finishedBeforeKill].sort());

    const executions = (await readFile(counter, 'utf8')).trim().split('\n').map((l) => l.split(' ') as [string, string, string]);
    const runs = (key: string, phase: string, pid?: number) => executions.filter(([p, k, ph]) => k === key && ph === phase && (pid === undefined || Number(p) === pid)).length;
    for (let i = 0; i < ITEMS; i++) {
      const key = `doc-${String(i).padStart(3, '0')}`;
      if (finishedBeforeKill.has(key)) {
        expect([runs(key, 'research', second.pid), runs(key, 'write', second.pid)], key).toEqual([0, 0]);
      }
      // A write that started before the kill proves research was memoized: it never runs again.
      if (runs(key, 'write', first.pid) > 0) expect(runs(key, 'research'), key).toBe(1);
      expect(runs(key, 'research'), key).toBeGreaterThanOrEqual(1);
      expect(runs(key, 'research'), key).toBeLessThanOrEqual(2);
      expect(runs(key, 'write'), key).toBeLessThanOrEqual(2);
    }
    // Items in flight at the kill were few (six at a time), not the whole batch.
    const rerun = new Set(executions.filter(([p]) => Number(p) === second.pid).map(([, k]) => k));
    expect(rerun.size).toBeLessThanOrEqual(ITEMS - finishedBeforeKill.size);
  }, 180_000);
});
