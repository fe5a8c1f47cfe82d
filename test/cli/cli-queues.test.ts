/**
 * Issue #26: runs on a queue other than `workflow-steps` (a runtime's `queueName`). After
 * `npm run example:durable-approvals`, `taquba runs` said "no active runs" and `taquba run
 * refund-claim-4021` "never submitted" (the run is on queue `approvals`), and a mistyped
 * `--queue` listed nothing, silently. Now the run commands look on every queue of the store
 * unless `--queue` names one, which must exist (UNKNOWN_QUEUE, exit 2, naming the queues found).
 *
 * The store here is written in this process (two runtimes on one queue handle, run ids
 * interleaved across their queues, a dead step on each, a queue with plain jobs and no runs);
 * the example runs as a real child process, as a user runs it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { StepError, StepOutcome, type Step } from '../../src/core/workflow/index.js';
import { openTwoQueueWriter } from './two-queue-writer.js';
import { runScript } from '../support/run-script.js';
import { waitFor } from '../support/wait.js';
import { cli, cliHere, json, oneLine, plainEnv } from './cli-harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/durable-approvals.ts', import.meta.url));

/** Parked runs by queue: their ids interleave, so a listing over both queues must merge them. */
const PARKED = { 'workflow-steps': ['a-1', 'c-1', 'e-1'], approvals: ['b-1', 'd-1', 'f-1'] } as const;
const ALL_PARKED = [...PARKED['workflow-steps'], ...PARKED.approvals].sort();

let dir: string;
let root: string;
const at = (...args: string[]) => ['--store', root, ...args];

/** Each run parks on a signal, except `dead-*`, whose step fails permanently (a dead step; the run fails). */
async function step(s: Step): Promise<StepOutcome> {
  if (s.runId.startsWith('dead-')) throw StepError.permanent(`refused on ${s.runId}`);
  return StepOutcome.continueOnSignal(s.payload, `go:${s.runId}`, 3600_000);
}

