/**
 * Issue #25, part 2: `taquba runs --status succeeded,failed,cancelled` lists finished runs (their
 * records, kept for the writer's `outcomeRetentionMs`) over every queue of the store, merged in
 * run-id order (then queue: one id may have ended on several queues) and paged with --limit /
 * --after like the active listing. A --status mixing active and finished states is a USAGE error;
 * without --status the listing is of active runs only, as before.
 *
 * The store is written in this process: two runtimes (`workflow-steps`, `approvals`) on one queue
 * handle, run ids interleaved across their queues, each outcome on each queue, an id that ended
 * on both, and one parked (active) run on each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { StepOutcome, type Step } from '../../src/core/workflow/index.js';
import { openTwoQueueWriter } from './two-queue-writer.js';
import { cliHere, json, oneLine } from './cli-harness.js';
import { waitFor } from '../support/wait.js';

const FAIL_D = 'the ledger refused the refund:\n  account 4021 is closed, and the reversal window of thirty days has passed';

/** How each run ends, by the prefix of its id: `park-` and `xcan-` wait for a signal (`xcan-` is then cancelled from outside). */
async function step(s: Step): Promise<StepOutcome> {
  const id = s.runId;
  if (id.startsWith('ok-') || id === 'twin') return StepOutcome.succeed(utf8(`done ${id}`));
  if (id.startsWith('bin-')) return StepOutcome.succeed(Uint8Array.of(0, 159, 255));
  if (id === 'fail-d') return StepOutcome.fail(FAIL_D);
  if (id.startsWith('fail-')) return StepOutcome.fail(`broke ${id}`);
  if (id.startsWith('can-')) return StepOutcome.cancel('no longer needed');
  return StepOutcome.continueOnSignal(s.payload, `go:${id}`, 3600_000);
}

const ENDED = { 'workflow-steps': ['ok-a', 'fail-c', 'can-e', 'bin-g', 'twin'], approvals: ['ok-b', 'fail-d', 'ok-h', 'twin'] } as const;
const PARKED = { 'workflow-steps': ['park-1'], approvals: ['park-2', 'xcan-f'] } as const;

/** Every finished run as [runId, queue], in the listing's order: run id, then queue. */
const ALL: [string, string][] = [
  ['bin-g', 'workflow-steps'],
  ['can-e', 'workflow-steps'],
  ['fail-c', 'workflow-steps'],
  ['fail-d', 'approvals'],
  ['ok-a', 'workflow-steps'],
  ['ok-b', 'approvals'],
  ['ok-h', 'approvals'],
  ['twin', 'approvals'],
  ['twin', 'workflow-steps'],
  ['xcan-f', 'approvals'],
];
const TERMINAL = 'succeeded,failed,cancelled';

let dir: string;
let root: string;
let startedAtMs: number;
const at = (...args: string[]) => ['--store', root, ...args];
const pairs = (doc: Record<string, any>): [string, string][] => doc.runs.map((r: any) => [r.runId, r.queue]);

