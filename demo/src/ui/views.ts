/**
 * The agent's own panel, rendered from a `RunSnapshot`: the run's state (the inspector's words)
 * and what it is doing or waiting for, the draft to decide on, the action buttons (labelled for
 * what they do now), what the running step streams, every step with its attempts and output, and
 * the published brief as Markdown. Runs, timelines, signals and dead letters in detail are the
 * inspector's (`<taquba-inspector>`). Every function replaces its content and keeps keyboard focus
 * where it was.
 */
import { HEARTBEAT_MS, MODEL_STEP_POLICY, SIGNALS } from '../shared/agent-state.js';
import type { ModelCallSummary } from '../shared/demo-db.js';
import { byId, h, replaceChildren } from './dom.js';
import { renderMarkdown } from './markdown.js';
import {
  approvalStage,
  draftOf,
  endReason,
  escalated,
  failedStep,
  isActive,
  stateOf,
  STATE_TEXT,
  stepsOf,
  waitingFor,
  type AttemptView,
  type RunSnapshot,
  type StepView,
} from './run-model.js';

/** What the step running now has streamed so far. */
export interface Streaming {
  readonly step: string;
  readonly text: string;
}

/** What the page itself knows beyond the snapshot: a decision being sent from this tab. */
export interface PanelState {
  /** A decision or retry from this tab is on its way: its buttons wait. */
  readonly sending: boolean;
  /** This tab's note about what it sent (shown instead of the generic note). */
  readonly noteShown: boolean;
  /** The demo's Node backend (`?server=`): its URL (null: none given) and whether it answered the last probe. */
  readonly server: { readonly url: string | null; readonly answers: boolean };
  /** A hand-off from this tab is on its way (it waits for the run's next pause). */
  readonly handingOff: boolean;
}

/** "9:40:02 PM (in 1 min 40 s)", "9:36:37 PM (now)", "9:30:01 PM (12 s ago)". */
export function describeTime(atMs: number, nowMs: number): string {
  const clock = new Date(atMs).toLocaleTimeString();
  const delta = Math.round((atMs - nowMs) / 1000);
  if (Math.abs(delta) < 1) return `${clock} (now)`;
  return delta > 0 ? `${clock} (in ${seconds(delta)})` : `${clock} (${seconds(-delta)} ago)`;
}

function seconds(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 === 0 ? '' : ` ${s % 60} s`}`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function describeDuration(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function attemptText(a: AttemptView, now: number): string {
  switch (a.status) {
    case 'running':
      return `running for ${describeDuration(now - a.startedAt)}`;
    case 'completed':
      return `completed in ${describeDuration(a.durationMs ?? 0)}`;
    case 'cancelled':
      return `cancelled after ${describeDuration(a.durationMs ?? 0)}`;
    case 'interrupted':
      // It was last seen alive `ranAtLeastMs` in, and would have said so again within a heartbeat.
      return `interrupted by a reload, crash or closed tab after ${((a.ranAtLeastMs ?? 0) / 1000).toFixed(1)}–${(((a.ranAtLeastMs ?? 0) + HEARTBEAT_MS) / 1000).toFixed(1)} s (started ${new Date(a.startedAt).toLocaleTimeString()})`;
    case 'failed':
      return `failed after ${describeDuration(a.durationMs ?? 0)}: ${a.error ?? 'unknown error'}${a.retryInMs === null ? '' : ` · retried after ${describeDuration(a.retryInMs)}`}`;
  }
}

const STEP_STATUS_TEXT: Readonly<Record<StepView['status'], string>> = {
  done: 'done',
  recording: 'finishing',
  running: 'running',
  retrying: 'retrying after an error',
  failed: 'failed',
  interrupted: 'interrupted',
  cancelled: 'cancelled',
};

function stepFacts(v: StepView): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const interrupted = v.attempts.filter((a) => a.status === 'interrupted').length;
  const failed = v.attempts.filter((a) => a.status === 'failed').length;
  const parts = [count(v.attempts.length, 'attempt')];
  if (interrupted > 0) parts.push(`${interrupted} interrupted`);
  if (failed > 0) parts.push(`${failed} failed`);
  const took = [...v.attempts].reverse().find((a) => a.status === 'completed')?.durationMs;
  if (took !== undefined && took !== null) parts.push(`took ${describeDuration(took)}`);
  if (v.modelCalls > 0) parts.push(v.modelCalls === 1 ? 'model called once' : `model called ${v.modelCalls} times`);
  if (v.memoHits > 0) parts.push(`${count(v.memoHits, 'memo hit')} (answer read from the run's history, model not called again)`);
  if (v.ranOn !== null) parts.push(`ran ${v.ranOn === 'the server' ? 'on' : 'in'} ${v.ranOn}`);
  return parts.join(' · ');
}

