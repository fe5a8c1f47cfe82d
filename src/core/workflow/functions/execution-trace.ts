/**
 * What a traced execution of a workflow function adds to its delivery's `run.step` span: a
 * `step <name>` child span per attempt of a `ctx.step` (active while the step's function runs),
 * and events for the calls it answers from the history (`step.replayed`: a memo hit; likewise
 * `sleep.replayed`, `wait.replayed`, ...) and for sleeps, signal waits, child runs and retries as
 * they begin and end.
 */
import { contextWithSpan, traceparentOf } from '../../trace-context.js';
import { inActiveSpan, type OpenTelemetryTracer, type SpanAttributes, type TraceContext, type TraceSpan } from '../../tracing.js';
import { deliverySpanOf } from '../steps/step-tracing.js';
import type { Step } from '../steps/step.js';
import type { FunctionCall, FunctionCallKind, FunctionCallStatus } from './calls.js';
import type { CallObserver } from './context.js';

/** The event of a call the execution recorded, by kind and status (others make none). */
const CALL_EVENTS: Partial<Record<FunctionCallKind, Partial<Record<FunctionCallStatus, string>>>> = {
  step: { retrying: 'step.retry' },
  sleep: { sleeping: 'sleep.start', done: 'sleep.end' },
  wait: { waiting: 'signal.wait', done: 'signal.received', 'timed-out': 'signal.timeout' },
  invoke: { waiting: 'child.start', done: 'child.end', failed: 'child.end' },
};

export class ExecutionTrace {
  private readonly parent: TraceContext;

  private constructor(
    private readonly tracer: OpenTelemetryTracer,
    private readonly delivery: TraceSpan,
    private readonly runId: string,
  ) {
    this.parent = contextWithSpan(delivery);
  }

  /** The trace of the execution delivered as `step` of a run of `workflow` (`name@version`); undefined untraced. */
  static of(tracer: OpenTelemetryTracer | undefined, step: Step, workflow: string): ExecutionTrace | undefined {
    const delivery = tracer === undefined ? undefined : deliverySpanOf(step);
    if (tracer === undefined || delivery === undefined) return undefined;
    delivery.setAttribute('taquba.workflow', workflow);
    return new ExecutionTrace(tracer, delivery, step.runId);
  }

  /** Attempt `attempt` of the step `name` at history position `position`, in its span. */
  stepAttempt<T>(position: number, name: string, attempt: number, run: () => Promise<T>): Promise<T> {
    const attributes = { 'taquba.run.id': this.runId, 'taquba.step.name': name, 'taquba.step.attempt': attempt, 'taquba.call.position': position };
    return inActiveSpan(this.tracer, `step ${name}`, { attributes }, this.parent, run);
  }

  /** The `traceparent` of the delivery's span: the trace parent of the child runs it starts. */
  get traceparent(): string | undefined {
    return traceparentOf(this.delivery);
  }

  /** A call answered from the history instead of running (a step's value: a memo hit). */
  replayed(position: number, kind: FunctionCallKind, name: string): void {
    this.delivery.addEvent(`${kind}.replayed`, { 'taquba.call.name': name, 'taquba.call.position': position });
  }

  /** An observer of the calls the execution records (events for some), passing each on to `next`. */
  observer(next: CallObserver | undefined): CallObserver {
    return (call) => {
      this.recorded(call);
      next?.(call);
    };
  }

  private recorded(call: FunctionCall): void {
    const event = CALL_EVENTS[call.kind]?.[call.status];
    if (event === undefined) return;
    const attributes: SpanAttributes = { 'taquba.call.name': call.name, 'taquba.call.position': call.position, 'taquba.call.status': call.status, 'taquba.call.until_ms': call.untilMs ?? undefined };
    this.delivery.addEvent(event, attributes);
  }
}
