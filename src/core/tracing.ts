/**
 * OpenTelemetry tracing without depending on `@opentelemetry/api`: an app hands in its tracer
 * (`trace.getTracer('app')`), and the types below are the structural subset of the API's that
 * the package calls. So nothing here imports the API, a build without it installed type-checks
 * (the published `.d.ts` never names it), and without a tracer no tracing code runs at all.
 */
import { InvalidConfigError } from './errors.js';
import { show } from './show.js';

export type SpanAttributeValue = string | number | boolean;
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue | undefined>>;

/** The ids of a span, as the W3C `traceparent` carries them (`@opentelemetry/api`'s `SpanContext`). */
export interface TraceSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
}

/** An OpenTelemetry `Context`: an immutable map from symbols to values. */
export interface TraceContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): TraceContext;
  deleteValue(key: symbol): TraceContext;
}

/** The calls made on an OpenTelemetry `Span`. */
export interface TraceSpan {
  spanContext(): TraceSpanContext;
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  setAttributes(attributes: SpanAttributes): unknown;
  addEvent(name: string, attributes?: SpanAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  isRecording(): boolean;
  end(): void;
}

/** The options passed to `startSpan` (`@opentelemetry/api`'s `SpanOptions`). */
export interface TraceSpanOptions {
  /** `SpanKind`: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  readonly kind?: number;
  readonly attributes?: SpanAttributes;
}

/**
 * The part of an OpenTelemetry `Tracer` the package uses: pass `trace.getTracer('my-app')` from
 * `@opentelemetry/api` (any 1.x). Spans get parents from contexts the package builds from the
 * `taquba-traceparent` header, and the spans of steps are made active while the step's code
 * runs, so spans the app starts there (and runs it submits) are their children.
 */
export interface OpenTelemetryTracer {
  startSpan(name: string, options?: TraceSpanOptions, context?: TraceContext): TraceSpan;
  startActiveSpan<F extends (span: TraceSpan) => unknown>(name: string, options: TraceSpanOptions, context: TraceContext, fn: F): ReturnType<F>;
}

/** `SpanKind` values. */
export const SPAN_KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

/** `SpanStatusCode.ERROR`. */
const STATUS_ERROR = 2;

/** INVALID_CONFIG unless `value` is absent or looks like a tracer. */
export function checkTracer(option: string, value: unknown): OpenTelemetryTracer | undefined {
  if (value === undefined) return undefined;
  const tracer = value as Partial<OpenTelemetryTracer> | null;
  if (typeof tracer?.startSpan !== 'function' || typeof tracer.startActiveSpan !== 'function') {
    throw new InvalidConfigError(`${option} must be an OpenTelemetry Tracer (trace.getTracer(name) from @opentelemetry/api). ${option}=${show(value)}`, { option });
  }
  return tracer as OpenTelemetryTracer;
}

/** Marks `span` failed with `error`. */
export function failSpan(span: TraceSpan, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setStatus({ code: STATUS_ERROR, message });
}

/** Marks `span` failed with a reason that is an outcome (a run failing by verdict), not an exception. */
export function failSpanOutcome(span: TraceSpan, message: string): void {
  span.setStatus({ code: STATUS_ERROR, message });
}

/** Runs `fn` with `span`, failing it with whatever `fn` throws, and ends it. */
async function within<T>(span: TraceSpan, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
  try {
    return await fn(span);
  } catch (e) {
    failSpan(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** Runs `fn` in span `name`, a child of `parent` (default: the caller's active context). */
export function inSpan<T>(tracer: OpenTelemetryTracer, name: string, options: TraceSpanOptions, parent: TraceContext | undefined, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
  return within(tracer.startSpan(name, options, parent), fn);
}

/**
 * `inSpan` with the span active while `fn` runs: spans the app starts inside are its children
 * (where the app's context manager carries the context across awaits, as Node's does).
 */
export function inActiveSpan<T>(tracer: OpenTelemetryTracer, name: string, options: TraceSpanOptions, parent: TraceContext, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, parent, (span) => within(span, fn));
}
