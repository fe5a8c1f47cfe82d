/**
 * OpenTelemetry traces (issue 29, item 3) with the SDK's in-memory exporter: a workflow function
 * with two steps, a retry, a sleep, a signal and a child run, submitted inside an active span,
 * gives one trace (the submitter's) of `run.submit`, `run.step`, `step <name>`, `signal.send` and
 * `run.terminated` spans with the expected parents, attributes and events; StepRunner steps, typed
 * jobs and webhook deliveries (which send `traceparent`) join it too; and without a tracer nothing
 * changes (no span, no header).
 */
import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { defineJob, JobRunner } from '../../../src/core/jobs/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/index.js';
import { Queue, runWorker } from '../../../src/core/queue/index.js';
import { contextOfTraceparent, HEADER_TRACEPARENT, parseTraceparent } from '../../../src/core/trace-context.js';
import { WebhookTerminalHook, WebhookWorker, type WebhookFetchInit } from '../../../src/core/webhooks/index.js';
import { defineWorkflow, StepOutcome, WorkflowRuntime, type Step, type TerminalHook, type WorkflowRuntimeOptions } from '../../../src/core/workflow/index.js';
import { eventually } from './harness.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('taquba-tracing-test');

beforeAll(() => {
  // Node's context manager: the active span follows awaits, as in an app that set up the SDK.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => context.disable());
beforeEach(() => exporter.reset());

const spans = (name?: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name);
const idOf = (s: ReadableSpan | Span): string => s.spanContext().spanId;
const traceOf = (s: ReadableSpan | Span): string => s.spanContext().traceId;
const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
const events = (s: ReadableSpan): string[] => s.events.map((e) => e.name);
const one = (list: ReadableSpan[], what: string): ReadableSpan => {
  expect(list, what).toHaveLength(1);
  return list[0]!;
};
const byRun = (name: string, runId: string): ReadableSpan[] => spans(name).filter((s) => s.attributes['taquba.run.id'] === runId);

async function world(runner: ConstructorParameters<typeof WorkflowRuntime>[2], options: WorkflowRuntimeOptions = {}, hook?: TerminalHook) {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'tracing', { logger: false, schedulerIntervalMs: 10, defaultQueueConfig: { retryBackoffBaseMs: 5, retryBackoffMaxMs: 10 } });
  const runtime = new WorkflowRuntime(queue, store, runner, hook, { logger: false, pollIntervalMs: 20, ...options });
  const worker = runtime.spawn();
  onTestFinished(async () => {
    await worker.shutdown();
    await queue.close();
  });
  return { store, queue, runtime };
}

/** `fn` inside an active span (an HTTP request's, say), which is returned with `fn`'s value once ended. */
async function inRequest<T>(fn: () => Promise<T>): Promise<{ root: Span; value: T }> {
  return tracer.startActiveSpan('http.request', async (root) => {
    try {
      return { root, value: await fn() };
    } finally {
      root.end();
    }
  });
}

describe('traceparent', () => {
  it('parses valid values only, and the contexts built from them carry the span to the OpenTelemetry API', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseTraceparent(tp)).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    for (const bad of [undefined, '', 'garbage', `${tp}-extra`, 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01']) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
    expect(trace.getSpanContext(contextOfTraceparent(tp) as never)).toEqual(parseTraceparent(tp));
    expect(trace.getSpanContext(contextOfTraceparent(undefined) as never)).toBeUndefined();
  });

  it('a tracer option that is not a tracer is INVALID_CONFIG', async () => {
    const queue = await Queue.open(new MemoryObjectStore(), 'bad', { logger: false });
    onTestFinished(() => queue.close());
    expect(() => new WorkflowRuntime(queue, new MemoryObjectStore(), async () => StepOutcome.succeed(utf8('')), undefined, { tracer: {} as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG', details: expect.objectContaining({ option: 'tracer' }) }),
    );
  });
});

describe('workflow functions', () => {
  let chargeAttempts = 0;
  let activeInStep: string | undefined;
  const ship = defineWorkflow({ name: 'ship', run: (ctx, id: number) => ctx.step('label', () => `label-${id}`) });
  const order = defineWorkflow({
    name: 'order',
    async run(ctx, id: number) {
      const price = await ctx.step('price', () => {
        // The step's span is the active one while its function runs: the app's own spans nest in it.
        activeInStep = (trace.getActiveSpan() as unknown as ReadableSpan | undefined)?.name;
        return id * 10;
      });
      const charged = await ctx.step(
        'charge',
        () => {
          if (++chargeAttempts === 1) throw new Error('card declined once');
          return price;
        },
        { retries: 1, backoff: { initialMs: 1 } },
      );
      await ctx.sleep(30);
      const approval = await ctx.waitForSignal<string>('approve');
      const label = await ctx.invoke(ship, id);
      return `${charged}:${approval.timedOut ? 'none' : approval.value}:${label}`;
    },
  });

  it('a run submitted inside an active span is one trace: submit, step deliveries, step attempts, the child run, signals', async () => {
    chargeAttempts = 0;
    const { runtime } = await world({ workflows: [order, ship] }, { tracer });
    const { root, value: run } = await inRequest(() => runtime.start(order, 7, { runId: 'o1' }));
    await eventually(async () => (await runtime.getRun('o1'))?.state === 'waiting-for-signal', 15_000, 'the run to wait for its signal');
    await runtime.signal('o1', 'approve', 'yes');
    expect(await run.result({ timeoutMs: 15_000 })).toBe('70:yes:label-7');
    await eventually(() => byRun('run.terminated', 'o1-c4').length === 1 && spans('signal.send').length === 2, 15_000, 'the child outcome to reach the parent');

    // One trace: the submitter's (the test's own signal was sent outside any span: a trace of its own).
    const approveSend = one(spans('signal.send').filter((s) => s.attributes['taquba.signal.key'] === 'o1#approve'), 'the approve signal');
    expect(approveSend.attributes).toMatchObject({ 'taquba.signal.outcome': 'delivered', 'taquba.queue.name': 'workflow-steps' });
    for (const s of spans().filter((x) => x !== approveSend)) expect(traceOf(s), s.name).toBe(traceOf(root));

    // The submission: a child of the active span, its context kept in the run's header.
    const submit = one(byRun('run.submit', 'o1'), 'the order submit');
    expect(parentOf(submit)).toBe(idOf(root));
    expect(submit.attributes).toMatchObject({ 'taquba.workflow': 'order@1', 'taquba.run.newly_submitted': true, 'taquba.queue.name': 'workflow-steps' });

    // One run.step per delivery, each a child of the submission: step 0 (price, charge twice, the
    // sleep begins), 1 (the sleep ends, the wait begins), 2 (the signal; the child starts), 3 (the child's outcome; done).
    const deliveries = byRun('run.step', 'o1').sort((a, b) => Number(a.attributes['taquba.run.step']) - Number(b.attributes['taquba.run.step']));
    expect(deliveries.map((d) => d.attributes['taquba.run.step'])).toEqual([0, 1, 2, 3]);
    for (const d of deliveries) {
      expect(parentOf(d)).toBe(idOf(submit));
      expect(d.attributes).toMatchObject({ 'taquba.workflow': 'order@1', 'taquba.step.attempt': 1, 'taquba.queue.name': 'workflow-steps' });
    }
    const [first, second, third, last] = deliveries as [ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan];
    expect(first.attributes['taquba.step.outcome']).toBe('continue');
    expect(events(first)).toEqual(['step.retry', 'sleep.start']);
    expect(events(second)).toEqual(['step.replayed', 'step.replayed', 'sleep.replayed', 'sleep.end', 'signal.wait']);
    expect(second.events.find((e) => e.name === 'step.replayed')?.attributes).toMatchObject({ 'taquba.call.name': 'price', 'taquba.call.position': 0 });
    expect(events(third)).toEqual(['step.replayed', 'step.replayed', 'sleep.replayed', 'wait.replayed', 'signal.received', 'child.start']);
    expect(third.events.find((e) => e.name === 'signal.received')?.attributes).toMatchObject({ 'taquba.call.name': 'approve', 'taquba.call.status': 'done' });
    expect(events(last)).toEqual(['step.replayed', 'step.replayed', 'sleep.replayed', 'wait.replayed', 'invoke.replayed', 'child.end']);
    expect(last.attributes).toMatchObject({ 'taquba.step.outcome': 'succeed', 'taquba.run.outcome': 'succeeded' });

    // ctx.step attempts: children of their delivery; the failed attempt is an error with its exception.
    const price = one(spans('step price'), 'the price step');
    expect(parentOf(price)).toBe(idOf(first));
    expect(price.attributes).toMatchObject({ 'taquba.run.id': 'o1', 'taquba.step.name': 'price', 'taquba.step.attempt': 1, 'taquba.call.position': 0 });
    expect(activeInStep).toBe('step price');
    const charges = spans('step charge').sort((a, b) => Number(a.attributes['taquba.step.attempt']) - Number(b.attributes['taquba.step.attempt']));
    expect(charges.map((c) => [c.attributes['taquba.step.attempt'], c.status.code, parentOf(c)])).toEqual([
      [1, 2, idOf(first)],
      [2, 0, idOf(first)],
    ]);
    expect(charges[0]!.status.message).toBe('card declined once');
    expect(events(charges[0]!)).toEqual(['exception']);

    // The child run: submitted from the parent's delivery, in the same trace, its outcome sent back from its notification.
    const childSubmit = one(byRun('run.submit', 'o1-c4'), 'the child submit');
    expect(parentOf(childSubmit)).toBe(idOf(third));
    expect(childSubmit.attributes['taquba.workflow']).toBe('ship@1');
    const childStep = one(byRun('run.step', 'o1-c4'), 'the child delivery');
    expect(parentOf(childStep)).toBe(idOf(childSubmit));
    expect(parentOf(one(spans('step label'), 'the label step'))).toBe(idOf(childStep));
    const terminated = one(byRun('run.terminated', 'o1-c4'), 'the child notification');
    expect(parentOf(terminated)).toBe(idOf(childSubmit));
    expect(terminated.attributes).toMatchObject({ 'taquba.run.outcome': 'succeeded' });
    const outcomeSend = one(spans('signal.send').filter((s) => s !== approveSend), 'the child outcome signal');
    expect(parentOf(outcomeSend)).toBe(idOf(terminated));
    expect(outcomeSend.attributes['taquba.signal.key']).toBe('o1#taquba.child.o1-c4');
  });
});

describe('StepRunner runs', () => {
  it('each delivery is a run.step span under the submission: a retry, memo hits, a signal wait and its delivery, the outcome', async () => {
    const seen: Step[] = [];
    const runner = async (step: Step): Promise<StepOutcome> => {
      seen.push(step);
      const page = await step.memo.memoized('fetch', () => `page of ${fromUtf8(step.payload)}`);
      if (step.stepNumber === 0 && step.attempt === 1) throw new Error('flaky');
      if (step.stepNumber === 0) expect(await step.memo.memoizedByContent({ page }, () => 'unreachable')).toBe('unreachable');
      if (step.stepNumber === 0) return StepOutcome.continueOnSignal(step.payload, 'go', 60_000);
      return StepOutcome.succeed(utf8(`done:${fromUtf8(step.signalPayload!)}`));
    };
    const { runtime } = await world(runner, { tracer });
    const { root } = await inRequest(() => runtime.submit({ runId: 'r1', input: utf8('x'), headers: { tenant: 't1' } }));
    await eventually(async () => (await runtime.getRun('r1'))?.state === 'waiting-for-signal', 15_000, 'the wait');
    await runtime.signal('go', utf8('now'));
    expect(await runtime.result('r1', { timeoutMs: 15_000 })).toMatchObject({ status: 'succeeded' });

    // The run's headers carry the submission's trace context to every step (runners see it).
    const submit = one(byRun('run.submit', 'r1'), 'the submit');
    expect(parentOf(submit)).toBe(idOf(root));
    expect(submit.attributes['taquba.workflow']).toBeUndefined();
    expect(parseTraceparent(seen[0]!.headers[HEADER_TRACEPARENT])).toMatchObject({ traceId: traceOf(root), spanId: idOf(submit) });
    expect(seen.map((s) => s.headers.tenant)).toEqual(['t1', 't1', 't1']);

    const deliveries = byRun('run.step', 'r1').sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(deliveries.map((d) => [d.attributes['taquba.run.step'], d.attributes['taquba.step.attempt'], d.attributes['taquba.step.outcome'], d.status.code])).toEqual([
      [0, 1, 'retry', 2],
      [0, 2, 'continue', 0],
      [1, 1, 'succeed', 0],
    ]);
    for (const d of deliveries) expect([traceOf(d), parentOf(d)]).toEqual([traceOf(root), idOf(submit)]);
    // The first attempt computed the memo entry; the retry found it (a memo hit).
    expect(deliveries[0]!.events.map((e) => e.name)).toEqual(['memo.computed', 'exception']);
    expect(deliveries[0]!.events[0]!.attributes).toEqual({ 'taquba.memo.scope': 'step', 'taquba.memo.key': 'fetch' });
    expect(deliveries[0]!.status.message).toBe('flaky');
    expect(deliveries[1]!.events.map((e) => e.name)).toEqual(['memo.hit', 'memo.computed', 'signal.wait']);
    expect(deliveries[1]!.events.at(-1)!.attributes).toEqual({ 'taquba.signal.key': 'go', 'taquba.signal.timeout_ms': 60_000 });
    expect(events(deliveries[2]!)).toEqual(['signal.received', 'memo.computed']);
    expect(deliveries[2]!.attributes['taquba.run.outcome']).toBe('succeeded');
  });

  it('without a tracer nothing changes: no span, no header', async () => {
    const seen: Step[] = [];
    const { runtime } = await world(async (step) => (seen.push(step), StepOutcome.succeed(step.payload)));
    await inRequest(() => runtime.submit({ runId: 'plain', input: utf8('x') }));
    expect(await runtime.result('plain', { timeoutMs: 15_000 })).toMatchObject({ status: 'succeeded' });
    expect(seen[0]!.headers).toEqual({});
    expect(spans().map((s) => s.name)).toEqual(['http.request']);
  });

  it('a no-op tracer (no SDK registered) adds no header', async () => {
    const seen: Step[] = [];
    const { runtime } = await world(async (step) => (seen.push(step), StepOutcome.succeed(step.payload)), { tracer: trace.getTracer('no-sdk') });
    await runtime.submit({ runId: 'noop', input: utf8('x') });
    expect(await runtime.result('noop', { timeoutMs: 15_000 })).toMatchObject({ status: 'succeeded' });
    expect(seen[0]!.headers).toEqual({});
  });
});

describe('typed jobs', () => {
  it('a job submitted from a traced step joins the trace of the run that submitted it', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'jobs-tracing', { logger: false });
    const email = defineJob({ name: 'email', run: async ({ to }: { to: string }) => `sent to ${to}` });
    const jobs = new JobRunner(queue, store, { tracer, logger: false }).register(email);
    const send = defineWorkflow({ name: 'send', run: (ctx, to: string) => ctx.step('email', async () => (await jobs.submit(email, { to })).result()) });
    const runtime = new WorkflowRuntime(queue, store, { workflows: [send] }, undefined, { tracer, logger: false });
    const workers = [jobs.spawn(), runtime.spawn()];
    onTestFinished(async () => {
      for (const w of workers) await w.shutdown();
      await queue.close();
    });
    const { root, value: run } = await inRequest(() => runtime.start(send, 'ada@example.com', { runId: 's1' }));
    expect(await run.result({ timeoutMs: 15_000 })).toBe('sent to ada@example.com');

    const step = one(spans('step email'), 'the email step');
    const jobSubmit = one(spans('run.submit').filter((s) => s.attributes['taquba.queue.name'] === 'jobs'), 'the job submit');
    expect([traceOf(jobSubmit), parentOf(jobSubmit)]).toEqual([traceOf(root), idOf(step)]);
    const jobStep = one(spans('run.step').filter((s) => s.attributes['taquba.queue.name'] === 'jobs'), 'the job delivery');
    expect([traceOf(jobStep), parentOf(jobStep)]).toEqual([traceOf(root), idOf(jobSubmit)]);
  });
});

describe('webhook deliveries', () => {
  /** A fetch that records each request's headers and answers `statuses` in turn (the last repeats). */
  function fakeFetch(statuses: number[]) {
    const requests: WebhookFetchInit['headers'][] = [];
    const fetch = async (_url: string, init: WebhookFetchInit) => {
      requests.push(init.headers);
      const status = statuses[Math.min(requests.length - 1, statuses.length - 1)]!;
      return { status, headers: { get: () => null }, text: async () => '' };
    };
    return { fetch, requests };
  }

  async function webhookWorld(worker: WebhookWorker, options: WorkflowRuntimeOptions) {
    const w = await world(async (step) => StepOutcome.succeed(step.payload), options, new WebhookTerminalHook({ targetQueue: 'webhooks' }));
    const stop = new AbortController();
    const done = runWorker(w.queue, 'webhooks', worker, { signal: stop.signal, pollIntervalMs: 10 });
    onTestFinished(async () => {
      stop.abort();
      await done.catch(() => undefined);
    });
    return w;
  }

  it('each attempt is a webhook.deliver span under the run, with HTTP attributes, sending its own traceparent', async () => {
    const { fetch, requests } = fakeFetch([503, 200]);
    const { runtime } = await webhookWorld(new WebhookWorker({ fetch, tracer }), { tracer });
    const { root } = await inRequest(() => runtime.submit({ runId: 'w1', input: utf8('x'), headers: { callback_url: 'https://user:secret@hooks.example.com:8443/runs?token=abc' } }));
    await eventually(() => spans('webhook.deliver').length === 2, 15_000, 'two delivery attempts');

    const terminated = one(byRun('run.terminated', 'w1'), 'the notification');
    const attempts = spans('webhook.deliver').sort((a, b) => Number(a.attributes['taquba.webhook.attempt']) - Number(b.attributes['taquba.webhook.attempt']));
    expect(attempts.map((a) => [a.attributes['http.response.status_code'], a.status.code, a.attributes['error.type']])).toEqual([
      [503, 2, '503'],
      [200, 0, undefined],
    ]);
    for (const [i, a] of attempts.entries()) {
      expect([traceOf(a), parentOf(a), a.kind]).toEqual([traceOf(root), idOf(one(byRun('run.submit', 'w1'), 'the submit')), 2]);
      expect(a.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.full': 'https://hooks.example.com:8443/runs', 'server.address': 'hooks.example.com', 'server.port': 8443 });
      // The receiver continues the trace from the attempt's own span.
      expect(parseTraceparent(requests[i]!.traceparent)).toMatchObject({ traceId: traceOf(root), spanId: idOf(a) });
    }
    expect(attempts[1]!.attributes['http.request.resend_count']).toBe(1);
    expect(terminated.attributes['taquba.run.outcome']).toBe('succeeded');
  });

  it("a worker without a tracer sends the run's trace context on as it is; without one, no traceparent", async () => {
    const traced = fakeFetch([200]);
    const { runtime } = await webhookWorld(new WebhookWorker({ fetch: traced.fetch }), { tracer });
    await runtime.submit({ runId: 'w2', input: utf8('x'), headers: { callback_url: 'https://hooks.example.com/runs' } });
    await eventually(() => traced.requests.length === 1, 15_000, 'the delivery');
    const submit = one(byRun('run.submit', 'w2'), 'the submit');
    expect(parseTraceparent(traced.requests[0]!.traceparent)).toMatchObject({ traceId: traceOf(submit), spanId: idOf(submit) });
    expect(spans('webhook.deliver')).toEqual([]);

    const plain = fakeFetch([200]);
    const untraced = await webhookWorld(new WebhookWorker({ fetch: plain.fetch }), {});
    await untraced.runtime.submit({ runId: 'w3', input: utf8('x'), headers: { callback_url: 'https://hooks.example.com/runs' } });
    await eventually(() => plain.requests.length === 1, 15_000, 'the delivery');
    expect(plain.requests[0]!.traceparent).toBeUndefined();
  });
});
