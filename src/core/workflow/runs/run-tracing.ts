/**
 * The spans of a run's submission and of signals. A run can outlive any process, and a span
 * cannot stay open across one, so a run is not one span: its submission is a short `run.submit`
 * span whose trace context the run keeps in its `taquba-traceparent` header, and every later
 * delivery of one of its steps (steps/step-tracing.ts) is a `run.step` span, a child of it, in
 * whichever process runs it. The run id attribute ties them together.
 */
import { contextOfTraceparent, HEADER_TRACEPARENT, traceparentOf } from '../../trace-context.js';
import { inActiveSpan, inSpan, SPAN_KIND, type OpenTelemetryTracer } from '../../tracing.js';
import { decodeEnvelope } from '../functions/envelope.js';
import type { TerminalEffects } from '../steps/effects-handle.js';
import type { SignalOutcome } from './signals.js';
import type { RunSpec, SubmitOutcome } from './submit.js';
import { hookObserves, type RunOutcome, type TerminalHook } from './terminal-hook.js';

/** A spec `submit` would read headers from (anything else is left for its validation to refuse). */
function isPlainSpec(spec: unknown): spec is RunSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return false;
  const headers = (spec as RunSpec).headers;
  return headers === undefined || (typeof headers === 'object' && headers !== null && !Array.isArray(headers));
}

/** `name@version` of a workflow function's start, when `input` is one. */
function workflowOf(input: Uint8Array | undefined): string | undefined {
  if (!(input instanceof Uint8Array)) return undefined;
  try {
    const { name, version } = decodeEnvelope(input, '');
    return `${name}@${version}`;
  } catch {
    return undefined;
  }
}

/**
 * `submit(spec)` in a `run.submit` span, with the span's `traceparent` in the run's headers. Its
 * parent is the `taquba-traceparent` the submitter set, else the caller's active span. A
 * duplicate keeps the first submission's header (a duplicate applies nothing).
 */
export function tracedSubmit(tracer: OpenTelemetryTracer, queueName: string, functions: boolean, spec: RunSpec, submit: (spec: RunSpec) => Promise<SubmitOutcome>): Promise<SubmitOutcome> {
  if (!isPlainSpec(spec)) return submit(spec);
  const given = spec.headers?.[HEADER_TRACEPARENT];
  const workflow = functions ? workflowOf(spec.input) : undefined;
  const attributes = { 'taquba.queue.name': queueName, 'taquba.run.id': spec.runId, 'taquba.workflow': workflow };
  return inSpan(tracer, 'run.submit', { kind: SPAN_KIND.producer, attributes }, given === undefined ? undefined : contextOfTraceparent(given), async (span) => {
    const traceparent = traceparentOf(span);
    const traced = traceparent === undefined ? spec : { ...spec, headers: { ...spec.headers, [HEADER_TRACEPARENT]: traceparent } };
    const outcome = await submit(traced);
    span.setAttributes({ 'taquba.run.id': outcome.runId, 'taquba.run.newly_submitted': outcome.newlySubmitted, 'taquba.job.id': outcome.jobId });
    return outcome;
  });
}

/** Sending a signal, in a `signal.send` span (the caller's active span its parent). */
export function tracedSignal(tracer: OpenTelemetryTracer, queueName: string, correlationKey: string, send: () => Promise<SignalOutcome>): Promise<SignalOutcome> {
  const attributes = { 'taquba.queue.name': queueName, 'taquba.signal.key': correlationKey };
  return inSpan(tracer, 'signal.send', { kind: SPAN_KIND.producer, attributes }, undefined, async (span) => {
    const outcome = await send();
    span.setAttribute('taquba.signal.outcome', outcome);
    return outcome;
  });
}

/**
 * `hook` with each notification in a `run.terminated` span under the run's trace context, active
 * while the hook runs: what it sends (a child's outcome to its parent, a webhook staged with the
 * run's `taquba-traceparent`) stays in the run's trace.
 */
export function traceHook(hook: TerminalHook, tracer: OpenTelemetryTracer, queueName: string): TerminalHook {
  return {
    observes: (outcome: RunOutcome): boolean => hookObserves(hook, outcome),
    onTermination(outcome: RunOutcome, effects: TerminalEffects): Promise<void> {
      const attributes = { 'taquba.queue.name': queueName, 'taquba.run.id': outcome.runId, 'taquba.run.outcome': outcome.status, 'taquba.run.step': outcome.finalStep };
      return inActiveSpan(tracer, 'run.terminated', { kind: SPAN_KIND.consumer, attributes }, contextOfTraceparent(outcome.headers[HEADER_TRACEPARENT]), () => hook.onTermination(outcome, effects));
    },
  };
}
