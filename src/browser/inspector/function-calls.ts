/**
 * A workflow function's run as the inspector lists it: its `ctx` calls by name (core
 * `RunTimeline.workflowFunction`, and the `function-call` events this page saw), each with what
 * happened in words ("done", "attempt 1 failed, retrying", "waiting for the signal", "sleeping"),
 * its attempts, when it waits until, and the value it produced. Pure functions, no DOM.
 */
import type { FunctionCall, FunctionCallStatus, FunctionTimeline } from '../../core/workflow/index.js';
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
  /** When it waits until or waited until, a failed step's error, the errors of a step's retried attempts. */
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

/**
 * The calls of a function run in history order: those its history holds, and those only this
 * page saw reported (newer than the last read, or all of them once the run ended and its history
 * was deleted).
 */
export function mergeCalls(stored: readonly FunctionCall[], seen: ReadonlyMap<number, FunctionCall>): FunctionCall[] {
  const byPosition = new Map<number, FunctionCall>(seen);
  for (const call of stored) byPosition.set(call.position, call);
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
}

const plural = (n: number | null): string => `${n ?? '?'} attempt${n === 1 ? '' : 's'}`;

/** "attempt 1: Error: 503 · attempt 2: Error: 503", or null when no attempt was retried. */
function retriedErrors(call: FunctionCall): string | null {
  return call.retried.length === 0 ? null : call.retried.map((r) => `attempt ${r.attempt}: ${r.error}`).join(' · ');
}

/** `calls` (a function run's, in history order) described for display at time `now`. */
export function describeCalls(calls: readonly FunctionCall[], now: number): CallView[] {
  return calls.map((call) => {
    const title = call.kind === 'step' ? `step ${call.name}` : call.kind === 'wait' ? `signal ${call.name}` : call.kind === 'invoke' ? `child ${call.name}` : call.kind;
    const base = { position: call.position, title, status: call.status, value: call.value, failed: false };
    switch (call.status) {
      case 'failed': {
        if (call.kind === 'invoke') return { ...base, failed: true, text: 'failed', facts: call.error };
        const lastError = call.retried.length === 0 ? call.error : `attempt ${call.attempts ?? '?'}: ${call.error ?? ''}`;
        return { ...base, failed: true, text: `failed after ${plural(call.attempts)}`, facts: [retriedErrors(call), lastError].filter(Boolean).join(' · ') || null };
      }
      case 'retrying':
        return { ...base, text: `attempt ${call.attempts ?? '?'} failed, retrying`, facts: [retriedErrors(call), call.untilMs === null ? null : `next attempt ${describeTime(call.untilMs, now)}`].filter(Boolean).join(' · ') };
      case 'sleeping':
        return { ...base, text: 'sleeping', facts: until(call.untilMs, now) };
      case 'waiting':
        return { ...base, text: call.kind === 'invoke' ? 'waiting for the child' : 'waiting for the signal', facts: until(call.untilMs, now) };
      case 'timed-out':
        return { ...base, text: 'timed out without the signal', facts: call.untilMs === null ? null : `at ${describeTime(call.untilMs, now)}` };
      case 'done':
        if (call.retried.length > 0) return { ...base, text: `done after ${plural(call.attempts)}`, facts: retriedErrors(call) };
        return { ...base, text: DONE_TEXT[call.kind] ?? 'done', facts: call.kind === 'sleep' ? until(call.untilMs, now) : null };
    }
  });
}

/** A function run's signal by its name (its correlation key is `<runId>#<name>`), any other by its key. */
export function signalLabel(runId: string, correlationKey: string, fn: FunctionTimeline | null): string {
  const own = `${runId}#`;
  return fn !== null && correlationKey.startsWith(own) ? correlationKey.slice(own.length) : correlationKey;
}
