/**
 * Trace context across processes and time: the W3C `traceparent` of a run's submission travels
 * in the run header `taquba-traceparent` (copied to every step job, to child runs and to webhook
 * deliveries), and becomes the parent of the spans of each later delivery, in whichever process
 * and however much later it runs.
 */
import type { TraceContext, TraceSpan, TraceSpanContext } from './tracing.js';

/**
 * The run header holding the W3C `traceparent` (`00-<trace id>-<span id>-<flags>`) of the span
 * that submitted the run. Set by a runtime with a tracer; a submitter without one (a page handing
 * a run to its worker, a service that extracted the context of an HTTP request) may set it itself.
 */
export const HEADER_TRACEPARENT = 'taquba-traceparent';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZEROS = /^0+$/;

/** The span context a `traceparent` value names; undefined for a missing or malformed one. */
export function parseTraceparent(value: string | undefined): TraceSpanContext | undefined {
  const m = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (m === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  // Version ff is invalid; version 00 has exactly four fields (later versions may append more).
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
}

/** The `traceparent` of `span`, or undefined when its ids are not valid (a no-op tracer's). */
export function traceparentOf(span: TraceSpan): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!/^[0-9a-f]{32}$/.test(traceId) || !/^[0-9a-f]{16}$/.test(spanId) || ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The key under which `@opentelemetry/api` keeps a context's span. The API makes its keys with
 * `Symbol.for` so that every copy of it (any 1.x) agrees on them; the same key lets a context
 * built here carry a parent span to the app's tracer without importing the API.
 */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

/** An immutable context (what `@opentelemetry/api`'s `ROOT_CONTEXT` and its descendants are). */
class MapContext implements TraceContext {
  constructor(private readonly values: ReadonlyMap<symbol, unknown>) {}

  getValue(key: symbol): unknown {
    return this.values.get(key);
  }

  setValue(key: symbol, value: unknown): TraceContext {
    return new MapContext(new Map(this.values).set(key, value));
  }

  deleteValue(key: symbol): TraceContext {
    const values = new Map(this.values);
    values.delete(key);
    return new MapContext(values);
  }
}

const EMPTY = new MapContext(new Map());

/** A span of another process, standing for it as a parent (the API's `NonRecordingSpan`). */
function remoteSpan(context: TraceSpanContext): TraceSpan {
  const span = {
    spanContext: () => context,
    setAttribute: () => span,
    setAttributes: () => span,
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus: () => span,
    updateName: () => span,
    recordException: () => undefined,
    isRecording: () => false,
    end: () => undefined,
  };
  return span;
}

/** A context whose span is `span`: its children's parent. */
export function contextWithSpan(span: TraceSpan): TraceContext {
  return EMPTY.setValue(SPAN_KEY, span);
}

/**
 * The parent context of spans continuing the trace of `traceparent` (a header value); an empty
 * context without one, so the span starts a trace of its own rather than joining whatever the
 * worker loop's context holds.
 */
export function contextOfTraceparent(traceparent: string | undefined): TraceContext {
  const parent = parseTraceparent(traceparent);
  return parent === undefined ? EMPTY : contextWithSpan(remoteSpan(parent));
}
