/**
 * The inspector's pure parts in Node: how a run's timeline is assembled from the store's record,
 * the events a page saw and the app's description, and how stored bytes become readable text.
 */
import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../src/core/codec.js';
import type { RunDetails, RunTimeline, TimelineJob } from '../../src/core/workflow/index.js';
import { describeBytes, describeValue, isCancelMessage } from '../../src/browser/inspector/format.js';
import { describeCalls, mergeCalls, signalLabel } from '../../src/browser/inspector/function-calls.js';
import type { FunctionCall, FunctionTimeline } from '../../src/core/workflow/index.js';
import { buildTimeline, RunObserver, storedEnding } from '../../src/browser/inspector/timeline.js';
import type { RunEvent } from '../../src/browser/protocol.js';

const base = { runId: 'r1', executor: 'h1' };
const started = (stepNumber: number, attempt: number, at: number): RunEvent => ({ ...base, type: 'step-started', at, stepNumber, attempt, maxAttempts: 3, interruptions: 0, jobId: `j${stepNumber}` });
const finished = (stepNumber: number, attempt: number, at: number, result: 'continue' | 'error' | 'fail', error: string | null = null): RunEvent => ({ ...base, type: 'step-finished', at, stepNumber, attempt, result, error });

function details(overrides: Partial<RunDetails>): RunDetails {
  return {
    runId: 'r1',
    submittedAtMs: 1_000,
    state: 'pending',
    currentStep: 1,
    jobId: 'j1',
    attempts: 0,
    maxAttempts: 3,
    interruptions: 0,
    lastError: null,
    waitingFor: null,
    headers: {},
    enqueuedAt: 1_000,
    claimedAt: null,
    failedAt: null,
    history: [],
    ...overrides,
  };
}

/** A kept (done or dead) step job of run r1 with its tries. */
function keptJob(step: number, history: TimelineJob['history'], status: TimelineJob['status'] = 'done'): TimelineJob {
  return { jobId: `j${step}`, status, attempts: history.length, maxAttempts: 4, interruptions: 0, enqueuedAt: 0, claimedAt: null, completedAt: null, failedAt: null, runAt: null, lastError: null, history };
}

