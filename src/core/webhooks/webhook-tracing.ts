/**
 * The `webhook.deliver` span: one per delivery attempt (an HTTP client span with the semantic
 * conventions' attributes), a child of the run that ended when the delivery job carries the
 * run's `taquba-traceparent`; its own `traceparent` goes out with the request.
 */
import type { JobRecord } from '../queue/index.js';
import { contextOfTraceparent, HEADER_TRACEPARENT } from '../trace-context.js';
import { inSpan, SPAN_KIND, type OpenTelemetryTracer, type SpanAttributes, type TraceSpan } from '../tracing.js';

const URL_PARTS = /^(https?):\/\/(?:[^\s/?#@]+@)?([^\s/?#@]+)([^?#]*)/i;
const HOST_PORT = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/;

/**
 * The request's URL without credentials, query or fragment (callback URLs often carry tokens),
 * and its server; nothing for a URL of another shape (the attempt dead-letters on it anyway).
 */
function urlAttributes(url: string): SpanAttributes {
  const parts = URL_PARTS.exec(url);
  const server = parts === null ? null : HOST_PORT.exec(parts[2]!);
  if (parts === null || server === null) return {};
  const scheme = parts[1]!.toLowerCase();
  const port = server[2] === undefined ? (scheme === 'https' ? 443 : 80) : Number(server[2]);
  return { 'url.full': `${scheme}://${parts[2]}${parts[3] || '/'}`, 'server.address': server[1], 'server.port': port };
}

/** What the span knows before the request: the target, method, delivery id and attempt. */
export function requestAttributes(span: TraceSpan, job: JobRecord, url: string, method: string): void {
  span.setAttributes({ ...urlAttributes(url), 'http.request.method': method, 'taquba.webhook.id': job.id, 'taquba.webhook.attempt': job.attempts });
  if (job.attempts > 1) span.setAttribute('http.request.resend_count', job.attempts - 1);
}

/** The response's status; a failing one is also the span's `error.type`. */
export function responseAttributes(span: TraceSpan, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) span.setAttribute('error.type', String(status));
}

/** One delivery attempt of `job` in a `webhook.deliver` span, under the run's trace context when the job carries it. */
export function tracedDelivery(tracer: OpenTelemetryTracer, job: JobRecord, deliver: (span: TraceSpan) => Promise<void>): Promise<void> {
  const parent = contextOfTraceparent(job.headers[HEADER_TRACEPARENT]);
  return inSpan(tracer, 'webhook.deliver', { kind: SPAN_KIND.client }, parent, deliver);
}