/** Where a handed-off run is, in a sentence. */
function locationLine(s: RunSnapshot): { text: string; problem: boolean } | null {
  const where = s.location;
  if (where === null) return null;
  const server = where.movedTo ?? 'another store';
  if (!where.delivered) return { text: `Left this browser at step ${where.atStep} for the server (${server}): delivered as soon as the server answers (also after a reload).`, problem: true };
  return where.serverAnswers
    ? { text: `Continues on the server (${server}) since step ${where.atStep}: read from there, and decisions go there.`, problem: false }
    : { text: `Continues on the server (${server}) since step ${where.atStep}, which does not answer now.`, problem: true };
}

/** The hand-off button's title: what it does now, or why it cannot. */
function handOffTitle(s: RunSnapshot, active: boolean, ui: PanelState): string {
  if (s.location !== null) return 'This run has moved to the server.';
  if (ui.server.url === null) return 'No server: start one with npm run demo:server and open this page with ?server=<its URL>.';
  if (!ui.server.answers) return `No server answers at ${ui.server.url} (npm run demo:server).`;
  if (!active) return 'Only a task still running can move.';
  return `Moves this run to the server at ${ui.server.url}: it leaves this browser at its next pause and continues there.`;
}

/** What the run does or waits for now, in a sentence, and whether it reads as a problem. */
function nowLine(s: RunSnapshot, steps: readonly StepView[], now: number): { text: string; problem: boolean } | null {
  const state = stateOf(s);
  const wait = waitingFor(s);
  switch (state) {
    case 'pending':
      return { text: 'Queued: the tab that executes runs picks it up next.', problem: false };
    case 'running':
    case 'cancelling': {
      if (state === 'cancelling') return { text: 'Cancelling: the running step is being stopped.', problem: false };
      const retrying = steps.find((v) => v.status === 'retrying');
      const failed = retrying?.attempts.at(-1);
      if (retrying && failed) {
        const at = failed.startedAt + (failed.durationMs ?? 0) + (failed.retryInMs ?? 0);
        return { text: `${retrying.label}: the last attempt failed: ${failed.error ?? 'unknown error'}. Next attempt ${describeTime(at, now)}.`, problem: true };
      }
      const running = steps.find((v) => v.status === 'running' || v.status === 'recording');
      return { text: running ? `Running ${running.label}.` : 'Running.', problem: false };
    }
    case 'waiting-for-signal':
      if (wait?.name === SIGNALS.approve) {
        return escalated(s)
          ? { text: `Escalated: no decision came in time. Waiting for the signal "approve" again, until ${describeTime(wait.until, now)}; without one the run fails.`, problem: false }
          : { text: `Waiting for the signal "approve": your decision on the draft below, until ${describeTime(wait.until, now)}; without one it escalates once.`, problem: false };
      }
      if (wait?.name === SIGNALS.retry) {
        const failed = failedStep(s);
        const what = failed ? `Step ${failed.step} failed after ${failed.attempts ?? MODEL_STEP_POLICY.attempts} attempts: ${failed.error ?? 'unknown error'}.` : 'A step failed.';
        const ends = s.record?.outage ? ' and ends the simulated outage' : '';
        return { text: `${what} Waiting for the signal "retry": Retry runs the step again${ends}; Give up fails the run.`, problem: true };
      }
      return { text: `Waiting for the signal "${wait?.name ?? '?'}".`, problem: false };
    case 'scheduled': {
      const timer = s.timeline.active?.waitingFor;
      return { text: timer?.type === 'timer' ? `Scheduled: the run goes on ${describeTime(timer.at, now)}.` : 'Scheduled.', problem: timer?.type === 'timer' && timer.reason === 'retry' };
    }
    case 'dead':
      return { text: 'Dead-lettered: the runtime could not deliver the run. Retry it under Dead letters in the inspector.', problem: true };
    case 'ended':
      return { text: 'Ended: the store no longer keeps how (outcomes are kept 30 days).', problem: false };
    default:
      return null;
  }
}

