/**
 * A workflow function killed with SIGKILL at every step boundary and inside every step: a 5-step
 * function on the filesystem store runs in a child process that stops at a chosen point and is
 * killed there; the next child resumes the same run (a replay from its history) and is killed at
 * the next point, and so on, until a last child finishes it. Checks that no step whose value the
 * workflow received runs again (only the step a kill interrupted does), that every step ran with
 * the one `ctx.uuid()` the run kept, and that the result is the uninterrupted run's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/core/queue/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { runScript, type ScriptRun } from '../support/run-script.js';

const child = fileURLToPath(new URL('./workflow-fn-crash-worker.ts', import.meta.url));
const STEPS = [1, 2, 3, 4, 5];
/** The kill points in the order one run passes them. */
const POINTS = [...STEPS.flatMap((k) => [`before s${k}`, `inside s${k}`]), 'before end'];

function killedAt(root: string, point: string): Promise<ScriptRun> {
  return runScript(child, [root, point], { signal: { on: (line) => line === `at ${point}`, with: 'SIGKILL' }, timeoutMs: 60_000 });
}

describe('workflow function crash recovery (child process killed at every step boundary and inside every step, filesystem store)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  it('no step whose value the workflow received runs again; the interrupted step runs once more; the result is the uninterrupted one', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-fn-crash-'));
    roots.push(root);
    const ran = new Map<string, number>();
    const done = new Set<string>();
    const keys = new Set<string>();
    const violations: string[] = [];
    const fold = (r: ScriptRun): void => {
      for (const line of r.lines) {
        const [kind, step, key] = line.split(' ');
        if (kind === 'ran') {
          if (done.has(step!)) violations.push(`${step} ran again after the workflow received its value`);
          ran.set(step!, (ran.get(step!) ?? 0) + 1);
          keys.add(key!);
        }
        if (kind === 'done') done.add(step!);
      }
    };
    for (const [i, point] of POINTS.entries()) {
      const r = await killedAt(root, point);
      expect(r.signal, `${point}: ${r.stderr}`).toBe('SIGKILL');
      expect(r.signalled, `${point}: the child never reached the point. ${r.lines.join(' | ')} ${r.stderr}`).toBe(true);
      expect(r.lines[0]).toBe(i === 0 ? 'started new' : 'started dup');
      fold(r);
      // Killed before its step began: nothing of it ran; killed inside: it began once in this child.
      const [where, step] = point.split(' ');
      if (step !== 'end') expect(r.lines.filter((l) => l.startsWith(`ran ${step} `)), point).toHaveLength(where === 'inside' ? 1 : 0);
    }
    const last = await runScript(child, [root], { timeoutMs: 60_000 });
    expect(last.code, last.stderr).toBe(0);
    fold(last);
    const result = last.lines.find((l) => l.startsWith('result '));
    expect(result, last.lines.join(' | ')).toBeDefined();
    const out = JSON.parse(result!.slice('result '.length)) as { trail: string; sum: number; key: string };

    expect(violations).toEqual([]);
    // Each step was interrupted once (killed inside it) and completed once (in the next child).
    expect(Object.fromEntries(ran)).toEqual({ s1: 2, s2: 2, s3: 2, s4: 2, s5: 2 });
    expect(out).toEqual({ trail: 'in>1>2>3>4>5', sum: 55, key: out.key });
    expect([...keys]).toEqual([out.key]);

    // The run ended cleanly: no history, no job left.
    const queue = await Queue.open(new FileSystemObjectStore({ root }), 'fn-crash', { logger: { warn: () => undefined } });
    expect((await queue.kvScan(new TextEncoder().encode('workflow/fn/'))).entries).toEqual([]);
    expect(await queue.stats('workflow-steps')).toMatchObject({ pending: 0, claimed: 0, scheduled: 0, dead: 0 });
    await queue.close();
  }, 240_000);
});
