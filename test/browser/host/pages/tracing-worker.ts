/**
 * The tracing test's worker: `serveWorkflowRuntime` with an OpenTelemetry tracer of the SDK's own
 * (a `BasicTracerProvider` with the in-memory exporter, bundled into the worker), answering
 * requests for the spans it finished on a BroadcastChannel named by the worker's name.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { serveWorkflowRuntime } from '../../../../src/browser/worker.js';
import { rounded, traced } from './tracing-workflows.js';

/** A finished span as the page sees it. */
export interface SpanSummary {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Record<string, unknown>;
  readonly events: string[];
}

const name = self.name;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const channel = new BroadcastChannel(`${name}-spans`);
channel.onmessage = () => {
  const spans: SpanSummary[] = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: { ...s.attributes },
    events: s.events.map((e) => e.name),
  }));
  channel.postMessage(spans);
};

serveWorkflowRuntime({
  store: 'indexeddb',
  name,
  hostId: 'tracing-worker',
  workflows: [traced, rounded],
  runtimeOptions: { pollIntervalMs: 50, tracer: provider.getTracer('browser-worker') },
});