describe('buildTimeline', () => {
  it('after a reload (no events seen) draws earlier steps from the jobs the store kept, and the ending from its terminal record', () => {
    const stored: RunTimeline = {
      runId: 'r1',
      status: 'terminated',
      active: null,
      headers: {},
      steps: [
        { step: 0, jobs: [keptJob(0, [{ attempt: 1, claimedAt: 100, recordedAt: 140, outcome: 'retried', error: 'rate limited' }, { attempt: 2, claimedAt: 300, recordedAt: 350, outcome: 'completed' }])], signal: null, outcome: null },
        { step: 1, jobs: [keptJob(1, [{ attempt: 1, claimedAt: 400, recordedAt: 420, outcome: 'completed' }])], signal: null, outcome: null },
      ],
      memo: [],
      terminal: { status: 'succeeded', error: null, result: null, finalStep: 1, source: 'notification' },
      workflowFunction: null,
      terminatedAtMs: 430,
      truncated: false,
    };
    const ending = storedEnding(stored);
    expect(ending).toEqual({ status: 'succeeded', error: null, finalStep: 1, at: 430 });
    const steps = buildTimeline({ runId: 'r1', observer: new RunObserver(), details: null, ending, stored });
    expect(steps.map((s) => [s.stepNumber, s.phase, s.maxAttempts])).toEqual([
      [0, 'done', 4],
      [1, 'done', 4],
    ]);
    expect(steps[0]!.attempts).toEqual([
      { attempt: 1, startedAt: 100, endedAt: 140, outcome: 'failed, retried', error: 'rate limited' },
      { attempt: 2, startedAt: 300, endedAt: 350, outcome: 'completed', error: null },
    ]);
    expect(steps[1]!.attempts.map((a) => a.outcome)).toEqual(['completed']);
    expect(storedEnding({ ...stored, terminal: null })).toBeUndefined();
  });

  it('draws done steps, the current one from the store with its tries, and named steps still to come', () => {
    const observer = new RunObserver();
    observer.apply(started(0, 1, 100));
    observer.apply(finished(0, 1, 150, 'continue'));
    const steps = buildTimeline({
      runId: 'r1',
      observer,
      details: details({ state: 'scheduled', attempts: 1, history: [{ attempt: 1, claimedAt: 200, recordedAt: 260, outcome: 'retried', error: 'rate limited' }], waitingFor: { type: 'timer', at: 900, reason: 'retry' } }),
      description: { steps: [{ name: 'fetch' }, { name: 'parse' }, { name: 'store', note: 'writes orders/' }] },
    });
    expect(steps.map((s) => [s.stepNumber, s.name, s.phase])).toEqual([
      [0, 'fetch', 'done'],
      [1, 'parse', 'scheduled'],
      [2, 'store', 'upcoming'],
    ]);
    expect(steps[0]!.attempts).toEqual([{ attempt: 1, startedAt: 100, endedAt: 150, outcome: 'completed', error: null }]);
    expect(steps[1]!.attempts).toEqual([{ attempt: 1, startedAt: 200, endedAt: 260, outcome: 'failed, retried', error: 'rate limited' }]);
    expect(steps[1]!.waitingFor).toEqual({ type: 'timer', at: 900, reason: 'retry' });
    expect(steps[2]!.note).toBe('writes orders/');
  });

  it('draws a step the executing tab started as running while the store still says pending (a follower)', () => {
    const observer = new RunObserver();
    observer.apply(started(1, 1, 100));
    const [, current] = buildTimeline({ runId: 'r1', observer, details: details({ state: 'pending' }) });
    expect(current!.phase).toBe('running');
    expect(buildTimeline({ runId: 'r1', observer: new RunObserver(), details: details({ state: 'pending' }) })[1]!.phase).toBe('pending');
  });

  it('shows a cancel as a cancel: no failed attempt, no internal job id', () => {
    const observer = new RunObserver();
    observer.apply(started(0, 1, 100));
    observer.apply(finished(0, 1, 120, 'error', 'job cancel requested. id=01M8ABC'));
    observer.apply({ ...base, type: 'terminal', at: 130, status: 'cancelled', result: null, error: null, finalStep: 0, headers: {} });
    const steps = buildTimeline({ runId: 'r1', observer, details: null, ending: observer.ending('r1'), description: { steps: [{ name: 'a' }, { name: 'b' }] } });
    expect(steps).toEqual([{ stepNumber: 0, name: 'a', note: null, phase: 'cancelled', attempts: [{ attempt: 1, startedAt: 100, endedAt: 120, outcome: 'cancelled', error: null }], waitingFor: null, maxAttempts: 3 }]);
  });

  it('keeps a real failure with its error, and a step cut off by the end of the run as ended', () => {
    const observer = new RunObserver();
    observer.apply(started(0, 1, 100));
    observer.apply(finished(0, 1, 120, 'error', 'boom'));
    observer.apply(started(0, 2, 200));
    observer.apply({ ...base, type: 'terminal', at: 230, status: 'failed', result: null, error: 'boom', finalStep: 0, headers: {} });
    const [step] = buildTimeline({ runId: 'r1', observer, details: null, ending: observer.ending('r1') });
    expect(step!.phase).toBe('failed');
    expect(step!.attempts.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'failed', 'boom'],
      [2, 'ended', null],
    ]);
  });

  it('an interrupted try has no end time: the store noticed it later (its next writer), and a page sees only the next delivery start', () => {
    const observer = new RunObserver();
    observer.apply(started(1, 1, 100));
    // The executing tab dies; the next leader delivers the step again.
    observer.apply({ ...base, type: 'step-started', at: 16_500, stepNumber: 1, attempt: 1, maxAttempts: 3, interruptions: 1, jobId: 'j1' });
    observer.apply(finished(1, 1, 17_000, 'continue'));
    observer.apply({ ...base, type: 'terminal', at: 17_100, status: 'succeeded', result: null, error: null, finalStep: 1, headers: {} });
    const [, seen] = buildTimeline({ runId: 'r1', observer, details: null, ending: observer.ending('r1') });
    expect(seen!.attempts).toEqual([
      { attempt: 1, startedAt: 100, endedAt: null, outcome: 'interrupted by a reload, crash or closed tab', error: null },
      { attempt: 1, startedAt: 16_500, endedAt: 17_000, outcome: 'completed', error: null },
    ]);

    const current = buildTimeline({
      runId: 'r1',
      observer: new RunObserver(),
      details: details({ state: 'running', attempts: 1, claimedAt: 16_500, history: [{ attempt: 1, claimedAt: 100, recordedAt: 16_400, outcome: 'interrupted' }] }),
    })[1]!;
    expect(current.attempts[0]).toEqual({ attempt: 1, startedAt: 100, endedAt: null, outcome: 'interrupted by a reload, crash or closed tab', error: null });
  });

  it("a finished step's tries come from the store when it kept more than this page saw (an interruption before the page loaded), else from this page's events", () => {
    const observer = new RunObserver();
    // This page loaded after the interruption: it saw only the delivery that completed.
    observer.apply({ ...base, type: 'step-started', at: 500, stepNumber: 0, attempt: 1, maxAttempts: 3, interruptions: 1, jobId: 'j0' });
    observer.apply(finished(0, 1, 600, 'continue'));
    const kept = [keptJob(0, [{ attempt: 1, claimedAt: 100, recordedAt: 450, outcome: 'interrupted' }, { attempt: 1, claimedAt: 500, recordedAt: 600, outcome: 'completed' }])];
    const stored: RunTimeline = { runId: 'r1', status: 'active', active: null, headers: {}, steps: [{ step: 0, jobs: kept, signal: null, outcome: null }], memo: [], terminal: null, workflowFunction: null, terminatedAtMs: null, truncated: false };
    const [fromStore] = buildTimeline({ runId: 'r1', observer, details: details({ state: 'running', claimedAt: 700, attempts: 1 }), stored });
    expect(fromStore!.attempts.map((a) => [a.outcome, a.endedAt])).toEqual([
      ['interrupted by a reload, crash or closed tab', null],
      ['completed', 600],
    ]);
    const [fromPage] = buildTimeline({ runId: 'r1', observer, details: details({ state: 'running', claimedAt: 700, attempts: 1 }), stored: { ...stored, steps: [] } });
    expect(fromPage!.attempts.map((a) => a.outcome)).toEqual(['completed']);
    // As many tries as the store kept: this page's words stand (a cancel is not the store's "completed").
    observer.apply({ ...base, type: 'step-started', at: 800, stepNumber: 1, attempt: 1, maxAttempts: 3, interruptions: 0, jobId: 'j1' });
    observer.apply(finished(1, 1, 820, 'error', 'job cancel requested. id=01M8ABC'));
    const cancelled = { ...stored, steps: [{ step: 1, jobs: [keptJob(1, [{ attempt: 1, claimedAt: 800, recordedAt: 820, outcome: 'completed' as const }])], signal: null, outcome: null }] };
    const [, cancelStep] = buildTimeline({ runId: 'r1', observer, details: null, ending: { status: 'cancelled', error: null, finalStep: 1 }, stored: cancelled });
    expect(cancelStep!.attempts.map((a) => a.outcome)).toEqual(['cancelled']);
  });

  it('has no steps for a run it knows nothing about', () => {
    expect(buildTimeline({ runId: 'r9', observer: new RunObserver(), details: null })).toEqual([]);
  });
});

