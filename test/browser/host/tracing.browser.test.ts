/**
 * OpenTelemetry in the browser worker (issue 29, item 3): the worker's runtime, given a tracer of
 * the SDK (bundled into the worker with its in-memory exporter), traces a run the page starts. The
 * page has no tracer: it hands its trace context over in the run's `taquba-traceparent` header,
 * and every span of the run (its submission, each delivery, each step, its child run) joins that
 * trace, with no async context manager in the worker (the parents are passed explicitly).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../../src/browser/index.js';
import { HEADER_TRACEPARENT } from '../../../src/core/trace-context.js';
import { uniqueName, waitFor } from './harness.js';
import type { SpanSummary } from './pages/tracing-worker.js';
import { traced } from './pages/tracing-workflows.js';

const workers: Worker[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) w.terminate();
});

/** The spans the worker finished so far. */
async function spansOf(name: string): Promise<SpanSummary[]> {
  const channel = new BroadcastChannel(`${name}-spans`);
  try {
    return await new Promise<SpanSummary[]>((resolve) => {
      channel.onmessage = (ev) => resolve(ev.data as SpanSummary[]);
      channel.postMessage('spans?');
    });
  } finally {
    channel.close();
  }
}

describe('tracing in the browser worker', () => {
  it("spans of a run the page started, in the page's trace", async () => {
    const name = uniqueName('tracing');
    const worker = new Worker(new URL('./pages/tracing-worker.ts', import.meta.url), { type: 'module', name });
    workers.push(worker);
    const client = connect(worker, { persist: false });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const pageSpan = '00f067aa0ba902b7';
    const run = await client.start(traced, 21, { runId: 'traced-1', headers: { [HEADER_TRACEPARENT]: `00-${traceId}-${pageSpan}-01` } });
    await waitFor(async () => (await client.getRun('traced-1'))?.state === 'waiting-for-signal', 'the run to wait for its signal');
    await client.signal('traced-1', 'extra', 0.6);
    expect(await run.result()).toBe(43);

    const spans = await waitFor(async () => {
      const all = await spansOf(name);
      return all.filter((s) => s.name === 'run.step').length === 4 ? all : undefined;
    }, 'the spans of the four deliveries');
    // Signals are sent from where they are sent (the page's, and the child's ending without an async
    // context manager here, are traces of their own); everything else is the page's trace.
    for (const s of spans.filter((x) => x.name !== 'signal.send')) expect(s.traceId, s.name).toBe(traceId);
    const submit = spans.find((s) => s.name === 'run.submit' && s.attributes['taquba.run.id'] === 'traced-1')!;
    expect(submit).toMatchObject({ traceId, parentSpanId: pageSpan, attributes: { 'taquba.run.id': 'traced-1', 'taquba.workflow': 'test.traced@1' } });
    const deliveries = spans.filter((s) => s.name === 'run.step' && s.attributes['taquba.run.id'] === 'traced-1');
    expect(deliveries).toHaveLength(3);
    for (const d of deliveries) expect(d.parentSpanId).toBe(submit.spanId);
    expect(spans.filter((s) => s.name.startsWith('step ')).map((s) => s.name).sort()).toEqual(['step add', 'step double', 'step round']);
    expect(deliveries.flatMap((d) => d.events)).toEqual(expect.arrayContaining(['signal.wait', 'signal.received', 'step.replayed', 'child.start', 'child.end']));
    // The child run: submitted under the parent's delivery that invoked it.
    const childSubmit = spans.find((s) => s.name === 'run.submit' && s.attributes['taquba.run.id'] !== 'traced-1')!;
    expect(deliveries.map((d) => d.spanId)).toContain(childSubmit.parentSpanId);
    expect(spans.find((s) => s.name === 'run.step' && s.attributes['taquba.run.id'] === childSubmit.attributes['taquba.run.id'])?.parentSpanId).toBe(childSubmit.spanId);
    expect(spans.find((s) => s.name === 'signal.send' && s.attributes['taquba.signal.key'] === 'traced-1#extra')?.attributes).toMatchObject({ 'taquba.signal.outcome': 'delivered' });
  });
});