async function writeStore(): Promise<void> {
  const { queue, runtimes, close } = await openTwoQueueWriter(root, step);
  for (const [name, ids] of Object.entries(PARKED)) for (const runId of ids) await runtimes[name as keyof typeof PARKED].submit({ runId, input: utf8(runId) });
  await runtimes['workflow-steps'].submit({ runId: 'dead-main', input: utf8('x') });
  await runtimes.approvals.submit({ runId: 'dead-approvals', input: utf8('x') });
  // A queue of plain jobs: a queue of the store that holds no runs.
  await queue.enqueue('side-jobs', utf8('not a run'));
  await waitFor(
    async () => {
      const parked = await Promise.all(Object.entries(PARKED).flatMap(([name, ids]) => ids.map((id) => runtimes[name as keyof typeof PARKED].getRun(id))));
      const dead = [...(await runtimes['workflow-steps'].listDeadSteps()), ...(await runtimes.approvals.listDeadSteps())];
      return parked.every((r) => r?.state === 'waiting-for-signal') && dead.length === 2;
    },
    'every parked run waiting for its signal and both dead steps listed',
    { timeoutMs: 30_000 },
  );
  await close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-cli-queues-'));
  root = join(dir, 'store');
  await writeStore();
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('taquba CLI over the queues of a store', () => {
  it('runs: without --queue, the active runs of every queue, merged in run-id order, each with its queue; --queue narrows to one', async () => {
    const [all, approvals] = await Promise.all([cliHere(at('runs', '--json')), cliHere(at('--queue', 'approvals', 'runs', '--json'))]);
    const doc = json(all);
    expect(doc.queue).toBeNull();
    const queueOf = (id: string) => ((PARKED.approvals as readonly string[]).includes(id) ? 'approvals' : 'workflow-steps');
    expect(doc.runs.map((r: any) => [r.runId, r.queue])).toEqual(ALL_PARKED.map((id) => [id, queueOf(id)]));
    expect(doc.nextCursor).toBeNull();
    const narrowed = json(approvals);
    expect(narrowed.queue).toBe('approvals');
    expect(narrowed.runs.map((r: any) => r.runId)).toEqual([...PARKED.approvals]);
    // The table says which queue each run is on when it shows several.
    const table = await cliHere(at('runs'));
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^RUN\s+QUEUE\s+STATE\s+STEP\s+WAITING FOR\s+ATTEMPTS\s+AGE$/);
    expect(rows.find((r) => r.startsWith('b-1'))).toMatch(/^b-1\s+approvals\s+waiting-for-signal\s+1\s+signal "go:b-1"/);
  });

  it.each([1, 2, 3, 4, 5])('runs: pages of --limit %i over both queues list every run once, in order', async (limit) => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const doc = json(await cliHere(at('runs', '--json', '--limit', String(limit), ...(after === null ? [] : ['--after', after]))));
      seen.push(...doc.runs.map((r: any) => r.runId));
      after = doc.nextCursor;
      if (after === null) break;
    }
    expect(after).toBeNull();
    expect(seen).toEqual(ALL_PARKED);
  });

  it('runs --status pages over both queues too', async () => {
    const first = json(await cliHere(at('runs', '--json', '--status', 'waiting-for-signal', '--limit', '4')));
    expect(first.runs.map((r: any) => r.runId)).toEqual(ALL_PARKED.slice(0, 4));
    const rest = json(await cliHere(at('runs', '--json', '--status', 'waiting-for-signal', '--limit', '4', '--after', first.nextCursor)));
    expect(rest.runs.map((r: any) => r.runId)).toEqual(ALL_PARKED.slice(4));
  });

  it('run <id>: found on the queue it is on, active or terminated; unknown ids name the queues looked at', async () => {
    const [active, ended, missing, human] = await Promise.all([
      cliHere(at('run', 'd-1', '--json')),
      cliHere(at('run', 'dead-approvals', '--json')),
      cliHere(at('run', 'nobody')),
      cliHere(at('run', 'd-1')),
    ]);
    expect(json(active)).toMatchObject({ queue: 'approvals', run: { runId: 'd-1', queue: 'approvals', status: 'active', state: 'waiting-for-signal' } });
    expect(json(ended)).toMatchObject({ queue: 'approvals', run: { queue: 'approvals', status: 'terminated', terminal: { status: 'failed', error: 'refused on dead-approvals' } } });
    expect(missing.code).toBe(1);
    expect(oneLine(missing)).toMatch(/^taquba: NOT_FOUND: no run with this id in the store\. runId="nobody" queues=approvals,side-jobs,workflow-steps /);
    expect(human.stdout.split('\n')[0]).toMatch(/^run d-1 {2}active · queue approvals · waiting-for-signal · step 1 · submitted /);
  });

  it('dead: the dead steps of every queue in job-id order, each with its queue, paged with --after', async () => {
    const doc = json(await cliHere(at('dead', '--json')));
    expect(doc.deadSteps.map((d: any) => [d.runId, d.queue]).sort()).toEqual([
      ['dead-approvals', 'approvals'],
      ['dead-main', 'workflow-steps'],
    ]);
    const ids = doc.deadSteps.map((d: any) => d.jobId as string);
    expect(ids).toEqual([...ids].sort());
    const first = json(await cliHere(at('dead', '--json', '--limit', '1')));
    const second = json(await cliHere(at('dead', '--json', '--limit', '1', '--after', first.nextAfter)));
    expect([...first.deadSteps, ...second.deadSteps].map((d: any) => d.jobId)).toEqual(ids);
  });

  it('an unknown --queue is a usage error naming it and the queues found, for every command that reads or acts on runs', async () => {
    for (const args of [['runs'], ['run', 'b-1'], ['dead'], ['cancel', 'b-1'], ['retry', 'nojob']]) {
      const r = await cliHere(at('--queue', 'aprovals', ...args));
      expect(r.code, args.join(' ')).toBe(2);
      expect(oneLine(r), args.join(' ')).toBe(
        'taquba: UNKNOWN_QUEUE: no queue of this name in the store. queue="aprovals" queues=approvals,side-jobs,workflow-steps (hint: leave out --queue to look on every queue of the store, or name one of those)',
      );
      expect(r.stdout).toBe('');
    }
    const asJson = await cliHere(at('--json', '--queue', 'aprovals', 'runs'));
    expect(JSON.parse(oneLine(asJson))).toMatchObject({ schema: 'taquba-cli/1', error: { code: 'UNKNOWN_QUEUE' } });
    // The environment variable is the same option (commander reads it from the process: a child process).
    const fromEnv = await cli(at('runs'), plainEnv({ TAQUBA_QUEUE: 'nope' }));
    expect(fromEnv.code).toBe(2);
    expect(oneLine(fromEnv)).toMatch(/^taquba: UNKNOWN_QUEUE: .*queue="nope"/);
  });

  it("cancel and retry act on the run's or the job's own queue without --queue", async () => {
    const dead = json(await cliHere(at('dead', '--json'))).deadSteps.find((d: any) => d.runId === 'dead-approvals');
    expect(json(await cliHere(at('cancel', 'f-1', '--json')))).toMatchObject({ command: 'cancel', queue: 'approvals', runId: 'f-1', cancelled: true });
    expect(json(await cliHere(at('retry', dead.jobId, '--json')))).toMatchObject({ command: 'retry', queue: 'approvals', jobId: dead.jobId, requeued: true });
    const runs = json(await cliHere(at('runs', '--json'))).runs.map((r: any) => r.runId);
    expect(runs).not.toContain('f-1');
    expect(runs).toContain('dead-approvals');
  });

  it("signal without --queue goes to the waiting run's queue (the runtime a live writer would answer with)", async () => {
    expect(json(await cliHere(at('signal', 'go:d-1', 'yes', '--json')))).toMatchObject({ command: 'signal', queue: 'approvals', outcome: 'delivered' });
    expect(json(await cliHere(at('signal', 'go:nobody', 'x', '--json')))).toMatchObject({ command: 'signal', queue: 'workflow-steps', outcome: 'buffered' });
  });
});

describe('after npm run example:durable-approvals (a run on queue approvals)', () => {
  it('taquba runs lists refund-claim-4021 and taquba run shows it waiting for its approval (child processes)', async () => {
    const store = join(dir, 'approvals-example');
    const example = await runScript(EXAMPLE, [], { env: { TAQUBA_DIR: store } });
    expect(example.code, example.stderr).toBe(0);
    expect(example.lines).toContain('run refund-claim-4021 is waiting for a decision on approval:refund-claim-4021 (the wait is stored; nothing needs to keep running)');
    const [runs, run] = await Promise.all([cli(['--store', store, 'runs']), cli(['--store', store, 'run', 'refund-claim-4021'])]);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/^refund-claim-4021\s+waiting-for-signal\s+3\s+signal "approval:refund-claim-4021"/m);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toMatch(/^run refund-claim-4021 {2}active · queue approvals · waiting-for-signal · step 3 /);
  }, 120_000);
});
