/**
 * A workflow function's run as the inspector lists it: its `ctx` calls by name (core
 * `RunTimeline.workflowFunction`), each with what happened in words ("done", "waiting for the
 * signal", "sleeping"), when it waits until, and the value it produced. Pure functions, no DOM.
 */
import type { FunctionCallStatus, FunctionTimeline } from '../../core/workflow/index.js';
import { describeTime } from './format.js';

/** A wait this far off had no timeout (`waitForSignal` without `timeoutMs` waits about 100 years). */
const NO_TIMEOUT_AFTER_MS = 50 * 365 * 24 * 3600_000;

/** A signal wait's limit: "times out <when>", or "no timeout" for the decades-long default. */
export function waitLimit(timeoutAt: number, now: number): string {
  return timeoutAt - now > NO_TIMEOUT_AFTER_MS ? 'no timeout' : `times out ${describeTime(timeoutAt, now)}`;
}

export interface CallView {
  /** The call's history position (stable across re-renders). */
  readonly position: number;
  /** "step research", "signal approve", "sleep", "now". */
  readonly title: string;
  readonly status: FunctionCallStatus;
  /** The status in words. */
  readonly text: string;
  /** When it waits until or waited until, or a failed step's error. */
  readonly facts: string | null;
  readonly failed: boolean;
  /** The value in the value codec's encoding (step result, signal value, drawn value). */
  readonly value: Uint8Array | null;
}

const DONE_TEXT: Readonly<Record<string, string>> = { step: 'done', sleep: 'slept', wait: 'received', invoke: 'done', now: 'recorded', random: 'recorded', uuid: 'recorded' };

function until(untilMs: number | null, now: number): string | null {
  if (untilMs === null) return null;
  return untilMs - now > NO_TIMEOUT_AFTER_MS ? 'no timeout' : `until ${describeTime(untilMs, now)}`;
}

/** The calls of `fn` in history order, described for display at time `now`. */
export function describeCalls(fn: FunctionTimeline, now: number): CallView[] {
  return fn.calls.map((call) => {
    const title = call.kind === 'step' ? `step ${call.name}` : call.kind === 'wait' ? `signal ${call.name}` : call.kind === 'invoke' ? `child ${call.name}` : call.kind;
    const base = { position: call.position, title, status: call.status, value: call.value, failed: false };
    switch (call.status) {
      case 'failed':
        if (call.kind === 'invoke') return { ...base, failed: true, text: 'failed', facts: call.error };
        return { ...base, failed: true, text: `failed after ${call.attempts ?? '?'} attempt${call.attempts === 1 ? '' : 's'}`, facts: call.error };
      case 'sleeping':
        return { ...base, text: 'sleeping', facts: until(call.untilMs, now) };
      case 'waiting':
        return { ...base, text: call.kind === 'invoke' ? 'waiting for the child' : 'waiting for the signal', facts: until(call.untilMs, now) };
      case 'timed-out':
        return { ...base, text: 'timed out without the signal', facts: call.untilMs === null ? null : `at ${describeTime(call.untilMs, now)}` };
      case 'done':
        return { ...base, text: DONE_TEXT[call.kind] ?? 'done', facts: call.kind === 'sleep' ? until(call.untilMs, now) : null };
    }
  });
}

/** A function run's signal by its name (its correlation key is `<runId>#<name>`), any other by its key. */
export function signalLabel(runId: string, correlationKey: string, fn: FunctionTimeline | null): string {
  const own = `${runId}#`;
  return fn !== null && correlationKey.startsWith(own) ? correlationKey.slice(own.length) : correlationKey;
}
