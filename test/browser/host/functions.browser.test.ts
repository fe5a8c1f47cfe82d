/**
 * Workflow functions on the browser host (issue #27, item 5): the worker serves
 * `serveWorkflowRuntime({ workflows })`, the page imports the same definitions and starts them
 * with `client.start(workflow, input)`, follows the run's events (a `function-call` event per
 * `ctx` call), signals it with `client.signal(runId, name, value)` and reads the typed result,
 * decoded on the page. A worker terminated in the middle of a step (what a reload does to it)
 * loses only that step: a new worker replays the function, and the steps that finished do not
 * run again (counted on a log channel the steps report to); another tab's inspector shows the
 * cut-off attempt as interrupted, without a duration. Errors cross as typed errors with their
 * codes.
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { callValue, connect, fromWireError, toWireError, type RunEvent, type WorkflowClient } from '../../../src/browser/index.js';
import { utf8 } from '../../../src/core/bytes.js';
import { defineWorkflow, NonDeterminismError, RunFailedError, StepFailedError } from '../../../src/core/workflow/index.js';
import { defineTaqubaInspector, type TaqubaInspectorElement } from '../../../src/browser/inspector/index.js';
import { startHost, uniqueName, waitFor, type TestHost } from './harness.js';
import { doomed, flaky, review, type FnLogEntry } from './pages/fn-workflows.js';
import type { FnWorkerConfig } from './pages/fn-worker.js';

interface FnHost {
  readonly worker: Worker;
  readonly client: WorkflowClient;
  role(role: string): Promise<void>;
}

const workers: Worker[] = [];
const channels: BroadcastChannel[] = [];
const elements: HTMLElement[] = [];

afterEach(() => {
  for (const e of elements.splice(0)) e.remove();
  for (const w of workers.splice(0)) w.terminate();
  for (const c of channels.splice(0)) c.close();
});

function startFnHost(name: string, hostId: string, holdDraft = false): FnHost {
  const config: FnWorkerConfig = { store: 'indexeddb', name, hostId, holdDraft };
  const worker = new Worker(new URL('./pages/fn-worker.ts', import.meta.url), { type: 'module', name: JSON.stringify(config) });
  workers.push(worker);
  const client = connect(worker, { persist: false });
  return {
    worker,
    client,
    role: (role) => waitFor(async () => (await client.info()).role === role, `${hostId} to be ${role}`).then(() => undefined),
  };
}

/** An inspector on `client`, showing run `runId`; `text(part)` reads a part of it. */
function inspect(client: WorkflowClient, runId: string): { el: TaqubaInspectorElement; text: (part: string) => string } {
  defineTaqubaInspector();
  const el = document.createElement('taquba-inspector') as TaqubaInspectorElement;
  el.options = { pollMs: 100 };
  el.client = client;
  document.body.append(el);
  elements.push(el);
  el.selectRun(runId);
  return { el, text: (part) => el.shadowRoot!.querySelector(`[part~="${part}"]`)?.textContent ?? '' };
}

type CallEvent = Extract<RunEvent, { type: 'function-call' }>;

/** What the steps report on a fresh log channel. */
function stepLog(): { name: string; entries: FnLogEntry[] } {
  const name = uniqueName('fn-log');
  const entries: FnLogEntry[] = [];
  const channel = new BroadcastChannel(name);
  channel.onmessage = (ev) => entries.push(ev.data as FnLogEntry);
  channels.push(channel);
  return { name, entries };
}

