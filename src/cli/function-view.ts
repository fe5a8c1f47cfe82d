/**
 * The human view of a workflow function's run (`taquba run <id>`): its `ctx` calls by name
 * ("step research: done → …", "waiting for signal approve until …", "sleeping until …"), from
 * the timeline's `workflowFunction`, in place of the underlying step numbers.
 */
import type { FunctionCall } from '../core/workflow/functions/calls.js';
import type { FunctionTimeline } from '../core/workflow/history/function-timeline.js';
import { relativeTime, showValue } from './format.js';
import type { ViewContext } from './views.js';

/** A wait this far off had no timeout (`waitForSignal` without `timeoutMs` waits about 100 years). */
const NO_TIMEOUT_AFTER_MS = 50 * 365 * 24 * 3600_000;

/** An absolute time and how far it is from now: `2026-05-01T10:00:00.000Z (in 5 min)`. */
function when(atMs: number, v: ViewContext): string {
  return `${new Date(atMs).toISOString()} ${v.colors.dim(`(${relativeTime(atMs, v.nowMs)})`)}`;
}

const valueOf = (call: FunctionCall): string => (call.value === null ? '' : ` → ${showValue(call.value)}`);

/** One call as a line. */
export function callLine(call: FunctionCall, v: ViewContext): string {
  const c = v.colors;
  switch (call.kind) {
    case 'step': {
      const attempts = call.attempts === 1 ? '1 attempt' : `${call.attempts ?? '?'} attempts`;
      const retried = call.retried.map((r) => `; attempt ${r.attempt} failed: ${c.red(r.error)}`).join('');
      if (call.status === 'failed') return `step ${call.name}: ${c.red(`failed after ${attempts}`)}${call.error === null ? '' : `: ${c.red(call.error)}`}${retried}`;
      if (call.status === 'retrying') return `step ${call.name}: ${c.yellow(`retrying after ${attempts} failed`)}, next attempt ${when(call.untilMs!, v)}${retried}`;
      return `step ${call.name}: ${c.green(call.retried.length === 0 ? 'done' : `done after ${attempts}`)}${valueOf(call)}${retried}`;
    }
    case 'sleep':
      return call.status === 'sleeping' ? `${c.yellow('sleeping')} until ${when(call.untilMs!, v)}` : `slept until ${when(call.untilMs!, v)}`;
    case 'wait': {
      const until = call.untilMs === null || call.untilMs - v.nowMs > NO_TIMEOUT_AFTER_MS ? '(no timeout)' : `until ${when(call.untilMs, v)}`;
      if (call.status === 'waiting') return `${c.yellow('waiting')} for signal ${call.name} ${until}`;
      if (call.status === 'timed-out') return `signal ${call.name}: ${c.yellow('timed out')}${call.untilMs === null ? '' : ` at ${when(call.untilMs, v)}`}`;
      return `signal ${call.name}: ${c.green('received')}${valueOf(call)}`;
    }
    case 'invoke':
      if (call.status === 'waiting') return `${c.yellow('waiting')} for child ${call.name}`;
      if (call.status === 'failed') return `child ${call.name}: ${c.red(call.error ?? 'failed')}`;
      return `child ${call.name}: ${c.green('done')}${valueOf(call)}`;
    default:
      return `${call.kind}${valueOf(call)}`;
  }
}

/** The workflow and its calls, indented under a heading. */
export function functionLines(fn: FunctionTimeline, active: boolean, v: ViewContext): string[] {
  const lines = [`${v.colors.bold(`workflow ${fn.name}@${fn.version}`)}`];
  if (fn.calls.length === 0) lines.push(`  ${v.colors.dim(active ? 'no ctx call recorded yet' : 'calls not kept (a run deletes its history when it ends)')}`);
  for (const call of fn.calls) lines.push(`  ${callLine(call, v)}`);
  return lines;
}
