/**
 * The page's panels, rendered from plain data: the run list, the selected run (header, action
 * buttons, timeline, published brief), the dead letters, and the run's KV and memo entries.
 * Every function replaces its panel's content and keeps keyboard focus where it was.
 */
import { decode } from '@msgpack/msgpack';
import type { DeadStepView } from 'taquba-workflow/browser';
import { approvalKey, MODEL_MEMO_KEY, type StepRecord } from '../shared/agent-state.js';
import type { ModelCallSummary } from '../shared/demo-db.js';
import { byId, h, replaceChildren } from './dom.js';
import { isActive, statusOf, timeline, type LiveStep, type RunRow, type TimelineEntry } from './run-model.js';

function badge(row: RunRow): HTMLElement {
  const status = statusOf(row);
  return h('span', { class: `badge ${status.kind}` }, status.text);
}

function seconds(ms: number): string {
  return `${Math.max(0, Math.ceil(ms / 1000))} s`;
}

function short(text: string): string {
  return text.length > 90 ? `${text.slice(0, 90)}…` : text;
}

export function renderRuns(rows: Iterable<RunRow>, selected: string | null, onSelect: (runId: string) => void): void {
  const items = [...rows].map((row) =>
    h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          class: row.runId === selected ? 'run selected' : 'run',
          'aria-current': row.runId === selected ? 'true' : null,
          'data-focus': `run:${row.runId}`,
          onclick: () => onSelect(row.runId),
        },
        h('span', { class: 'run-topic' }, row.meta.topic),
        badge(row),
        h('span', { class: 'run-meta' }, `${new Date(row.meta.createdAt).toLocaleTimeString()} · ${row.runId}`),
      ),
    ),
  );
  replaceChildren(byId('runs'), ...(items.length > 0 ? items : [h('li', { class: 'empty' }, 'No runs yet.')]));
}

/** What one timeline entry shows under its label, and the state its marker takes. */
function stepLines(row: RunRow, entry: TimelineEntry, live: readonly LiveStep[]): { state: string; lines: HTMLElement[] } {
  const status = statusOf(row);
  const active = isActive(row);
  const lines: HTMLElement[] = [];
  const r = entry.record;
  const l = entry.live;
  let state = 'pending';
  if (r) {
    state = 'done';
    const model = r.usedModel ? (r.memoHit ? ' · memo hit (model not called again)' : ' · model called') : '';
    lines.push(h('span', { class: 'step-facts' }, `attempt ${r.attempt} · ${r.durationMs} ms${model}`));
    if (r.output) lines.push(h('span', { class: 'step-output' }, r.output));
  } else if (l) {
    for (const f of l.failures) lines.push(h('span', { class: 'step-failure' }, `attempt ${f.attempt} failed: ${f.error}`));
    if (l.running) {
      state = 'running';
      const resumed = l.interruptions > 0 ? ` · resumed after ${l.interruptions} interruption${l.interruptions === 1 ? '' : 's'}` : '';
      lines.push(h('span', { class: 'step-facts' }, `running · attempt ${l.attempt} of ${l.maxAttempts}${resumed}`));
      if (l.streamed) lines.push(h('span', { class: 'step-output streaming' }, l.streamed));
    } else if (l.retryAt !== null) {
      state = 'retry';
      lines.push(h('span', { class: 'step-facts' }, `retry scheduled in ${seconds(l.retryAt - Date.now())}`));
    }
  }
  const current = !r && active && entry.stepNumber === row.view?.currentStep;
  if (current && status.kind === 'waiting') {
    state = 'waiting';
    const waiting = l?.waiting ?? live.find((s) => s.waiting)?.waiting;
    const countdown = waiting ? ` · ${row.escalated ? 'gives up' : 'escalates'} in ${seconds(waiting.until - Date.now())}` : '';
    lines.push(h('span', { class: 'step-facts' }, `waiting for signal "${approvalKey(row.runId)}"${countdown}`));
  } else if (current && status.kind === 'retry' && state === 'pending') {
    state = 'retry';
    lines.push(h('span', { class: 'step-facts' }, 'retry scheduled'));
  }
  return { state, lines };
}

