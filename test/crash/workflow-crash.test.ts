/**
 * Kills a child process running workflow steps on the filesystem store (SIGKILL at random moments,
 * several rounds), then lets a last child finish. Checks that every run completes with the right
 * result, that no step whose settlement committed before a kill runs again, and that no memoized
 * unit whose entry was stored is computed again.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { nodeScript } from '../support/node-script.js';

const child = fileURLToPath(new URL('./workflow-crash-worker.ts', import.meta.url));
const RUNS = 12;
const STEPS = 4;

interface Round {
  lines: string[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

function runChild(root: string, mode: 'submit' | 'work' | 'finish', kill?: { afterReadyMs?: number; onLine?: (line: string) => boolean }): Promise<Round> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(child), root, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    const guard = setTimeout(() => proc.kill('SIGKILL'), 90_000);
    proc.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        // Real time is the subject: the kill lands at a random point of the child's work.
        if (line === 'ready' && kill?.afterReadyMs !== undefined) setTimeout(() => proc.kill('SIGKILL'), kill.afterReadyMs);
        if (kill?.onLine?.(line)) proc.kill('SIGKILL');
      }
    });
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(guard);
      resolve({ lines, signal, code, stderr });
    });
  });
}

/** Steps whose settlement committed (their effect is stored), as `run step`. */
async function committedSteps(root: string): Promise<Set<string>> {
  const queue = await Queue.open(new FileSystemObjectStore({ root }), 'workflow', { logger: { warn: () => undefined } });
  const out = new Set<string>();
  let cursor: Uint8Array | undefined;
  for (;;) {
    const page = await queue.kvScan(utf8('app/done/'), { cursor, limit: 500 });
    for (const [k] of page.entries) out.add(fromUtf8(k).slice('app/done/'.length).replace('/', ' '));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  await queue.close();
  return out;
}

describe('workflow crash recovery (child process killed mid-run, filesystem store)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  it('resumes every run: committed steps are not redone and stored memo units are not recomputed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-workflow-crash-'));
    roots.push(root);
    const stored = new Set<string>();
    const violations: string[] = [];
    let committed = new Set<string>();
    const hits: string[] = [];
    /** Folds one round's lines (in order) into the checks. */
    const check = (r: Round): void => {
      for (const line of r.lines) {
        const [kind, run, step, x] = line.split(' ');
        const unit = `${run} ${step} ${x}`;
        if (kind === 'ran' && committed.has(`${run} ${step}`)) violations.push(`step re-run after its commit: ${line}`);
        if (kind === 'computing' && stored.has(unit)) violations.push(`stored unit computed again: ${line}`);
        if (kind === 'stored') stored.add(unit);
        if (kind === 'hit') hits.push(unit);
      }
    };
    // Round 0 submits every run and is killed at a known point, in the middle of a step (run-0
    // step 1, after two of its units were stored); rounds 1-3 are killed at random moments.
    for (let round = 0; round < 4; round++) {
      const r = await runChild(root, round === 0 ? 'submit' : 'work', round === 0 ? { onLine: (l) => l === 'stored run-0 1 1' } : { afterReadyMs: 100 + Math.floor(Math.random() * 500) });
      if (r.signal !== 'SIGKILL') throw new Error(`round ${round}: child exited on its own: code=${r.code} ${r.stderr}`);
      const submitted = r.lines.filter((l) => l.startsWith('submitted '));
      // Later rounds submit the runs still in flight again: every one is a duplicate.
      if (round === 0) expect(submitted.filter((l) => l.endsWith(' new'))).toHaveLength(RUNS);
      else expect(submitted.filter((l) => !l.endsWith(' dup'))).toEqual([]);
      check(r);
      if (process.env.TAQUBA_DEBUG_CRASH) console.log(`round ${round}: ${r.lines.filter((l) => l.startsWith('ran ')).length} step starts, ${r.lines.filter((l) => l.startsWith('hit ')).length} memo hits`);
      committed = await committedSteps(root);
    }
    const last = await runChild(root, 'finish');
    expect(last.code, last.stderr).toBe(0);
    expect(last.lines.at(-1)).toBe('all done');
    check(last);

    expect(violations).toEqual([]);
    // The step interrupted in round 0 found its two stored units in the memo on redelivery.
    expect(hits).toEqual(expect.arrayContaining(['run-0 1 0', 'run-0 1 1']));
    expect(committed.has('run-0 0')).toBe(true);

    const queue = await Queue.open(new FileSystemObjectStore({ root }), 'workflow', { logger: { warn: () => undefined } });
    for (let i = 0; i < RUNS; i++) {
      expect(fromUtf8((await queue.kvGet(utf8(`app/result/run-${i}`)))!), `run-${i}`).toBe(`run-${i}:${Array.from({ length: STEPS }, (_, n) => n).join('')}`);
      for (let step = 0; step < STEPS; step++) expect(await queue.kvGet(utf8(`app/done/run-${i}/${step}`))).toBeDefined();
      expect(await queue.kvGet(utf8(`workflow/runs/run-${i}`))).toBeUndefined();
    }
    expect(await queue.stats('workflow-steps')).toMatchObject({ pending: 0, claimed: 0, scheduled: 0, dead: 0 });
    await queue.close();
  }, 240_000);
});
