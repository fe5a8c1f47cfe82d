/**
 * The agent's own panel, rendered from plain data: the selected run's header, its action buttons
 * (labelled for what they do now), what the running step streams, the notes each finished step
 * produced, and the published brief as Markdown. Runs, timelines, memo, KV and dead letters are
 * the inspector's (`<taquba-inspector>`). Every function replaces its content and keeps keyboard
 * focus where it was.
 */
import type { StepRecord } from '../shared/agent-state.js';
import type { ModelCallSummary } from '../shared/demo-db.js';
import { byId, h, replaceChildren } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { isActive, statusOf, type RunRow } from './run-model.js';

function badge(row: RunRow): HTMLElement {
  const status = statusOf(row);
  return h('span', { class: `badge ${status.kind}` }, status.text);
}

/** What the step running now has streamed so far. */
export interface Activity {
  readonly label: string;
  readonly text: string;
}

/** Why the run ended, in words for a person (a cancel is not a failure and names no internal id). */
function endReason(row: RunRow): string | null {
  const outcome = row.outcome;
  if (!outcome) return null;
  if (outcome.status === 'cancelled') return 'Cancelled on request.';
  return outcome.error ? `Reason: ${outcome.error}` : null;
}

/** Whether the person opened the notes list (kept across re-renders). */
let notesOpen = false;

/** The selected run's panel; `row` undefined shows the empty state. */
export function renderRunDetail(row: RunRow | undefined, records: readonly StepRecord[], activity: Activity | null, calls: ModelCallSummary): void {
  byId('detail-empty').hidden = row !== undefined;
  byId('detail').hidden = row === undefined;
  if (!row) return;
  const status = statusOf(row);
  // Only a status change is announced.
  const announcement = `${row.meta.topic}: ${status.text}`;
  const announcer = byId('status-announcer');
  if (announcer.textContent !== announcement) announcer.textContent = announcement;
  const reason = endReason(row);
  replaceChildren(
    byId('run-header'),
    h('p', { class: 'run-title' }, h('strong', {}, row.meta.topic), badge(row)),
    h('p', { class: 'run-meta' }, `Run ${row.runId} · started ${new Date(row.meta.createdAt).toLocaleTimeString()} · model calls for this run: ${calls.calls} (memo hits ${calls.memoHits}, repeated ${calls.repeated})`),
    ...(reason ? [h('p', { class: row.outcome?.status === 'cancelled' ? 'run-ended' : 'run-error' }, reason)] : []),
  );

  const actionable = isActive(row) && status.kind !== 'cancelling';
  // Before the approval step a decision is buffered: say so on the buttons themselves.
  const early = actionable && status.kind !== 'waiting';
  const approve = byId<HTMLButtonElement>('approve');
  const reject = byId<HTMLButtonElement>('reject');
  approve.textContent = early ? 'Approve in advance' : 'Approve';
  reject.textContent = early ? 'Reject in advance' : 'Reject';
  for (const button of [approve, reject, byId<HTMLButtonElement>('cancel')]) button.disabled = !actionable;
  byId<HTMLInputElement>('reject-reason').disabled = !actionable;
  byId('early-hint').hidden = !early;

  const notes = [...records]
    .sort((a, b) => a.stepNumber - b.stepNumber)
    .filter((r) => r.output)
    .map((r) => {
      const model = r.usedModel ? (r.memoHit ? ' · memo hit (model not called again)' : ' · model called') : '';
      return h('li', {}, h('span', { class: 'note-label' }, r.label), h('span', { class: 'step-facts' }, ` · attempt ${r.attempt} · ${r.durationMs} ms${model}`), h('span', { class: 'step-output' }, r.output));
    });
  replaceChildren(
    byId('activity'),
    ...(activity && actionable ? [h('h3', {}, `Now: ${activity.label}`), h('p', { class: 'step-output streaming', 'aria-busy': 'true' }, activity.text)] : []),
    // Collapsed unless the person opens it (the inspector's timeline is the overview).
    ...(notes.length > 0
      ? [
          h(
            'details',
            { class: 'notes-box', open: notesOpen },
            h('summary', { 'data-focus': 'notes', onclick: (e: Event) => (notesOpen = !((e.currentTarget as HTMLElement).parentElement as HTMLDetailsElement).open) }, h('h3', {}, `What each step produced (${notes.length})`)),
            h('ol', { class: 'notes' }, ...notes),
          ),
        ]
      : []),
  );

  const article = row.outcome?.article;
  replaceChildren(byId('article'), ...(article ? [h('h3', {}, 'Published brief'), h('article', { class: 'article' }, ...renderMarkdown(article, 4))] : []));
}

/** The header's model-call counter. */
export function renderModelCalls(all: ModelCallSummary): void {
  byId('model-calls').textContent = `${all.calls} real · ${all.memoHits} memo hits · ${all.repeated} repeated`;
}