describe('workflow functions on the browser host', () => {
  it('starts a function from the page, follows it, signals it and reads its typed result; a worker killed mid-step does not run a finished step again', async () => {
    const name = uniqueName('fn');
    const log = stepLog();
    const a = startFnHost(name, 'fa', true);
    await a.role('leader');
    expect((await a.client.info()).workflows).toEqual([
      { name: 'test.review', version: 2 },
      { name: 'test.doomed', version: 1 },
      { name: 'test.flaky', version: 1 },
    ]);
    // Another tab, whose inspector follows the run through the leader's events.
    const b = startFnHost(name, 'fb');
    await b.role('follower');
    const other = inspect(b.client, 'review-1');

    const seen: RunEvent[] = [];
    const run = await a.client.start(review, { topic: 'tides', log: log.name }, { runId: 'review-1', onEvent: (e) => seen.push(e) });
    expect(run).toMatchObject({ runId: 'review-1', newlySubmitted: true, workflow: { name: 'test.review', version: 2 } });
    await waitFor(() => log.entries.some((e) => e.type === 'fn-holding'), 'the draft step to hold');
    // Subscribed before the start was sent: the first execution's start was seen.
    expect(seen[0]).toMatchObject({ type: 'step-started', runId: 'review-1', stepNumber: 0, attempt: 1, interruptions: 0, executor: 'fa' });
    // The finished step's call, as it was recorded: its name, attempts and value.
    const research = await waitFor(() => seen.find((e): e is CallEvent => e.type === 'function-call' && e.call.name === 'research'), 'the call event of research');
    expect(research).toMatchObject({ executor: 'fa', stepNumber: 0, call: { position: 0, kind: 'step', status: 'done', attempts: 1, retried: [] } });
    expect(callValue(research.call)).toEqual({ notes: ['about tides'], found: new Map([['sources', 3]]), at: new Date(0) });
    expect(await run.status()).toMatchObject({ runId: 'review-1', state: 'running' });
    // Starting the same id and input again answers with the run already there.
    expect(await a.client.start(review, { topic: 'tides', log: log.name }, { runId: 'review-1' })).toMatchObject({ newlySubmitted: false });

    // The worker dies in the middle of `draft` (a reload); the other tab's takes the store over.
    a.worker.terminate();
    await b.role('leader');
    // The reloaded page re-attaches by id, typed by the same definition.
    const again = b.client.workflowRun(review, 'review-1');
    const events = again.events();
    await waitFor(async () => (await again.status())?.state === 'waiting-for-signal', 'the run to wait for approve');
    expect(await b.client.signal('review-1', 'approve', { approved: true, by: 'ann' })).toBe('delivered');

    const result = await again.result();
    expectTypeOf(result).toEqualTypeOf<{ draft: string; approvedBy: string; url: string; sources: number; at: Date }>();
    expect(result).toEqual({ draft: 'draft on tides from 1 note', approvedBy: 'ann', url: '/posts/review-1', sources: 3, at: new Date(0) });
    expect(await again.status()).toMatchObject({ state: 'succeeded' });

    // research ran once; draft twice (the first cut off with its worker); publish once.
    expect(log.entries.filter((e) => e.type === 'fn-step').map((e) => `${e.host}:${e.step}:${e.attempt}`)).toEqual(['fa:research:1', 'fa:draft:1', 'fb:draft:1', 'fb:publish:1']);
    // The run's events end with its terminal event.
    const types: string[] = [];
    for await (const e of events) {
      expect(e.runId).toBe('review-1');
      types.push(e.type);
    }
    expect(types.at(-1)).toBe('terminal');
    expect(types).toContain('step-finished');
    expect(types).toContain('function-call');

    // The other tab saw the first execution cut off: interrupted, with no duration (its end is unknown), then completed.
    const attempts = (): string[] => [...other.el.shadowRoot!.querySelectorAll('[aria-label="Attempts of step 1"] li')].map((li) => li.textContent ?? '');
    await waitFor(() => attempts().length === 2 && /: completed · /.test(attempts()[1]!), `execution 1 completed (shown: ${attempts().join(' | ')})`);
    expect(attempts()[0]).toMatch(/^attempt 1 of \d+: interrupted by a reload, crash or closed tab · started [^·]+$/);
    expect(attempts()[1]).toMatch(/^attempt 1 of \d+: completed · started .+ · took /);
    // The run ended and deleted its history: its calls are those the tab saw reported.
    await waitFor(
      () => other.text('detail').includes('As this page saw them (a run deletes its history when it ends).') && /step research.*done.*step draft.*done.*signal approve.*received.*step publish.*done/s.test(other.text('calls')),
      `the calls after the end (shown: ${other.text('detail')})`,
    );
  });

  it('start commits its kvWrites with the run, once: a duplicate start applies none', async () => {
    const a = startFnHost(uniqueName('fn-kv'), 'fk');
    await a.role('leader');
    const text = async (key: string): Promise<string> => new TextDecoder().decode((await a.client.kvGet(key)) ?? undefined);
    const input = { topic: 'kv', log: uniqueName('kv-log') };
    const run = await a.client.start(review, input, { runId: 'kv-2', kvWrites: [['notes/kv-2', utf8('one')]] });
    expect(run.newlySubmitted).toBe(true);
    expect(await text('notes/kv-2')).toBe('one');
    const same = await a.client.start(review, input, { runId: 'kv-2', kvWrites: [['notes/kv-2', utf8('two')]] });
    expect(same.newlySubmitted).toBe(false);
    const other = await a.client.start(review, { ...input, topic: 'other' }, { runId: 'kv-2', kvWrites: [['notes/kv-2', utf8('three')]] }).catch((e: unknown) => e);
    expect(other).toMatchObject({ code: 'INPUT_MISMATCH' });
    expect(await text('notes/kv-2')).toBe('one');
    expect(await run.cancel()).toBe(true);
  });

  it('a failed run rejects with RUN_FAILED on the page, its error naming the failed step', async () => {
    const a = startFnHost(uniqueName('fn-fail'), 'fa');
    await a.role('leader');
    const run = await a.client.start(doomed, undefined);
    const error = await run.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error).toMatchObject({ code: 'RUN_FAILED', runId: run.runId, status: 'failed', error: expect.stringMatching(/^STEP_FAILED: step "boom" failed after 1 attempt: Error: kaput/) });
    expect(await run.cancel()).toBe(false);
  });

  it('bad input gets typed errors: an unregistered workflow, a value the codec refuses, a bad signal, raw bytes to a functions worker', async () => {
    const a = startFnHost(uniqueName('fn-bad'), 'fa');
    await a.role('leader');
    const reason = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: string; details?: { reason?: string } }) => `${e.code}:${e.details?.reason}`);
    const other = defineWorkflow({ name: 'test.other', run: async () => 1 });
    const reviewV1 = defineWorkflow({ name: 'test.review', run: async () => 1 });
    expect(await reason(a.client.start(other, undefined))).toBe('INVALID_ARGUMENT:unknown_workflow');
    expect(await reason(a.client.start(reviewV1, undefined))).toBe('INVALID_ARGUMENT:unknown_workflow');
    expect(await reason(a.client.start({ name: 'x' } as never, undefined))).toBe('INVALID_ARGUMENT:unknown_workflow');
    expect(await reason(a.client.start(review, { topic: 'x', log: 'l', extra: () => 1 } as never))).toBe('INVALID_ARGUMENT:unstorable_input');
    expect(await reason(a.client.start(review, { topic: 'x', log: 'l' }, { runId: 'bad id' }))).toBe('INVALID_ARGUMENT:invalid_run_id');
    expect(await reason(a.client.signal('bad id', 'approve', true))).toBe('INVALID_ARGUMENT:invalid_run_id');
    expect(await reason(a.client.signal('r1', '', true))).toBe('INVALID_ARGUMENT:invalid_signal_name');
    expect(await reason(a.client.signal('r1', 'approve', () => 1))).toBe('INVALID_ARGUMENT:unstorable_signal_value');
    expect(() => a.client.workflowRun(review, 'bad id')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    // The leader's runtime refuses what is not a start of its workflows, whatever the page sent.
    expect(await reason(a.client.submit({ runId: 'raw', input: utf8('hello') }))).toBe('INVALID_ARGUMENT:not_a_workflow_run');
    expect((await a.client.listRuns()).runs).toEqual([]);
  });

  it('start on a worker serving a StepRunner: INVALID_ARGUMENT unknown_workflow, nothing submitted', async () => {
    const log = new BroadcastChannel(uniqueName('log'));
    channels.push(log);
    const h: TestHost = startHost('indexeddb', uniqueName('fn-runner'), log.name);
    workers.push(h.worker);
    await h.role('leader');
    expect((await h.client.info()).workflows).toBeNull();
    const error = await h.client.start(review, { topic: 'x', log: log.name }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow', workflow: 'test.review@2' }, message: expect.stringContaining('StepRunner') });
    expect((await h.client.listRuns()).runs).toEqual([]);
  });

  it('<taquba-inspector> shows a function run by its calls: step names and values, the signal it waits for, executions', async () => {
    const a = startFnHost(uniqueName('fn-inspect'), 'fa');
    await a.role('leader');
    const log = stepLog();
    await a.client.start(review, { topic: 'tides', log: log.name }, { runId: 'inspect-1' });
    await waitFor(async () => (await a.client.status('inspect-1'))?.state === 'waiting-for-signal', 'the run to wait for approve');
    const { text } = inspect(a.client, 'inspect-1');
    await waitFor(() => /step research.*done.*"about tides".*step draft.*done.*draft on tides.*signal approve.*waiting for the signal.*until/s.test(text('calls')), `the calls (shown: ${text('calls')})`, 20_000);
    expect(text('detail')).toContain('workflow test.review@2');
    expect(text('detail')).toMatch(/Executions.*Execution 1.*done.*Execution 2.*waiting.*waiting for signal "approve"/s);
    // No memo section (a function run keeps none) and no raw header naming the workflow: the meta line says it.
    expect(text('detail')).not.toContain('Memo');
    expect(text('detail')).not.toContain('taquba-workflow');
  });

  it("a retried step's attempts: a function-call event per failed attempt and the value's, and the inspector's count and errors", async () => {
    const a = startFnHost(uniqueName('fn-flaky'), 'fa');
    await a.role('leader');
    const seen: CallEvent[] = [];
    const run = await a.client.start(flaky, undefined, { runId: 'flaky-1', onEvent: (e) => e.type === 'function-call' && seen.push(e) });
    await waitFor(async () => (await run.status())?.state === 'waiting-for-signal', 'the run to wait for go');
    await waitFor(() => seen.length === 3, 'three call events');
    expect(seen.map((e) => [e.call.name, e.call.status, e.call.attempts, e.call.error])).toEqual([
      ['fetch', 'retrying', 1, 'Error: 503 from upstream'],
      ['fetch', 'done', 2, null],
      ['go', 'waiting', null, null],
    ]);
    expect(seen[0]!.call.untilMs).toBe(seen[0]!.call.retried[0]!.atMs + 10);
    expect(callValue(seen[1]!.call)).toBe('ok on attempt 2');
    const { text } = inspect(a.client, 'flaky-1');
    await waitFor(() => /step fetch.*done after 2 attempts.*attempt 1: Error: 503 from upstream.*signal go.*waiting for the signal/s.test(text('calls')), `the attempts (shown: ${text('calls')})`, 20_000);
    expect(await a.client.signal('flaky-1', 'go', null)).toBe('delivered');
    expect(await run.result()).toBe('ok on attempt 2');
  });

  it('the workflow-function errors keep their class, code and fields through the wire-error records', () => {
    const back = <T>(e: T): T => fromWireError(structuredClone(toWireError(e))) as T;
    const step = back(new StepFailedError('draft', 3, 'Error: 503'));
    expect(step).toBeInstanceOf(StepFailedError);
    expect(step).toMatchObject({ code: 'STEP_FAILED', stepName: 'draft', attempts: 3, lastError: 'Error: 503' });
    const run = back(new RunFailedError('r1', 'cancelled', null));
    expect(run).toBeInstanceOf(RunFailedError);
    expect(run).toMatchObject({ code: 'RUN_FAILED', runId: 'r1', status: 'cancelled', error: null });
    const diverged = back(new NonDeterminismError('r1', 2, 'step "a"', 'step "b"'));
    expect(diverged).toBeInstanceOf(NonDeterminismError);
    expect(diverged).toMatchObject({ code: 'NON_DETERMINISTIC', details: { runId: 'r1', position: 2, recorded: 'step "a"', requested: 'step "b"' } });
  });
});