describe('describeBytes', () => {
  const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

  it('indents JSON, keeps text, decodes MessagePack, falls back to hex', () => {
    expect(describeBytes(utf8('{"a":1,"b":[true]}'))).toBe('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
    expect(describeBytes(utf8('plain words'))).toBe('plain words');
    expect(describeBytes(encodeValue('a memoized answer'))).toBe('a memoized answer');
    expect(describeBytes(encodeValue({ host: 'h1', step: 2 }))).toBe('{\n  "host": "h1",\n  "step": 2\n}');
    expect(describeBytes(new Uint8Array([0xc1, 0x00, 0xff]))).toBe('c1 00 ff');
    expect(describeBytes(new Uint8Array(0))).toBe('(empty)');
  });

  it('clips long values and says how long they were', () => {
    const text = describeBytes(utf8('x'.repeat(5_000)));
    expect(text.length).toBeLessThan(2_100);
    expect(text).toMatch(/… \(5000 characters\)$/);
  });

  it('tells a cancel apart from a failure', () => {
    expect(isCancelMessage('job cancel requested. id=01M8')).toBe(true);
    expect(isCancelMessage('model unavailable')).toBe(false);
    expect(isCancelMessage(null)).toBe(false);
  });
});

describe('workflow function calls', () => {
  const NOW = 1_800_000_000_000;
  const call = (position: number, over: Partial<FunctionCall>): FunctionCall => ({ position, kind: 'step', name: '', status: 'done', value: null, untilMs: null, error: null, attempts: null, retried: [], ...over });
  const fn: FunctionTimeline = {
    name: 'review',
    version: 2,
    calls: [
      call(0, { name: 'research', value: encodeValue({ notes: ['a'], at: new Map([['k', 1n]]) }) }),
      call(1, { name: 'publish', status: 'failed', error: 'Error: 503', attempts: 3 }),
      call(2, { kind: 'sleep', untilMs: NOW - 5_000 }),
      call(3, { kind: 'now', value: encodeValue(NOW - 4_000) }),
      call(4, { kind: 'wait', name: 'approve', status: 'waiting', untilMs: NOW + 60_000 }),
    ],
  };

  it('names each call, says what happened in words, and when it waits until', () => {
    const views = describeCalls(fn.calls, NOW);
    expect(views.map((v) => [v.title, v.status, v.text, v.failed])).toEqual([
      ['step research', 'done', 'done', false],
      ['step publish', 'failed', 'failed after 3 attempts', true],
      ['sleep', 'done', 'slept', false],
      ['now', 'done', 'recorded', false],
      ['signal approve', 'waiting', 'waiting for the signal', false],
    ]);
    expect(views[1]!.facts).toBe('Error: 503');
    expect(views[2]!.facts).toMatch(/^until .+ \(5 s ago\)$/);
    expect(views[4]!.facts).toMatch(/^until .+ \(in 1 min\)$/);
    expect(views[0]!.value).toBe(fn.calls[0]!.value);
  });

  it('a sleep still running, a wait without a timeout, a wait that timed out, a signal received', () => {
    const views = describeCalls(
      [
        call(0, { kind: 'sleep', status: 'sleeping', untilMs: NOW + 3_000 }),
        call(1, { kind: 'wait', name: 'forever', status: 'waiting', untilMs: NOW + 100 * 365 * 24 * 3600_000 }),
        call(2, { kind: 'wait', name: 'late', status: 'timed-out', untilMs: NOW - 1_000 }),
        call(3, { kind: 'wait', name: 'ok', status: 'done', untilMs: NOW + 1_000, value: encodeValue(true) }),
      ],
      NOW,
    );
    expect(views.map((v) => `${v.title}: ${v.text} · ${v.facts}`)).toEqual([
      expect.stringMatching(/^sleep: sleeping · until .+ \(in 3 s\)$/),
      'signal forever: waiting for the signal · no timeout',
      expect.stringMatching(/^signal late: timed out without the signal · at .+ \(1 s ago\)$/),
      'signal ok: received · null',
    ]);
  });

  it('values are decoded with the value codec (Map, BigInt, strings as they are); other bytes as describeBytes shows them', () => {
    expect(describeValue(fn.calls[0]!.value!)).toBe('{\n  "notes": [\n    "a"\n  ],\n  "at": [\n    [\n      "k",\n      "1"\n    ]\n  ]\n}');
    expect(describeValue(encodeValue('draft text'))).toBe('draft text');
    expect(describeValue(encodeValue(undefined))).toBe('undefined');
    expect(describeValue(new Uint8Array([0xc1, 0x00]))).toBe('c1 00');
  });

  it("a step's attempts: retrying after a failed one, done after retries, failed with every attempt's error", () => {
    const retried = [
      { attempt: 1, error: 'Error: 503', atMs: NOW - 3_000 },
      { attempt: 2, error: 'Error: 502', atMs: NOW - 1_000 },
    ];
    const views = describeCalls(
      [
        call(0, { name: 'fetch', status: 'retrying', attempts: 2, error: 'Error: 502', untilMs: NOW + 2_000, retried }),
        call(1, { name: 'draft', status: 'done', attempts: 3, value: encodeValue('ok'), retried }),
        call(2, { name: 'publish', status: 'failed', attempts: 3, error: 'Error: 500', retried }),
        call(3, { name: 'plain', status: 'done', attempts: 1, value: encodeValue(1) }),
      ],
      NOW,
    );
    expect(views.map((v) => [v.title, v.text, v.failed])).toEqual([
      ['step fetch', 'attempt 2 failed, retrying', false],
      ['step draft', 'done after 3 attempts', false],
      ['step publish', 'failed after 3 attempts', true],
      ['step plain', 'done', false],
    ]);
    expect(views[0]!.facts).toMatch(/^attempt 1: Error: 503 · attempt 2: Error: 502 · next attempt .+ \(in 2 s\)$/);
    expect(views[1]!.facts).toBe('attempt 1: Error: 503 · attempt 2: Error: 502');
    expect(views[2]!.facts).toBe('attempt 1: Error: 503 · attempt 2: Error: 502 · attempt 3: Error: 500');
    expect(views[3]!.facts).toBeNull();
  });

  it("folds the page's function-call events: calls the history no longer holds (an ended run) or not yet read, the stored ones first", () => {
    const observer = new RunObserver();
    const callEvent = (c: FunctionCall): RunEvent => ({ ...base, type: 'function-call', at: NOW, stepNumber: 0, call: c });
    observer.apply(callEvent(call(0, { name: 'a', status: 'retrying', attempts: 1 })));
    observer.apply(callEvent(call(0, { name: 'a', status: 'done', attempts: 2 })));
    observer.apply(callEvent(call(1, { kind: 'wait', name: 'go', status: 'waiting' })));
    expect([...observer.calls('r1').values()].map((c) => [c.position, c.status])).toEqual([
      [0, 'done'],
      [1, 'waiting'],
    ]);
    expect(observer.runIds()).toEqual(['r1']);
    // The history (read later) says more about position 1; position 2 only this page saw so far.
    observer.apply(callEvent(call(2, { name: 'b' })));
    const merged = mergeCalls([call(0, { name: 'a', attempts: 2 }), call(1, { kind: 'wait', name: 'go', status: 'done' })], observer.calls('r1'));
    expect(merged.map((c) => [c.position, c.name, c.status])).toEqual([
      [0, 'a', 'done'],
      [1, 'go', 'done'],
      [2, 'b', 'done'],
    ]);
    // A first execution delivered again (its claim was not durable yet) keeps what was seen.
    observer.apply(started(0, 1, NOW));
    expect(observer.calls('r1').size).toBe(3);
    // The run id ends and starts again: what was seen of its earlier run is dropped.
    observer.apply({ ...base, type: 'terminal', at: NOW, status: 'succeeded', result: null, error: null, finalStep: 3, headers: {} });
    observer.apply(started(0, 1, NOW + 1));
    expect(observer.calls('r1').size).toBe(0);
  });

  it("names a function run's signal by its name, any other key as it is", () => {
    expect(signalLabel('r1', 'r1#approve', fn)).toBe('approve');
    expect(signalLabel('r1', 'r1#approve', null)).toBe('r1#approve');
    expect(signalLabel('r1', 'other:key', fn)).toBe('other:key');
  });
});
