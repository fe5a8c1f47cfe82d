/**
 * The `taquba` CLI as a child process against a filesystem store that a live writer (another
 * child process, test/cli/live-writer.ts) keeps changing: the read views beside the writer, the
 * `--json` schema, colour switches, `watch`, write operations through the live writer's command inbox while the writer
 * holds the store and applied once it stopped.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliHere, cliProcess, json, oneLine, plainEnv, startWriter } from './cli-harness.js';
import { waitFor } from '../support/wait.js';

const RUN_KEYS = ['attempts', 'currentStep', 'headers', 'interruptions', 'jobId', 'lastError', 'maxAttempts', 'queue', 'runId', 'state', 'submittedAtMs', 'waitingFor'];
const DOC_KEYS = ['command', 'nowMs', 'path', 'queue', 'schema', 'store'];
const ESC = '\u001b[';

let root: string;
let writer: Awaited<ReturnType<typeof startWriter>>;
const at = (...args: string[]) => ['--store', root, ...args];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'taquba-cli-'));
  writer = await startWriter(['fs', root]);
}, 120_000);

afterAll(async () => {
  await writer?.stop();
  await rm(root, { recursive: true, force: true });
}, 60_000);

describe('taquba CLI beside a live writer (filesystem store)', () => {
  it('lists the active runs with state, step, what they wait for and attempts, in the documented schema', async () => {
    const doc = json(await cli(at('runs', '--json')));
    expect(Object.keys(doc).sort()).toEqual([...DOC_KEYS, 'nextCursor', 'runs'].sort());
    // No --queue: every queue of the store was looked at (queue null); each run names its own.
    expect([doc.schema, doc.command, doc.path, doc.queue]).toEqual(['taquba-cli/1', 'runs', 'app', null]);
    const byId = new Map<string, any>(doc.runs.map((r: any) => [r.runId, r]));
    for (const run of doc.runs) expect(Object.keys(run).sort()).toEqual(RUN_KEYS);
    // Terminated runs (done-1 succeeded, broken-1 failed) are not active.
    expect([...byId.keys()].sort()).toEqual(['approval-1', 'ticker', 'timer-1']);
    const approval = byId.get('approval-1');
    expect(approval).toMatchObject({ queue: 'workflow-steps', state: 'waiting-for-signal', currentStep: 1, attempts: 0, maxAttempts: 2, headers: { team: 'cli-tests' } });
    expect(approval.waitingFor).toMatchObject({ type: 'signal', correlationKey: 'approve:approval-1' });
    expect(approval.waitingFor.timeoutAtMs).toBeGreaterThan(doc.nowMs + 3000_000);
    expect(byId.get('timer-1')).toMatchObject({ state: 'scheduled', currentStep: 1, waitingFor: { type: 'timer', reason: 'delay' } });
    expect(doc.nextCursor).toBeNull();
  }, 60_000);

  it('filters by status and pages with --limit / --after', async () => {
    const [waiting, first] = await Promise.all([cliHere(at('runs', '--json', '--status', 'waiting-for-signal')), cliHere(at('runs', '--json', '--limit', '1'))]);
    expect(json(waiting).runs.map((r: any) => r.runId)).toEqual(['approval-1']);
    const page1 = json(first);
    expect(page1.runs.map((r: any) => r.runId)).toEqual(['approval-1']);
    expect(typeof page1.nextCursor).toBe('string');
    const page2 = json(await cliHere(at('runs', '--json', '--limit', '5', '--after', page1.nextCursor)));
    expect(page2.runs.map((r: any) => r.runId)).toEqual(['ticker', 'timer-1']);
  }, 60_000);

  it('sees the writer change the store between two reads', async () => {
    const step = async () => json(await cliHere(at('runs', '--json', '--status', 'scheduled,pending,running'))).runs.find((r: any) => r.runId === 'ticker')?.currentStep as number;
    const before = await step();
    // In-process reads take milliseconds: read again until the writer's ticker has moved on.
    const after = await waitFor(async () => {
      const now = await step();
      return now > before ? now : undefined;
    }, `the ticker run past step ${before}`, { timeoutMs: 30_000, intervalMs: 20 });
    expect(after).toBeGreaterThan(before);
  }, 120_000);

  it("shows a run's timeline: tries, signal wait, memo entries, KV effects, headers", async () => {
    const doc = json(await cliHere(at('run', 'approval-1', '--json')));
    const run = doc.run;
    expect(Object.keys(run).sort()).toEqual(
      ['currentStep', 'headers', 'queue', 'runId', 'runMemo', 'state', 'status', 'steps', 'submittedAtMs', 'terminal', 'terminatedAtMs', 'truncated', 'waitingFor', 'workflowFunction'].sort(),
    );
    expect(doc.queue).toBe('workflow-steps');
    expect(run).toMatchObject({ runId: 'approval-1', queue: 'workflow-steps', status: 'active', state: 'waiting-for-signal', currentStep: 1, headers: { team: 'cli-tests' }, terminal: null });
    // A StepRunner run: no workflow function to name.
    expect(run.workflowFunction).toBeNull();
    const [step0, step1] = run.steps;
    expect(step0.jobs).toHaveLength(1);
    expect(step0.jobs[0]).toMatchObject({ status: 'done', attempts: 1 });
    expect(step0.jobs[0].tries).toEqual([expect.objectContaining({ attempt: 1, outcome: 'completed', error: null })]);
    expect(step0.jobs[0].tries[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(step0.outcome).toMatchObject({ type: 'continue', next: { type: 'signal', correlationKey: 'approve:approval-1', timeoutMs: 3600_000 } });
    expect(step0.outcome.kvWrites).toEqual([{ key: expect.objectContaining({ text: 'drafts/approval-1' }), value: expect.objectContaining({ text: 'draft of approval-1' }) }]);
    expect(step0.memo).toHaveLength(1);
    expect(step0.memo[0].keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(step1.signal).toEqual({ correlationKey: 'approve:approval-1', arrival: 'waiting', arrivedAtMs: null, payload: null });
    expect(step1.jobs[0]).toMatchObject({ status: 'scheduled' });
  }, 60_000);

  it('shows the terminal outcome of finished runs and the dead step with its last error', async () => {
    const [done, broken, dead, queues] = await Promise.all([cliHere(at('run', 'done-1', '--json')), cliHere(at('run', 'broken-1', '--json')), cliHere(at('dead', '--json')), cliHere(at('queues', '--json'))]);
    expect(json(done).run).toMatchObject({ status: 'terminated', terminal: { status: 'succeeded', finalStep: 1, source: 'notification', result: { text: 'finished' } } });
    expect(json(broken).run.terminal).toMatchObject({ status: 'failed', error: 'model endpoint refused: 503' });
    expect(json(broken).run.steps[0].jobs[0].tries.map((t: any) => t.outcome)).toEqual(['retried', 'dead_lettered']);
    const deadDoc = json(dead);
    expect(deadDoc.deadSteps).toEqual([
      expect.objectContaining({ runId: 'broken-1', step: 0, notification: false, attempts: 2, lastError: 'model endpoint refused: 503', payloadError: null }),
      expect.objectContaining({ runId: 'hookfail-1', step: null, notification: true, lastError: 'webhook receiver down' }),
    ]);
    expect(deadDoc.nextAfter).toBeNull();
    const q = json(queues);
    expect(q.queues).toEqual([expect.objectContaining({ queue: 'workflow-steps', dead: 2 })]);
    expect(q.queues[0].scheduled).toBeGreaterThanOrEqual(2);
    expect(q.writer.heartbeat).toMatchObject({ closed: false });
  }, 60_000);

  it('prints aligned tables with relative times, coloured only when asked (FORCE_COLOR) and never under NO_COLOR', async () => {
    const [plain, noColor, forced] = await Promise.all([
      cliHere(at('runs')),
      cliHere(at('runs'), plainEnv({ NO_COLOR: '1' })),
      cliHere(at('run', 'approval-1'), plainEnv({ FORCE_COLOR: '1' })),
    ]);
    for (const r of [plain, noColor]) {
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain(ESC);
    }
    const [header, ...rows] = plain.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^RUN\s+STATE\s+STEP\s+WAITING FOR\s+ATTEMPTS\s+AGE$/);
    // AGE is relative: `now` within a second of the submission (the writer may have just started), else `N s ago`.
    expect(rows.find((r) => r.startsWith('approval-1'))).toMatch(/waiting-for-signal\s+1\s+signal "approve:approval-1" \(times out in (59|60) min\)\s+0\/2\s+(now|\d+ (s|min) ago)$/);
    // Columns line up: STATE starts at the same offset on every row.
    const stateAt = header.indexOf('STATE');
    for (const r of rows) expect(r[stateAt - 1]).toBe(' ');
    expect(forced.stdout).toContain(ESC);
    expect(forced.stdout).toContain('kv write "drafts/approval-1"');
  }, 60_000);

  it('watch follows the changes and stops cleanly on SIGINT', async () => {
    const watch = cliProcess(at('watch', '--json', '--interval', '100'));
    const snapshot = JSON.parse(await watch.waitForLine((l) => l.includes('"snapshot"')));
    expect(snapshot).toMatchObject({ schema: 'taquba-cli/1', command: 'watch', type: 'snapshot' });
    expect(snapshot.runs.map((r: any) => r.runId)).toContain('approval-1');
    const change = JSON.parse(await watch.waitForLine((l) => l.includes('"type":"run"') && l.includes('"ticker"')));
    expect(change).toMatchObject({ type: 'run', change: 'changed', run: { runId: 'ticker' } });
    watch.child.kill('SIGINT');
    expect(await watch.exited).toBe(0);
    expect(watch.stderr()).toBe('');
  }, 90_000);

  it('signal, cancel and retry beside the live writer go through its command inbox, answered with the real outcome', async () => {
    const [deadStep, deadNotification] = json(await cliHere(at('dead', '--json'))).deadSteps.map((d: any) => d.jobId as string);
    const signal = json(await cliHere(at('signal', 'approve:approval-1', 'approved by cli', '--json')));
    expect(signal).toMatchObject({ command: 'signal', correlationKey: 'approve:approval-1', outcome: 'delivered', via: 'live-writer' });
    expect(json(await cliHere(at('cancel', 'timer-1', '--json')))).toMatchObject({ command: 'cancel', runId: 'timer-1', cancelled: true, via: 'live-writer' });
    expect(json(await cliHere(at('retry', deadNotification, '--json')))).toMatchObject({ command: 'retry', jobId: deadNotification, requeued: true, kind: 'notification', via: 'live-writer' });
    // broken-1 failed with its dead step: retrying the step revives the run (active again, from that step).
    const revived = (await cliHere(at('retry', deadStep))).stdout;
    expect(revived).toMatch(/^job .* re-enqueued with fresh attempts: the run it failed is active again from this step/);
    // The live writer's worker ran what the commands changed: approval-1 finished with the signal.
    const approval = json(await cliHere(at('run', 'approval-1', '--json'))).run;
    expect(approval.steps[1].signal).toMatchObject({ arrival: 'woken', payload: { text: 'approved by cli' } });
    expect(json(await cliHere(at('runs', '--json'))).runs.map((r: any) => r.runId)).not.toContain('timer-1');
    // A second cancel finds no active run: one line, non-zero.
    const again = await cliHere(at('cancel', 'timer-1'));
    expect(again.code).toBe(1);
    expect(oneLine(again)).toMatch(/^taquba: NOT_FOUND: no active run to cancel/);
    // The same command id is the same command: answered from its record, nothing applied again.
    const first = json(await cliHere(at('signal', 'approve:nobody', 'x', '--command-id', 'cli-test-1', '--json')));
    const repeat = json(await cliHere(at('signal', 'approve:nobody', 'y', '--command-id', 'cli-test-1', '--json')));
    expect([first.outcome, repeat.outcome]).toEqual(['buffered', 'buffered']);
  }, 120_000);

  it('applies signal, cancel and retry as the writer once no process holds the store', async () => {
    await writer.stop();
    const signal = json(await cliHere(at('signal', 'approve:later', 'ok', '--json')));
    expect(signal).toMatchObject({ command: 'signal', correlationKey: 'approve:later', outcome: 'buffered', via: 'writer' });
    expect(json(await cliHere(at('cancel', 'ticker', '--json')))).toMatchObject({ command: 'cancel', runId: 'ticker', cancelled: true, via: 'writer' });
    const missing = await cliHere(at('retry', 'no-such-job'));
    expect(missing.code).toBe(1);
    expect(oneLine(missing)).toMatch(/^taquba: NOT_FOUND: no dead job with this id.*\(hint: list dead jobs with: taquba dead\)$/);
  }, 120_000);
});