/** The selected run's panel; `row` undefined shows the empty state. */
export function renderRunDetail(row: RunRow | undefined, records: readonly StepRecord[], live: readonly LiveStep[], calls: ModelCallSummary): void {
  byId('detail-empty').hidden = row !== undefined;
  byId('detail').hidden = row === undefined;
  if (!row) return;
  const status = statusOf(row);
  // Only a status change is announced (the timeline re-renders every second for its countdowns).
  const announcement = `${row.meta.topic}: ${status.text}`;
  const announcer = byId('status-announcer');
  if (announcer.textContent !== announcement) announcer.textContent = announcement;
  replaceChildren(
    byId('run-header'),
    h('p', { class: 'run-title' }, h('strong', {}, row.meta.topic), ' ', badge(row)),
    h(
      'p',
      { class: 'run-meta' },
      `Run ${row.runId} · started ${new Date(row.meta.createdAt).toLocaleTimeString()} · model calls for this run: ${calls.calls} (memo hits ${calls.memoHits}, repeated ${calls.repeated})`,
    ),
    ...(row.outcome?.error ? [h('p', { class: 'run-error' }, `Reason: ${row.outcome.error}`)] : []),
  );
  const actionable = isActive(row) && status.kind !== 'cancelling';
  for (const id of ['approve', 'reject', 'cancel']) byId<HTMLButtonElement>(id).disabled = !actionable;

  const entries = timeline(row, records, live).map((entry) => {
    const { state, lines } = stepLines(row, entry, live);
    return h('li', { class: `step ${state}` }, h('span', { class: 'step-label' }, `Step ${entry.stepNumber + 1}: ${entry.label}`), ...lines);
  });
  replaceChildren(byId('timeline'), ...entries);

  const article = row.outcome?.article;
  replaceChildren(byId('article'), ...(article ? [h('h3', {}, 'Published brief'), h('pre', { class: 'article' }, article)] : []));
}

export function renderDeadSteps(dead: readonly DeadStepView[]): void {
  const items = dead.map((d) =>
    h(
      'li',
      {},
      h('strong', {}, d.runId ? `${d.runId} · step ${(d.stepNumber ?? 0) + 1}` : d.jobId),
      h('span', { class: 'run-meta' }, ` · ${d.attempts}/${d.maxAttempts} attempts${d.interruptions > 0 ? ` · ${d.interruptions} interrupted` : ''}`),
      h('div', { class: 'step-failure' }, d.lastError ?? ''),
      ...(d.payloadError ? [h('div', { class: 'step-failure' }, `Payload unavailable (${d.payloadError.code}): ${d.payloadError.object}`)] : []),
    ),
  );
  replaceChildren(byId('dead'), ...(items.length > 0 ? items : [h('li', { class: 'empty' }, 'No dead letters.')]));
}

/** The run's caller-KV entries (key, bytes) and its memoized model calls (step, stored bytes or null once swept). */
export function renderEntries(kv: readonly (readonly [string, Uint8Array])[], memo: readonly (readonly [number, Uint8Array | null])[]): void {
  replaceChildren(
    byId('entries'),
    h('h3', {}, 'Caller KV'),
    h('ul', { class: 'plain mono' }, ...kv.map(([k, v]) => h('li', {}, `${k} `, h('span', { class: 'run-meta' }, `(${v.byteLength} bytes)`)))),
    h('h3', {}, 'Memo'),
    memo.length === 0
      ? h('p', { class: 'empty' }, 'No memoized model calls yet.')
      : h(
          'ul',
          { class: 'plain' },
          ...memo.map(([step, bytes]) =>
            h('li', {}, h('span', { class: 'mono' }, `step ${step + 1} / ${MODEL_MEMO_KEY}`), ': ', bytes ? short(String(decode(bytes))) : h('em', {}, 'swept')),
          ),
        ),
  );
}

/** The header's model-call counter. */
export function renderModelCalls(all: ModelCallSummary): void {
  byId('model-calls').textContent = `${all.calls} real · ${all.memoHits} memo hits · ${all.repeated} repeated`;
}
