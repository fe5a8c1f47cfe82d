/**
 * Runs every workflow example as a real process and checks what it prints, including the
 * kill-and-resume of crash_resume and the three decision paths of durable_approvals across
 * separate processes on one filesystem store per test. single_step runs through `node --import tsx`, as
 * `npm run example:*` runs them; the others from a bundle of the example (node-script.ts), which
 * starts without the loader's work.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun } from '../support/run-script.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

/** Runs an example; `killOn` sends `killWith` to it at the first line that matches. */
function runExample(name: string, args: string[], env: Record<string, string>, kill?: { on: (line: string) => boolean; with: NodeJS.Signals }, tsx = false): Promise<ScriptRun> {
  return runScript(join(examples, `${name}.ts`), args, { env, signal: kill, timeoutMs: 60_000, tsx });
}

const dirs: string[] = [];
async function tempStore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'taquba-workflow-example-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

// Each test runs its own processes on its own store (or a memory store), and much of their time
// is the examples' own waits (durable_approvals watches its queue for 2 s; a signal timeout must
// pass): they run side by side.
describe.concurrent('workflow examples', () => {
  // Alone, before the others: its Ctrl-C case needs the SIGINT to land within the last stage's
  // 0.6 s of work, which the CPU the other examples use beside it would make a race.
  it.sequential('crash_resume resumes after a kill: committed stages skipped, finished units served from the memo', async () => {
    const dir = await tempStore();
    const env = { TAQUBA_DIR: dir, CRASH_RESUME_UNIT_MS: '300' };
    const first = await runExample('crash-resume', [], env, { on: (l) => l.startsWith('[transform] unit 1: working'), with: 'SIGKILL' });
    expect(first.signal).toBe('SIGKILL');
    expect(first.lines).toContain('submitted run crash-resume-demo');
    expect(first.lines).toContain('[transform] unit 0: done, recorded in the memo');

    const second = await runExample('crash-resume', [], env);
    expect(second.code, second.stderr).toBe(0);
    const out = second.lines;
    expect(out.some((l) => l.startsWith('run crash-resume-demo is already in flight (job '))).toBe(true);
    expect(out.some((l) => l.startsWith('[fetch]'))).toBe(false);
    expect(out).toContain('[transform] stage 2 of 3 starts (again: interrupted 1 time(s) before, attempt 1)');
    expect(out).toContain('[transform] unit 0: already recorded in the memo, not re-executed');
    expect(out.some((l) => l.startsWith('[transform] unit 0: working'))).toBe(false);
    expect(out).toContain('[transform] unit 1: done, recorded in the memo');
    expect(out).toContain('[publish] unit 1: done, recorded in the memo');
    expect(out).toContain('run crash-resume-demo succeeded after 3 steps, result: fetch,transform,publish');

    // Ctrl-C (SIGINT) works the same way; a new run under the released id finds every unit memoized.
    const third = await runExample('crash-resume', [], env, { on: (l) => l.startsWith('[publish] stage 3'), with: 'SIGINT' });
    expect(third.code).toBe(130);
    expect(third.lines).toContain('submitted run crash-resume-demo');
    const fourth = await runExample('crash-resume', [], env);
    expect(fourth.code, fourth.stderr).toBe(0);
    expect(fourth.lines.some((l) => l.includes('working'))).toBe(false);
    expect(fourth.lines).toContain('run crash-resume-demo succeeded after 3 steps, result: fetch,transform,publish');
  }, 120_000);

  it('single_step prints one outcome line and exits', async () => {
    const run = await runExample('single-step', [], {}, undefined, true);
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines).toHaveLength(1);
    expect(run.lines[0]).toMatch(/^run [0-9A-Z]{26} -> succeeded: hello, world$/);
  }, 60_000);

  it('multi_step counts 0/5 to 5 in five steps and reports the trace header', async () => {
    const run = await runExample('multi-step', [], {});
    expect(run.code, run.stderr).toBe(0);
    const id = /^submitted run ([0-9A-Z]{26})$/.exec(run.lines[0])?.[1];
    expect(id).toBeDefined();
    expect(run.lines.slice(1)).toEqual([
      ...[0, 1, 2, 3, 4].map((n) => `step ${n} for run ${id}: ${n} -> ${n + 1} (target 5)`),
      `completion: run=${id} status=succeeded final_step=4 result="reached 5" trace=demo-trace`,
    ]);
  }, 60_000);

  it('kv_effects maintains the order status row through submission and both steps', async () => {
    const run = await runExample('kv-effects', [], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines).toEqual(['submitted: status = received', 'run terminated: succeeded', 'final: status = fulfilled', 'final: pending marker present = false']);
  }, 60_000);

  it('durable_approvals: waits and exits, then an approval in a later process finishes the run', async () => {
    const env = { TAQUBA_DIR: await tempStore() };
    const first = await runExample('durable-approvals', [], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.lines).toContain('[turn 2] proposing a refund of 75 EUR; awaiting approval');
    expect(first.lines.some((l) => l.includes('is waiting for a decision'))).toBe(true);
    const second = await runExample('durable-approvals', ['approve'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.lines).toEqual(['decision delivered to the waiting run: approve', 'issuing refund of 75 EUR', 'run refund-claim-4021 succeeded: refund of 75 EUR issued']);
  }, 60_000);

  it('durable_approvals: a decision sent before the first invocation is buffered and consumed at registration', async () => {
    const env = { TAQUBA_DIR: await tempStore() };
    const early = await runExample('durable-approvals', ['reject', 'duplicate', 'claim'], env);
    expect(early.lines[0]).toBe('decision buffered: no run is waiting on approval:refund-claim-4021.');
    const run = await runExample('durable-approvals', [], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines.at(-1)).toBe('run refund-claim-4021 succeeded: refund denied: duplicate claim');
    expect(run.lines.some((l) => l.includes('is waiting'))).toBe(false);
    const clear = await runExample('durable-approvals', ['clear'], env);
    expect(clear.lines).toEqual(['no buffered decision to discard']);
  }, 60_000);

  it('durable_approvals: a run that waited past its timeout escalates at the next plain invocation', async () => {
    const env = { TAQUBA_DIR: await tempStore(), APPROVAL_TIMEOUT_MS: '4000' };
    const started = Date.now();
    const first = await runExample('durable-approvals', [], env);
    expect(first.lines.some((l) => l.includes('is waiting for a decision'))).toBe(true);
    // Real time is the subject: the run's 4 s signal timeout (wall clock, stored) must pass between
    // two processes; the first one alone takes most of it (the example watches the queue for 2 s).
    const remaining = 4_500 - (Date.now() - started);
    if (remaining > 0) await new Promise((r) => setTimeout(r, remaining));
    const second = await runExample('durable-approvals', [], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.lines).toEqual(['run refund-claim-4021 already exists; resuming', 'run refund-claim-4021 succeeded: escalated: no decision inside the timeout']);
  }, 60_000);
});
