/**
 * Concurrency limits under kill -9 (flow/concurrency.ts): runs under two keys (`a` limit 1, `b`
 * limit 2) on the filesystem store, worked by a child process killed with SIGKILL while the first
 * runs hold their slots mid-step and the others wait; a second child finishes them. A side log
 * built from both children's lines holds each run active from its first step's start to its last
 * step's end (its slot is released by the ending that commits after that line): it never holds
 * more runs of a key than the limit, so the killed process's runs kept their slots across the
 * restart until they ended. Nothing is lost: every run succeeds once, waiting runs start in
 * submission order, and no flow record is left.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun } from '../support/run-script.js';
import { RUNS } from './flow-control-crash-runs.js';

const child = fileURLToPath(new URL('./flow-control-crash-worker.ts', import.meta.url));
const LIMITS: Record<string, number> = { a: 1, b: 2 };
const keyOf = (runId: string): string => RUNS.find((r) => r.runId === runId)!.key;

describe('flow control under kill -9 (filesystem store, real child processes)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  it('a killed holder keeps its slot until it resumes and ends; the limit is never exceeded; no waiting run is lost', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-flow-crash-'));
    roots.push(root);
    // Killed when b0 begins its second step: a0 and b0 (maybe b1) hold slots mid-run, the rest wait.
    const killed = await runScript(child, [root, 'submit'], { signal: { on: (line) => line === 'start b0 1 1', with: 'SIGKILL' }, timeoutMs: 60_000 });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(killed.signalled, killed.lines.join(' | ')).toBe(true);
    const finished: ScriptRun = await runScript(child, [root, 'finish'], { timeoutMs: 60_000 });
    expect(finished.code, finished.stderr).toBe(0);

    // The runs that had not started at the kill were still waiting after it.
    const startedBeforeKill = new Set(killed.lines.filter((l) => l.startsWith('start ')).map((l) => l.split(' ')[1]!));
    const waitingAfter = finished.lines.filter((l) => l.startsWith('waiting ')).map((l) => l.split(' ')[1]);
    expect(waitingAfter.length).toBeGreaterThan(0);
    expect(waitingAfter).toEqual(RUNS.map((r) => r.runId).filter((id) => !startedBeforeKill.has(id)));

    // The side log, across both processes.
    const active = new Map<string, Set<string>>(Object.keys(LIMITS).map((k) => [k, new Set<string>()]));
    const violations: string[] = [];
    const firstStarts: string[] = [];
    for (const line of [...killed.lines, ...finished.lines]) {
      const [kind, runId] = line.split(' ');
      if (kind === 'start') {
        const runs = active.get(keyOf(runId!))!;
        runs.add(runId!);
        if (runs.size > LIMITS[keyOf(runId!)]!) violations.push(`${line}: ${[...runs].join(',')} active under ${keyOf(runId!)}`);
        if (!firstStarts.includes(runId!)) firstStarts.push(runId!);
      }
      if (kind === 'end') active.get(keyOf(runId!))!.delete(runId!);
    }
    expect(violations).toEqual([]);
    // Each key's runs began in submission order.
    for (const key of Object.keys(LIMITS)) expect(firstStarts.filter((id) => keyOf(id) === key)).toEqual(RUNS.filter((r) => r.key === key).map((r) => r.runId));
    // Every run succeeded with its three steps; nothing of the keys is left.
    expect(finished.lines.filter((l) => l.startsWith('result '))).toEqual(RUNS.map((r) => `result ${r.runId} ${r.runId}:012`));
    expect(finished.lines).toContain('flow keys left 0');
  }, 180_000);
});