async function writeStore(): Promise<void> {
  const { runtimes, close } = await openTwoQueueWriter(root, step);
  const submit = (name: string, runId: string) => runtimes[name as keyof typeof runtimes].submit({ runId, input: utf8(runId), headers: { team: `team-${runId}` } });
  const ended = Object.entries(ENDED).flatMap(([name, list]) => list.map((runId) => ({ name, runId })));
  // The second `twin` only once the first ended: one engine has one run of an id at a time.
  const [secondTwin] = ended.splice(ended.map((e) => e.runId).lastIndexOf('twin'), 1);
  for (const { name, runId } of ended) await submit(name, runId);
  for (const [name, list] of Object.entries(PARKED)) for (const runId of list) await submit(name, runId);
  for (const { name, runId } of ended) await runtimes[name as keyof typeof runtimes].result(runId, { timeoutMs: 30_000 });
  await submit(secondTwin!.name, 'twin');
  await runtimes[secondTwin!.name as keyof typeof runtimes].result('twin', { timeoutMs: 30_000 });
  const parked = Object.entries(PARKED).flatMap(([name, list]) => list.map((runId) => ({ runtime: runtimes[name as keyof typeof runtimes], runId })));
  await waitFor(async () => (await Promise.all(parked.map((p) => p.runtime.getRun(p.runId)))).every((r) => r?.state === 'waiting-for-signal'), 'every parked run waiting for its signal', { timeoutMs: 30_000 });
  expect(await runtimes.approvals.cancel('xcan-f')).toBe(true);
  expect(await runtimes.approvals.result('xcan-f', { timeoutMs: 30_000 })).toMatchObject({ status: 'cancelled', error: null });
  await close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-cli-finished-'));
  root = join(dir, 'store');
  startedAtMs = Date.now();
  await writeStore();
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('taquba runs --status <finished states>', () => {
  it('lists the finished runs of every queue, merged in run-id order (then queue), each with its queue', async () => {
    const doc = json(await cliHere(at('runs', '--json', '--status', TERMINAL)));
    expect(doc).toMatchObject({ schema: 'taquba-cli/1', command: 'runs', path: 'app', queue: null, nextCursor: null });
    expect(pairs(doc)).toEqual(ALL);
    // One queue: its own finished runs only, and the document names it.
    const approvals = json(await cliHere(at('--queue', 'approvals', 'runs', '--json', '--status', TERMINAL)));
    expect(approvals.queue).toBe('approvals');
    expect(pairs(approvals)).toEqual(ALL.filter(([, q]) => q === 'approvals'));
  });

  it('takes any non-empty subset of the terminal states, comma-separated or repeated', async () => {
    const [failed, some, succeeded] = await Promise.all([
      cliHere(at('runs', '--json', '--status', 'failed')),
      cliHere(at('runs', '--json', '--status', 'cancelled', '--status', 'failed')),
      cliHere(at('--queue', 'approvals', 'runs', '--json', '--status', 'succeeded,succeeded')),
    ]);
    expect(pairs(json(failed))).toEqual([
      ['fail-c', 'workflow-steps'],
      ['fail-d', 'approvals'],
    ]);
    expect(json(some).runs.map((r: any) => [r.runId, r.status])).toEqual([
      ['can-e', 'cancelled'],
      ['fail-c', 'failed'],
      ['fail-d', 'failed'],
      ['xcan-f', 'cancelled'],
    ]);
    expect(json(succeeded).runs.map((r: any) => r.runId)).toEqual(['ok-b', 'ok-h', 'twin']);
  });

  it('--json rows: status, how and when it ended, the result as Bytes or the error, the queue', async () => {
    const doc = json(await cliHere(at('runs', '--json', '--status', TERMINAL)));
    const row = (id: string, queue: string) => doc.runs.find((r: any) => r.runId === id && r.queue === queue);
    const ok = row('ok-a', 'workflow-steps');
    expect(Object.keys(ok).sort()).toEqual(['attempts', 'endedAtMs', 'error', 'finalStep', 'headers', 'omitted', 'queue', 'result', 'resultSize', 'runId', 'status', 'submittedAtMs'].sort());
    expect(ok).toMatchObject({
      runId: 'ok-a',
      queue: 'workflow-steps',
      status: 'succeeded',
      finalStep: 0,
      attempts: 1,
      result: { size: 9, text: 'done ok-a', base64: Buffer.from('done ok-a').toString('base64') },
      resultSize: 9,
      error: null,
      headers: { team: 'team-ok-a' },
      omitted: [],
    });
    expect(ok.submittedAtMs).toBeGreaterThanOrEqual(startedAtMs);
    expect(ok.endedAtMs).toBeGreaterThanOrEqual(ok.submittedAtMs);
    expect(ok.endedAtMs).toBeLessThanOrEqual(doc.nowMs);
    expect(row('bin-g', 'workflow-steps').result).toEqual({ size: 3, text: null, base64: Buffer.from([0, 159, 255]).toString('base64') });
    expect(row('fail-d', 'approvals')).toMatchObject({ status: 'failed', finalStep: 0, result: null, resultSize: null, error: FAIL_D });
    expect(row('can-e', 'workflow-steps')).toMatchObject({ status: 'cancelled', result: null, error: 'no longer needed' });
    // Cancelled from outside while it waited at step 1: no error text.
    expect(row('xcan-f', 'approvals')).toMatchObject({ status: 'cancelled', finalStep: 1, result: null, error: null, headers: { team: 'team-xcan-f' } });
    // The same id ended on both queues: two rows, each with its own record.
    expect(row('twin', 'approvals')).toMatchObject({ status: 'succeeded', result: { text: 'done twin' } });
    expect(row('twin', 'workflow-steps')).toMatchObject({ status: 'succeeded', result: { text: 'done twin' } });
  });

  it.each([1, 2, 3])('pages of --limit %i over both queues list every finished run once, in order', async (limit) => {
    const seen: [string, string][] = [];
    let after: string | null = null;
    let pages = 0;
    for (; pages < 20; pages++) {
      const doc = json(await cliHere(at('runs', '--json', '--status', TERMINAL, '--limit', String(limit), ...(after === null ? [] : ['--after', after]))));
      expect(doc.runs.length).toBeLessThanOrEqual(limit);
      seen.push(...pairs(doc));
      after = doc.nextCursor;
      if (after === null) break;
    }
    expect(after).toBeNull();
    expect(seen).toEqual(ALL);
    // No empty page at the end: the last row's queue knows it has no more.
    expect(pages + 1).toBe(Math.ceil(ALL.length / limit));
  });

  it('pages of one state, and of one queue', async () => {
    const failedOrCancelled = ALL.filter(([id]) => /^(fail|can|xcan)-/.test(id));
    for (const args of [['--status', 'failed,cancelled'], ['--queue', 'approvals', '--status', TERMINAL]]) {
      const expected = args[0] === '--queue' ? ALL.filter(([, q]) => q === 'approvals') : failedOrCancelled;
      const queueArgs = args[0] === '--queue' ? args.slice(0, 2) : [];
      const statusArgs = args[0] === '--queue' ? args.slice(2) : args;
      const seen: [string, string][] = [];
      let after: string | null = null;
      for (let page = 0; page < 20; page++) {
        const doc = json(await cliHere(at(...queueArgs, 'runs', '--json', ...statusArgs, '--limit', '1', ...(after === null ? [] : ['--after', after]))));
        seen.push(...pairs(doc));
        after = doc.nextCursor;
        if (after === null) break;
      }
      expect(seen, args.join(' ')).toEqual(expected);
    }
  });

  it.each([1, 2])('a cursor of one queue goes on over every queue after its last row (--limit %i), repeating none', async (limit) => {
    const first = json(await cliHere(at('--queue', 'approvals', 'runs', '--json', '--status', TERMINAL, '--limit', '2')));
    expect(pairs(first)).toEqual([
      ['fail-d', 'approvals'],
      ['ok-b', 'approvals'],
    ]);
    const seen: [string, string][] = [];
    let after: string | null = first.nextCursor;
    for (let page = 0; page < 20 && after !== null; page++) {
      const doc = json(await cliHere(at('runs', '--json', '--status', TERMINAL, '--limit', String(limit), '--after', after)));
      seen.push(...pairs(doc));
      after = doc.nextCursor;
    }
    expect(seen).toEqual(ALL.slice(ALL.findIndex(([id]) => id === 'ok-b') + 1));
  });

  it('the table: run, queue (with several), state, when it ended, final step, result or error on one line', async () => {
    const out = await cliHere(at('runs', '--status', TERMINAL));
    expect(out.code, out.stderr).toBe(0);
    const [header, ...rows] = out.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^RUN\s+QUEUE\s+STATE\s+ENDED\s+STEP\s+RESULT \/ ERROR$/);
    expect(rows).toHaveLength(ALL.length);
    const ago = String.raw`(now|\d+ s ago)`;
    expect(rows[0]).toMatch(new RegExp(String.raw`^bin-g\s+workflow-steps\s+succeeded\s+${ago}\s+0\s+<3 bytes>$`));
    expect(rows.find((r) => r.startsWith('ok-a'))).toMatch(new RegExp(String.raw`^ok-a\s+workflow-steps\s+succeeded\s+${ago}\s+0\s+"done ok-a"$`));
    expect(rows.find((r) => r.startsWith('can-e'))).toMatch(new RegExp(String.raw`^can-e\s+workflow-steps\s+cancelled\s+${ago}\s+0\s+no longer needed$`));
    expect(rows.find((r) => r.startsWith('xcan-f'))).toMatch(new RegExp(String.raw`^xcan-f\s+approvals\s+cancelled\s+${ago}\s+1\s+external cancel$`));
    // A long error spanning lines: one line, cut.
    expect(rows.find((r) => r.startsWith('fail-d'))).toMatch(new RegExp(String.raw`^fail-d\s+approvals\s+failed\s+${ago}\s+0\s+the ledger refused the refund: account 4021 is closed, and t…$`));
    expect(rows.filter((r) => r.startsWith('twin')).map((r) => r.split(/\s+/)[1])).toEqual(['approvals', 'workflow-steps']);

    // One queue: no QUEUE column. A page short of the end says how to get the next one.
    const one = await cliHere(at('--queue', 'approvals', 'runs', '--status', 'succeeded', '--limit', '2'));
    const lines = one.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+STATE\s+ENDED\s+STEP\s+RESULT \/ ERROR$/);
    expect(lines.slice(1, 3).map((l) => l.split(/\s+/)[0])).toEqual(['ok-b', 'ok-h']);
    const more = lines[3]!.match(/^more runs: --status succeeded --after ([A-Za-z0-9_-]+)$/);
    expect(more, lines[3]).not.toBeNull();
    const next = await cliHere(at('--queue', 'approvals', 'runs', '--status', 'succeeded', '--after', more![1]!));
    expect(next.stdout.trimEnd().split('\n').slice(1)).toEqual([expect.stringMatching(/^twin\s+succeeded\s/)]);

    // Nothing left: the empty listing says what it looked for.
    expect(json(await cliHere(at('--queue', 'workflow-steps', 'runs', '--json', '--status', 'cancelled', '--after', more![1]!))).runs).toEqual([]);
    expect((await cliHere(at('--queue', 'workflow-steps', 'runs', '--status', 'cancelled', '--after', more![1]!))).stdout.trimEnd()).toBe('no finished runs (cancelled) kept');
  });

  it('a --status mixing active and finished states is a USAGE error naming the two groups', async () => {
    for (const status of [['running,failed'], ['dead', '--status', 'cancelled'], ['succeeded,waiting-for-signal,pending']]) {
      const r = await cliHere(at('runs', '--status', ...status));
      expect(r.code, status.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(oneLine(r)).toMatch(
        /^taquba: USAGE: --status mixes states of active runs \([a-z,-]+\) with states of finished runs \([a-z,]+\)\. status="[a-z,-]+" \(hint: a listing is of active runs or of finished runs, not both \(active runs: pending, scheduled, waiting-for-signal, waiting-for-slot, running, cancelling, dead; finished runs: succeeded, failed, cancelled\); list each with its own taquba runs\)$/,
      );
    }
    expect(oneLine(await cliHere(at('runs', '--status', 'running,failed')))).toContain('(running) with states of finished runs (failed). status="running,failed"');
    const asJson = await cliHere(at('--json', 'runs', '--status', 'pending,succeeded'));
    expect(asJson.code).toBe(2);
    expect(JSON.parse(oneLine(asJson))).toMatchObject({ schema: 'taquba-cli/1', error: { code: 'USAGE' } });
    // An unknown state names both groups.
    expect(oneLine(await cliHere(at('runs', '--status', 'done')))).toBe(
      'taquba: USAGE: unknown run state. status="done" (hint: one of pending, scheduled, waiting-for-signal, waiting-for-slot, running, cancelling, dead (active runs) or succeeded, failed, cancelled (finished runs))',
    );
  });

  it('a cursor pages only its own kind of listing: USAGE otherwise', async () => {
    const finished = json(await cliHere(at('runs', '--json', '--status', TERMINAL, '--limit', '1'))).nextCursor as string;
    const active = json(await cliHere(at('runs', '--json', '--limit', '1'))).nextCursor as string;
    const onActive = await cliHere(at('runs', '--after', finished));
    expect(onActive.code).toBe(2);
    expect(oneLine(onActive)).toMatch(/^taquba: USAGE: this cursor pages a listing of finished runs\. after=".+" \(hint: give the --status of finished states it was printed with again\)$/);
    const onFinished = await cliHere(at('runs', '--status', 'failed', '--after', active));
    expect(onFinished.code).toBe(2);
    expect(oneLine(onFinished)).toMatch(/^taquba: USAGE: not a cursor printed by taquba runs for finished runs\. after=".+" \(hint: pass the --after value a page of taquba runs --status <finished states> printed\)$/);
  });

  it('without --status (or with active states) the listing is of active runs only, as before', async () => {
    const doc = json(await cliHere(at('runs', '--json')));
    expect(doc.runs.map((r: any) => [r.runId, r.queue, r.state])).toEqual([
      ['park-1', 'workflow-steps', 'waiting-for-signal'],
      ['park-2', 'approvals', 'waiting-for-signal'],
    ]);
    expect(doc.runs[0]).not.toHaveProperty('status');
    expect(doc.runs[0]).not.toHaveProperty('endedAtMs');
    expect(json(await cliHere(at('runs', '--json', '--status', 'waiting-for-signal,dead'))).runs.map((r: any) => r.runId)).toEqual(['park-1', 'park-2']);
    const table = await cliHere(at('runs'));
    expect(table.stdout.split('\n')[0]).toMatch(/^RUN\s+QUEUE\s+STATE\s+STEP\s+WAITING FOR\s+ATTEMPTS\s+AGE$/);
    expect(table.stdout).not.toMatch(/ok-a|fail-c|twin/);
  });
});