/** The selected run's panel; `s` undefined shows the empty state. */
export function renderRunDetail(s: RunSnapshot | undefined, streaming: Streaming | undefined, calls: ModelCallSummary, ui: PanelState): void {
  byId('detail-empty').hidden = s !== undefined;
  byId('detail').hidden = s === undefined;
  if (!s) return;
  const now = Date.now();
  const state = stateOf(s);
  const active = isActive(s);
  const steps = stepsOf(s);
  const title = s.record?.topic ?? s.runId;
  const retrying = active && steps.some((v) => v.status === 'retrying');
  const stateText = STATE_TEXT[state];
  // Only a status change is announced.
  const announcement = `${title}: ${stateText}${retrying ? ', retrying after an error' : ''}`;
  const announcer = byId('status-announcer');
  if (announcer.textContent !== announcement) announcer.textContent = announcement;

  // A run not delivered yet is nowhere to read: where it is says it all.
  const located = locationLine(s);
  const line = s.location !== null && !s.location.delivered ? null : nowLine(s, steps, now);
  const reason = endReason(s);
  const started = s.record?.createdAt ?? s.timeline.active?.submittedAtMs ?? null;
  replaceChildren(
    byId('run-header'),
    h(
      'p',
      { class: 'run-title' },
      h('strong', {}, title),
      h('span', { class: `badge ${state}` }, stateText),
      retrying ? h('span', { class: 'badge retry' }, 'retrying after an error') : null,
      active && escalated(s) ? h('span', { class: 'badge retry' }, 'escalated') : null,
    ),
    h('p', { class: 'run-meta' }, [`Run ${s.runId}`, started === null ? null : `started ${new Date(started).toLocaleTimeString()}`, `model calls for this run: ${calls.calls} (memo hits ${calls.memoHits}, repeated ${calls.repeated})`].filter(Boolean).join(' · ')),
    ...(located ? [h('p', { class: located.problem ? 'run-now run-location problem' : 'run-now run-location' }, located.text)] : []),
    ...(line ? [h('p', { class: line.problem ? 'run-now problem' : 'run-now' }, line.text)] : []),
    ...(reason ? [h('p', { class: state === 'cancelled' ? 'run-ended' : 'run-error' }, reason)] : []),
  );

  // The draft is what a decision is about: shown in full above the buttons while it is open.
  const stage = approvalStage(s);
  const draft = state === 'succeeded' ? null : draftOf(s);
  const deciding = stage === 'before' || stage === 'waiting' || stage === 'sent-early';
  replaceChildren(byId('draft'), ...(draft ? [h('h3', {}, deciding ? 'Draft to approve' : 'Draft'), h('blockquote', { class: 'draft' }, draft)] : []));

  const open = !ui.sending && (stage === 'before' || stage === 'waiting');
  const approve = byId<HTMLButtonElement>('approve');
  const reject = byId<HTMLButtonElement>('reject');
  // Before the approval a decision is kept until the run gets there: the buttons say so.
  approve.textContent = stage === 'before' ? 'Approve in advance' : 'Approve';
  reject.textContent = stage === 'before' ? 'Reject in advance' : 'Reject';
  approve.disabled = !open;
  reject.disabled = !open;
  byId<HTMLInputElement>('reject-reason').disabled = !open;
  byId<HTMLButtonElement>('cancel').disabled = !active || state === 'cancelling';
  const handOff = byId<HTMLButtonElement>('hand-off');
  handOff.disabled = !active || state === 'cancelling' || s.location !== null || ui.server.url === null || !ui.server.answers || ui.handingOff;
  handOff.title = handOffTitle(s, active, ui);
  byId('early-hint').hidden = stage !== 'before';
  const sentEarly = byId('approval-note');
  sentEarly.hidden = stage !== 'sent-early' || ui.noteShown;
  const waitsForRetry = waitingFor(s)?.name === SIGNALS.retry;
  byId('retry-actions').hidden = !waitsForRetry;
  for (const id of ['retry-step', 'give-up']) byId<HTMLButtonElement>(id).disabled = !waitsForRetry || ui.sending;

  const runningStep = steps.find((v) => v.status === 'running');
  const activity = active && runningStep && streaming?.step === runningStep.step ? streaming : undefined;
  replaceChildren(byId('activity'), ...(activity ? [h('h3', {}, `Now: ${runningStep!.label}`), h('p', { class: 'step-output streaming', 'aria-busy': 'true' }, activity.text)] : []));

  replaceChildren(
    byId('steps'),
    ...(steps.length > 0
      ? [
          h('h3', {}, 'Steps'),
          h(
            'ol',
            { class: 'steps', 'aria-label': 'Steps' },
            ...steps.map((v) =>
              h(
                'li',
                { class: `step-item ${v.status}` },
                h('span', { class: 'note-label' }, v.label),
                h('span', { class: `step-status ${v.status}` }, ` ${STEP_STATUS_TEXT[v.status]}`),
                h('span', { class: 'step-facts' }, ` · ${stepFacts(v)}`),
                v.attempts.length > 1 || v.attempts.some((a) => a.status !== 'completed' && a.status !== 'running')
                  ? h('ol', { class: 'attempts', 'aria-label': `Attempts of ${v.label}` }, ...v.attempts.map((a) => h('li', { class: a.status }, attemptText(a, now))))
                  : null,
                v.output && v.step !== 'publish' ? h('span', { class: 'step-output' }, v.output) : null,
              ),
            ),
          ),
        ]
      : []),
  );

  const article = s.result?.article;
  replaceChildren(byId('article'), ...(article ? [h('h3', {}, 'Published brief'), h('article', { class: 'article' }, ...renderMarkdown(article, 4))] : []));
}

/** The header's model-call counter. */
export function renderModelCalls(all: ModelCallSummary): void {
  byId('model-calls').textContent = `${all.calls} real · ${all.memoHits} memo hit${all.memoHits === 1 ? '' : 's'} · ${all.repeated} repeated`;
}
