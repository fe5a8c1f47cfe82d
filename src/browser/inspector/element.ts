/**
 * `<taquba-inspector>`: a framework-free custom element that shows a store's runs live through a
 * page's `WorkflowClient`: the run list (filterable by state), one run's timeline (steps done,
 * the current one with each attempt and its times, steps still to come when the app names them,
 * signals waited for or already buffered, memo entries, the app's KV values decoded), the dead
 * letters with retry and discard, the cron schedules (when the store has any) and the queue counts.
 *
 * Live: run events trigger a re-read (coalesced), and a poll catches what events do not carry
 * (another tab's submissions, a follower's view). Accessible: real buttons and lists, one polite
 * live region for changes, focus kept across re-renders, a status filter with a label. Styled
 * through `--taquba-inspector-*` custom properties and `::part()` (styles.ts).
 *
 * The class is built on first `defineTaqubaInspector()` call, so importing the module touches no
 * DOM API (it loads in Node, in workers and during server rendering).
 */
import type { QueueStats } from '../../core/queue/index.js';
import type { DeadStepView, HostEvent, ScheduleView } from '../protocol.js';
import { h, replaceKeepingFocus } from './dom.js';
import type { FunctionCall, FunctionTimeline } from '../../core/workflow/index.js';
import { WORKFLOW_HEADER } from '../../core/workflow/functions/workflow-run.js';
import { describeBytes, describeDuration, describeSchedule, describeTime, describeValue } from './format.js';
import { describeCalls, mergeCalls, signalLabel, waitLimit, type CallView } from './function-calls.js';
import { ACTIVE, FILTERS, RunReads, STATE_TEXT, type InspectorClient, type InspectorOptions, type RunDetailView, type RunRow, type RunState } from './run-reads.js';
import { INSPECTOR_CSS } from './styles.js';
import { buildTimeline, RunObserver, type RunDescription, type StepRow } from './timeline.js';

export type { InspectorClient, InspectorOptions } from './run-reads.js';

/** The element's public surface. */
export interface TaqubaInspectorElement extends HTMLElement {
  /** The client to read from; setting it (re)starts the live view. */
  client: InspectorClient | null;
  options: InspectorOptions;
  /** The run whose timeline is shown. */
  readonly selectedRunId: string | null;
  /** Shows this run's timeline (as if picked in the list) without announcing a selection event. */
  selectRun(runId: string | null): void;
  /** Re-reads everything now; resolves when the view shows it. */
  refresh(): Promise<void>;
}

/** Fired (bubbling, composed) when the person picks a run in the list; `detail.runId`. */
export const RUN_SELECT_EVENT = 'taquba-inspector-select';

const DEAD_PAGE = 100;

/** How a workflow function's call is drawn (the step styles). */
const CALL_PHASE: Readonly<Record<CallView['status'], StepRow['phase']>> = { done: 'done', failed: 'failed', retrying: 'scheduled', sleeping: 'scheduled', waiting: 'waiting', 'timed-out': 'done' };

const PHASE_TEXT: Readonly<Record<StepRow['phase'], string>> = {
  done: 'done',
  running: 'running',
  waiting: 'waiting',
  scheduled: 'scheduled',
  pending: 'pending (queued to run)',
  cancelling: 'cancelling',
  failed: 'failed',
  cancelled: 'cancelled',
  upcoming: 'still to come',
};

function errorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`;
}

/** A comparable fingerprint of plain data (bytes by length and FNV-1a hash, not content). */
function digest(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof Uint8Array)) return v;
    let hash = 0x811c9dc5;
    for (const byte of v) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
    return `${v.byteLength}:${hash}`;
  });
}

function createInspectorClass(): new () => TaqubaInspectorElement {
  return class TaqubaInspector extends HTMLElement implements TaqubaInspectorElement {
    private readonly root: ShadowRoot;
    private readonly observer = new RunObserver();
    private reads: RunReads | undefined;
    private currentClient: InspectorClient | null = null;
    private currentOptions: InspectorOptions = {};
    private unsubscribe: (() => void) | undefined;
    private pollTimer: ReturnType<typeof setInterval> | undefined;
    private soonTimer: ReturnType<typeof setTimeout> | undefined;
    private reading: Promise<void> | undefined;
    private readAgain = false;
    private filter = 'all';
    private selected: string | null = null;
    private rows: RunRow[] = [];
    private detail: RunDetailView | null = null;
    private dead: readonly DeadStepView[] = [];
    private queues: readonly QueueStats[] = [];
    private schedules: readonly ScheduleView[] = [];
    private error: string | null = null;
    /** States last shown, to announce changes (not the first sight of a run). */
    private readonly lastStates = new Map<string, RunState>();
    /** Dead letters whose discard awaits confirmation. */
    private readonly confirming = new Set<string>();
    private readonly busy = new Set<string>();
    /** Values the person expanded (kept open across re-renders). */
    private readonly expanded = new Set<string>();
    private readonly sections: { runs: HTMLElement; detail: HTMLElement; dead: HTMLElement; schedules: HTMLElement; queues: HTMLElement; announcer: HTMLElement; error: HTMLElement };
    /** The run list under the (persistent) heading and filter. */
    private readonly runList: HTMLElement = h('div');
    /** What each section last rendered from: an unchanged section is left alone (selection, open menus). */
    private readonly shown = new Map<string, string>();
    private announcedAt = 0;

    constructor() {
      super();
      this.root = this.attachShadow({ mode: 'open' });
      const style = h('style', {}, INSPECTOR_CSS);
      const section = (part: string, label: string): HTMLElement => h('section', { part, 'aria-label': label, tabindex: -1 });
      this.sections = {
        announcer: h('p', { class: 'sr', role: 'status', 'aria-live': 'polite', part: 'announcer' }),
        error: h('p', { class: 'error', role: 'alert', part: 'error', hidden: true }),
        runs: section('runs', 'Runs'),
        detail: section('detail', 'Run timeline'),
        dead: h('section', { part: 'dead-letters', 'aria-label': 'Dead letters', tabindex: -1, class: 'wide' }),
        // Shown only for a store with schedules.
        schedules: h('section', { part: 'schedules', 'aria-label': 'Schedules', tabindex: -1, class: 'wide', hidden: true }),
        queues: h('section', { part: 'queues', 'aria-label': 'Queues', tabindex: -1, class: 'wide' }),
      };
      const s = this.sections;
      const filter = h(
        'select',
        {
          part: 'filter',
          onchange: (ev: Event) => {
            this.filter = (ev.target as HTMLSelectElement).value;
            void this.refresh();
          },
        },
        ...FILTERS.map((f) => h('option', { value: f.value }, f.label)),
      );
      s.runs.append(h('div', { class: 'head' }, h('h2', { id: 'runs-heading' }, 'Runs'), h('label', {}, 'Show', filter)), this.runList);
      this.root.append(style, h('div', { class: 'root', part: 'inspector' }, s.announcer, h('div', { class: 'wide' }, s.error), s.runs, s.detail, s.dead, s.schedules, s.queues));
      this.render();
    }

    get client(): InspectorClient | null {
      return this.currentClient;
    }

    set client(client: InspectorClient | null) {
      this.stop();
      this.currentClient = client;
      if (this.isConnected) this.start();
    }

    get options(): InspectorOptions {
      return this.currentOptions;
    }

    set options(options: InspectorOptions) {
      this.currentOptions = options ?? {};
      if (this.isConnected && this.currentClient) {
        this.stop();
        this.start();
      }
    }

    get selectedRunId(): string | null {
      return this.selected;
    }

    connectedCallback(): void {
      this.start();
    }

    disconnectedCallback(): void {
      this.stop();
    }

    selectRun(runId: string | null): void {
      if (this.selected === runId) return;
      this.selected = runId;
      this.confirming.clear();
      this.detail = this.detail?.runId === runId ? this.detail : null;
      this.render();
      void this.refresh();
    }

    refresh(): Promise<void> {
      if (this.reading) {
        this.readAgain = true;
        return this.reading;
      }
      this.reading = (async () => {
        try {
          do {
            this.readAgain = false;
            await this.readAll();
          } while (this.readAgain);
        } finally {
          this.reading = undefined;
        }
      })();
      return this.reading;
    }

    private start(): void {
      const client = this.currentClient;
      if (!client || this.unsubscribe) return;
      this.reads = new RunReads(client, this.currentOptions, this.observer);
      this.unsubscribe = client.subscribe((event) => this.onEvent(event));
      const pollMs = this.currentOptions.pollMs ?? 2_000;
      if (pollMs > 0) {
        this.pollTimer = setInterval(() => {
          if (typeof document === 'undefined' || document.visibilityState !== 'hidden') void this.refresh();
        }, pollMs);
      }
      void this.refresh();
    }

    private stop(): void {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      clearInterval(this.pollTimer);
      clearTimeout(this.soonTimer);
    }

    private onEvent(event: HostEvent): void {
      if (event.type === 'role-changed') {
        if (event.role === 'leader' || event.role === 'follower') this.refreshSoon();
        return;
      }
      this.observer.apply(event);
      // The step that starts now is drawn as running at once, before the re-read lands.
      if (event.runId === this.selected) this.renderDetail();
      this.refreshSoon();
    }

    private refreshSoon(): void {
      clearTimeout(this.soonTimer);
      this.soonTimer = setTimeout(() => void this.refresh(), 80);
    }

    // ---- reading ----

    private async readAll(): Promise<void> {
      const client = this.currentClient;
      const reads = this.reads;
      if (!client || !reads) return;
      try {
        const [rows, dead, queues, schedules] = await Promise.all([
          reads.runs(this.filter, this.rows, this.selected),
          client.listDeadSteps({ limit: DEAD_PAGE }),
          client.queueCounts(),
          client.listSchedules?.() ?? [],
        ]);
        this.announceChanges(rows, dead);
        this.rows = rows;
        this.dead = dead;
        this.queues = queues;
        this.schedules = schedules;
        if (this.selected === null && rows.length > 0) this.selected = rows[0]!.runId;
        this.detail = this.selected === null ? null : await reads.detail(this.selected, rows);
        this.error = null;
      } catch (e) {
        // A closed client (the page is leaving) is not worth an alert.
        if ((e as { code?: unknown }).code === 'CLOSED') return;
        this.error = `Could not read the store: ${errorText(e)}`;
      }
      this.render();
    }

    private announceChanges(rows: readonly RunRow[], dead: readonly DeadStepView[]): void {
      const messages: string[] = [];
      for (const row of rows) {
        const before = this.lastStates.get(row.runId);
        if (before !== undefined && before !== row.state) messages.push(`${this.titleOf(row.runId, row.description)}: ${STATE_TEXT[row.state]}.`);
        this.lastStates.set(row.runId, row.state);
      }
      const newDead = dead.filter((d) => !this.dead.some((x) => x.jobId === d.jobId));
      if (this.rows.length > 0 && newDead.length > 0) messages.push(`${newDead.length} new dead letter${newDead.length === 1 ? '' : 's'}.`);
      if (messages.length > 0) this.announce(messages.join(' '));
    }

    private announce(text: string): void {
      // Messages close together are read as one (a retry and the dead letter it leads to).
      const now = Date.now();
      const recent = now - this.announcedAt < 2_000 ? this.sections.announcer.textContent : '';
      this.announcedAt = now;
      this.sections.announcer.textContent = recent ? `${recent} ${text}` : text;
    }

    private titleOf(runId: string, description: RunDescription | undefined): string {
      return description?.title ?? runId;
    }

    /** `codec`: the bytes are a value-codec value (a workflow function's), decoded as such. */
    private format(bytes: Uint8Array, kind: 'kv' | 'memo' | 'signal' | 'result' | 'call', key: string, codec = false): string {
      return this.currentOptions.formatValue?.(bytes, { kind, key }) ?? (codec ? describeValue(bytes) : describeBytes(bytes));
    }

    // ---- actions ----

    private pick(runId: string): void {
      this.selectRun(runId);
      this.dispatchEvent(new CustomEvent(RUN_SELECT_EVENT, { detail: { runId }, bubbles: true, composed: true }));
    }

    private async retry(dead: DeadStepView): Promise<void> {
      const client = this.currentClient;
      if (!client || this.busy.has(dead.jobId)) return;
      this.busy.add(dead.jobId);
      this.renderDead();
      try {
        await client.retryDeadStep(dead.jobId);
        this.dead = this.dead.filter((d) => d.jobId !== dead.jobId);
        this.announce(`Retried: ${this.deadTitle(dead)} runs again.`);
      } catch (e) {
        this.announce(`Retry failed: ${errorText(e)}`);
        this.error = `Retry failed: ${errorText(e)}`;
      } finally {
        this.busy.delete(dead.jobId);
      }
      this.render();
      this.sections.dead.focus();
      void this.refresh();
    }

    private async discard(dead: DeadStepView): Promise<void> {
      const client = this.currentClient;
      if (!client || this.busy.has(dead.jobId)) return;
      this.busy.add(dead.jobId);
      this.confirming.delete(dead.jobId);
      try {
        const removed = await client.discardDeadStep(dead.jobId);
        this.dead = this.dead.filter((d) => d.jobId !== dead.jobId);
        this.announce(removed ? `Discarded: ${this.deadTitle(dead)}.` : 'That dead letter was already gone.');
      } catch (e) {
        this.error = `Discard failed: ${errorText(e)}`;
      } finally {
        this.busy.delete(dead.jobId);
      }
      this.render();
      this.sections.dead.focus();
      void this.refresh();
    }

    private deadTitle(dead: DeadStepView): string {
      const row = dead.runId === null ? undefined : this.rows.find((r) => r.runId === dead.runId);
      const run = dead.runId === null ? 'a job' : this.titleOf(dead.runId, row?.description);
      return dead.notification ? `the end notification of ${run}` : dead.stepNumber === null ? run : `step ${dead.stepNumber + 1} of ${run}`;
    }

    // ---- rendering ----

    private render(): void {
      const e = this.sections.error;
      e.hidden = this.error === null;
      e.textContent = this.error ?? '';
      this.renderRuns();
      this.renderDetail();
      this.renderDead();
      this.renderSchedules();
      this.renderQueues();
    }

    private badge(state: RunState): HTMLElement {
      return h('span', { class: `badge ${state}`, part: `badge badge-${state}` }, STATE_TEXT[state]);
    }

    /** True when `section` must be drawn again: its data changed, or the clock moved on (relative times). */
    private stale(section: string, data: unknown): boolean {
      const signature = digest([data, Math.floor(Date.now() / 5_000)]);
      if (this.shown.get(section) === signature) return false;
      this.shown.set(section, signature);
      return true;
    }

    private renderRuns(): void {
      if (!this.stale('runs', [this.filter, this.selected, this.rows])) return;
      const items = this.rows.map((row) =>
        h(
          'li',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'run',
              part: row.runId === this.selected ? 'run run-selected' : 'run',
              'aria-current': row.runId === this.selected ? 'true' : 'false',
              'data-focus': `run:${row.runId}`,
              onclick: () => this.pick(row.runId),
            },
            h('span', { class: 'run-title' }, this.titleOf(row.runId, row.description)),
            this.badge(row.state),
            h('span', { class: 'meta' }, [row.description?.title ? row.runId : null, row.currentStep === null ? null : `step ${row.currentStep + 1}`, this.times(row)].filter(Boolean).join(' · ')),
          ),
        ),
      );
      replaceKeepingFocus(
        this.root,
        this.runList,
        items.length > 0 ? h('ul', { class: 'runs', 'aria-labelledby': 'runs-heading', part: 'run-list' }, ...items) : h('p', { class: 'empty' }, this.filter === 'all' ? 'No runs yet.' : 'No runs in this state.'),
      );
    }

    private times(row: RunRow): string | null {
      const at = row.submittedAtMs ?? row.description?.submittedAtMs;
      const now = Date.now();
      const times = [at === undefined || at === null ? null : `started ${describeTime(at, now)}`, row.endedAtMs === null ? null : `ended ${describeTime(row.endedAtMs, now)}`];
      return times.filter(Boolean).join(' · ') || null;
    }

    private renderDetail(): void {
      const runId = this.selected;
      const view = this.detail?.runId === runId ? this.detail : null;
      if (!this.stale('detail', [runId, view, runId === null ? null : [[...this.observer.seen(runId)], [...this.observer.calls(runId).values()]], this.observer.ending(runId ?? '')])) return;
      if (runId === null || view === null) {
        replaceKeepingFocus(this.root, this.sections.detail, h('h2', {}, 'Run timeline'), h('p', { class: 'empty' }, runId === null ? 'Pick a run to see its timeline.' : 'Reading…'));
        return;
      }
      const row = this.rows.find((r) => r.runId === runId);
      const state: RunState = view.details?.state ?? view.ending?.status ?? row?.state ?? 'ended';
      const d = view.details;
      const now = Date.now();
      const steps = buildTimeline({ runId, details: d, observer: this.observer, description: view.description, ending: view.ending, stored: view.stored });
      const fn = view.stored.workflowFunction;
      const startedAt = d?.submittedAtMs ?? row?.submittedAtMs ?? null;
      const endedAt = view.ending?.at ?? null;
      // A succeeded run's result, as the store kept it (its finished-run record or end notification).
      const result = view.ending?.status === 'succeeded' ? (view.stored.terminal?.result ?? null) : null;
      // The header naming a function run's workflow is the library's: the meta line says it in words.
      const headers = Object.entries(d?.headers ?? {}).filter(([k]) => fn === null || k !== WORKFLOW_HEADER);
      const header: (HTMLElement | null)[] = [
        h('h2', {}, 'Run timeline'),
        h('p', { class: 'detail-title' }, h('strong', {}, this.titleOf(runId, view.description)), this.badge(state)),
        h(
          'p',
          { class: 'meta' },
          [
            `Run ${runId}`,
            fn ? `workflow ${fn.name}@${fn.version}` : null,
            startedAt === null ? null : `started ${describeTime(startedAt, now)}`,
            endedAt === null ? null : `ended ${describeTime(endedAt, now)}`,
            d ? `step job ${d.jobId}` : null,
          ]
            .filter(Boolean)
            .join(' · '),
        ),
        view.ending?.error ? h('p', { class: 'error' }, `Reason: ${view.ending.error}`) : null,
        result ? h('div', { class: 'values', part: 'outcome' }, this.value(`result:${runId}`, 'Result', this.format(result, 'result', runId, fn !== null))) : null,
        headers.length > 0 ? h('p', { class: 'meta' }, `Headers: ${headers.map(([k, v]) => `${k}=${v}`).join(', ')}`) : null,
      ];
      // A workflow function's underlying steps are its executions (one per sleep or wait): its calls come first, by name.
      const timeline = h('ol', { class: 'timeline', part: 'timeline', 'aria-label': fn ? 'Executions' : 'Steps' }, ...steps.map((s) => this.renderStep(s, now, runId, fn)));
      const body = fn ? [...this.renderCalls(runId, fn, mergeCalls(fn.calls, this.observer.calls(runId)), d !== null, now), h('h3', {}, 'Executions'), timeline] : [timeline];
      // A function run keeps no memo entries: its values are its calls'.
      const memo = fn !== null && view.memo.length === 0 ? [] : this.renderMemo(view);
      replaceKeepingFocus(this.root, this.sections.detail, ...header.filter((n): n is HTMLElement => n !== null), ...body, ...this.renderSignals(view), ...memo, ...this.renderKv(view));
    }

    /** A workflow function's `ctx` calls (its history's, and those this page saw reported), by name, with their values. */
    private renderCalls(runId: string, fn: FunctionTimeline, calls: readonly FunctionCall[], active: boolean, now: number): HTMLElement[] {
      const views = describeCalls(calls, now);
      const heading = h('h3', {}, `Workflow ${fn.name}@${fn.version}`);
      if (views.length === 0) return [heading, h('p', { class: 'empty' }, active ? 'No call recorded yet.' : 'Calls not kept: a run deletes its history when it ends.')];
      const list = h('ol', { class: 'timeline', part: 'timeline calls', 'aria-label': 'Workflow calls' }, ...views.map((c) => this.renderCall(runId, c)));
      if (active) return [heading, list];
      // An ended run's history is gone: these are the calls this page saw reported.
      const unseen = calls[calls.length - 1]!.position + 1 - calls.length;
      return [heading, h('p', { class: 'meta' }, `As this page saw them (a run deletes its history when it ends)${unseen > 0 ? `; ${unseen} not seen` : ''}.`), list];
    }

    private renderCall(runId: string, c: CallView): HTMLElement {
      const phase = CALL_PHASE[c.status];
      return h(
        'li',
        { class: `step ${phase}`, part: `step step-${phase} call` },
        h('span', { class: 'step-name' }, c.title),
        h('span', { class: 'phase' }, c.text),
        c.facts ? h('p', { class: c.failed ? 'error' : 'facts' }, c.facts) : null,
        c.value ? h('div', { class: 'values' }, this.value(`call:${runId}:${c.position}`, 'Value', this.format(c.value, 'call', c.title.replace(/^(step|signal) /, ''), true))) : null,
      );
    }

    private renderStep(step: StepRow, now: number, runId: string, fn: FunctionTimeline | null): HTMLElement {
      const name = fn ? `Execution ${step.stepNumber + 1}` : `Step ${step.stepNumber + 1}${step.name ? `: ${step.name}` : ''}`;
      const attempts = step.attempts.map((a) => {
        const times = [a.startedAt === null ? null : `started ${describeTime(a.startedAt, now)}`, a.startedAt !== null && a.endedAt !== null ? `took ${describeDuration(a.endedAt - a.startedAt)}` : null];
        const of = step.maxAttempts ? ` of ${step.maxAttempts}` : '';
        const label = a.attempt === 0 ? a.outcome : `attempt ${a.attempt}${of}: ${a.outcome}`;
        return h('li', { class: a.error ? 'failed' : '' }, [label, ...times.filter(Boolean)].join(' · '), a.error ? ` · ${a.error}` : '');
      });
      const wait = step.waitingFor;
      const waitLine =
        wait === null
          ? null
          : wait.type === 'signal'
            ? `waiting for signal "${signalLabel(runId, wait.correlationKey, fn)}" · ${waitLimit(wait.timeoutAt, now)}`
            : wait.type === 'slot'
              ? `waiting for a slot of "${wait.key}" · ${wait.position} ahead`
              : `${wait.reason === 'retry' ? 'retry' : 'resumes'} ${describeTime(wait.at, now)}`;
      return h(
        'li',
        { class: `step ${step.phase}`, part: `step step-${step.phase}` },
        h('span', { class: 'step-name' }, name),
        h('span', { class: 'phase' }, PHASE_TEXT[step.phase]),
        step.note ? h('p', { class: 'note' }, step.note) : null,
        waitLine ? h('p', { class: 'facts' }, waitLine) : null,
        attempts.length > 0 ? h('ul', { class: 'attempts', 'aria-label': `Attempts of step ${step.stepNumber + 1}` }, ...attempts) : null,
      );
    }

    /** A stored value: its key and a one-line preview, expanding to the whole decoded value. */
    private value(id: string, label: string | Node, text: string, extra?: string): HTMLElement {
      const preview = text.replace(/\s+/g, ' ');
      return h(
        'details',
        {
          open: this.expanded.has(id),
          ontoggle: (ev: Event) => {
            if ((ev.target as HTMLDetailsElement).open) this.expanded.add(id);
            else this.expanded.delete(id);
          },
        },
        h('summary', { 'data-focus': `value:${id}` }, h('span', { class: 'key' }, label), extra ? ` · ${extra}` : '', h('span', { class: 'preview' }, ` · ${preview.length > 80 ? `${preview.slice(0, 80)}…` : preview}`)),
        h('pre', {}, text),
      );
    }

    private renderSignals(view: RunDetailView): HTMLElement[] {
      if (view.signals.length === 0) return [];
      return [
        h('h3', {}, 'Signals'),
        h(
          'ul',
          { class: 'values', part: 'values' },
          ...view.signals.map((s) =>
            h(
              'li',
              {},
              s.buffered
                ? this.value(`signal:${s.key}`, s.key, this.format(s.buffered, 'signal', s.key), 'already sent, buffered until the run reads it')
                : [h('span', { class: 'key' }, s.key), s.waiting ? ' · waited for, not sent yet' : ' · not sent'],
            ),
          ),
        ),
      ];
    }

    private renderMemo(view: RunDetailView): HTMLElement[] {
      const entries = view.memo.map((m) => {
        const scope = m.scope === 'run' ? 'run memo' : `step ${m.scope + 1}`;
        const key = m.key ?? `key hash ${m.keyHash.slice(0, 12)}…`;
        const id = `memo:${m.scope}:${m.keyHash}`;
        return h('li', {}, m.value ? this.value(id, `${scope} · ${key}`, this.format(m.value, 'memo', m.key ?? m.keyHash)) : [h('span', { class: 'key' }, `${scope} · ${key}`), h('p', { class: 'error' }, 'unreadable (corrupt)')]);
      });
      return [h('h3', {}, `Memo (${entries.length})`), entries.length > 0 ? h('ul', { class: 'values', part: 'values' }, ...entries) : h('p', { class: 'empty' }, 'No memo entries.')];
    }

    private renderKv(view: RunDetailView): HTMLElement[] {
      if ((view.description?.kvPrefixes ?? []).length === 0) return [];
      const entries = view.kv.map(([key, value]) => h('li', {}, this.value(`kv:${key}`, key, this.format(value, 'kv', key))));
      return [h('h3', {}, `KV (${entries.length})`), entries.length > 0 ? h('ul', { class: 'values', part: 'values' }, ...entries) : h('p', { class: 'empty' }, 'No KV entries.')];
    }

    private renderDead(): void {
      if (!this.stale('dead', [this.dead, this.rows.map((r) => r.description?.title), [...this.busy], [...this.confirming]])) return;
      const now = Date.now();
      const items = this.dead.map((d) => {
        const busy = this.busy.has(d.jobId);
        const title = this.deadTitle(d);
        const facts = [`${d.attempts} of ${d.maxAttempts} attempts`, d.failedAt === null ? null : `dead since ${describeTime(d.failedAt, now)}`, `job ${d.jobId}`].filter(Boolean).join(' · ');
        const actions = this.confirming.has(d.jobId)
          ? [
              h('span', {}, 'Discard for good?'),
              h('button', { type: 'button', class: 'danger', 'data-focus': `confirm:${d.jobId}`, onclick: () => void this.discard(d) }, 'Yes, discard'),
              h(
                'button',
                {
                  type: 'button',
                  'data-focus': `keep:${d.jobId}`,
                  onclick: () => {
                    this.confirming.delete(d.jobId);
                    this.renderDead();
                    this.root.querySelector<HTMLElement>(`[data-focus="discard:${CSS.escape(d.jobId)}"]`)?.focus();
                  },
                },
                'Keep',
              ),
            ]
          : [
              h('button', { type: 'button', class: 'primary', disabled: busy || d.payloadError !== null, 'aria-label': `Retry ${title}`, 'data-focus': `retry:${d.jobId}`, onclick: () => void this.retry(d) }, 'Retry'),
              h(
                'button',
                {
                  type: 'button',
                  disabled: busy,
                  'aria-label': `Discard ${title}`,
                  'data-focus': `discard:${d.jobId}`,
                  onclick: () => {
                    this.confirming.add(d.jobId);
                    this.renderDead();
                    this.root.querySelector<HTMLElement>(`[data-focus="confirm:${CSS.escape(d.jobId)}"]`)?.focus();
                  },
                },
                'Discard',
              ),
            ];
        return h(
          'li',
          { part: 'dead-letter' },
          h(
            'div',
            { class: 'what' },
            h('strong', {}, title[0]!.toUpperCase() + title.slice(1)),
            h('p', { class: 'meta' }, facts),
            d.lastError ? h('p', { class: 'error' }, d.lastError) : null,
            d.payloadError ? h('p', { class: 'error' }, `Payload unreadable (${d.payloadError.code}); restore it or discard.`) : null,
          ),
          h('div', { class: 'actions', role: 'group', 'aria-label': `Actions for ${title}` }, ...actions),
        );
      });
      replaceKeepingFocus(
        this.root,
        this.sections.dead,
        h('h2', { id: 'dead-heading' }, `Dead letters (${this.dead.length})`),
        items.length > 0 ? h('ul', { class: 'dead', 'aria-labelledby': 'dead-heading' }, ...items) : h('p', { class: 'empty' }, 'No dead letters.'),
      );
    }

    private renderSchedules(): void {
      if (!this.stale('schedules', this.schedules)) return;
      const section = this.sections.schedules;
      section.hidden = this.schedules.length === 0;
      if (section.hidden) return section.replaceChildren();
      const now = Date.now();
      const cols = ['Schedule', 'Cron', 'Zone', 'Fires', 'Next firing', 'Last firing'];
      const table = h(
        'table',
        { 'aria-labelledby': 'schedules-heading', class: 'schedules' },
        h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c)))),
        h(
          'tbody',
          {},
          ...this.schedules.map((s) =>
            h(
              'tr',
              { part: 'schedule' },
              h('th', { scope: 'row' }, s.name),
              h('td', {}, h('code', {}, s.cron)),
              h('td', {}, s.timezone),
              h('td', {}, describeSchedule(s.target)),
              h('td', {}, describeTime(s.nextFireMs, now)),
              h('td', {}, s.lastFireMs === undefined ? 'not yet' : describeTime(s.lastFireMs, now)),
            ),
          ),
        ),
      );
      replaceKeepingFocus(this.root, section, h('h2', { id: 'schedules-heading' }, `Schedules (${this.schedules.length})`), h('div', { class: 'table-wrap' }, table));
    }

    private renderQueues(): void {
      if (!this.stale('queues', this.queues)) return;
      const cols = ['pending', 'scheduled', 'claimed', 'dead', 'done'] as const;
      const header = { pending: 'Pending', scheduled: 'Scheduled', claimed: 'Running', dead: 'Dead', done: 'Done (total)' };
      const table = h(
        'table',
        { 'aria-labelledby': 'queues-heading' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Queue'), ...cols.map((c) => h('th', { scope: 'col' }, header[c])))),
        h('tbody', {}, ...this.queues.map((q) => h('tr', {}, h('th', { scope: 'row' }, q.queue), ...cols.map((c) => h('td', {}, String(q[c])))))),
      );
      replaceKeepingFocus(
        this.root,
        this.sections.queues,
        h('h2', { id: 'queues-heading' }, 'Queues'),
        this.queues.length === 0 ? h('p', { class: 'empty' }, 'No queues yet.') : h('div', { class: 'table-wrap' }, table),
      );
    }
  };
}

let defined: (new () => TaqubaInspectorElement) | undefined;

/**
 * Registers `<taquba-inspector>` (or `tagName`) once and returns its class. Call it before
 * creating the element; a second call returns the registered class.
 * @example
 * defineTaqubaInspector();
 * const inspector = document.createElement('taquba-inspector');
 * inspector.client = connect(worker);
 * document.body.append(inspector);
 */
export function defineTaqubaInspector(tagName = 'taquba-inspector'): new () => TaqubaInspectorElement {
  const existing = customElements.get(tagName) as (new () => TaqubaInspectorElement) | undefined;
  if (existing) return existing;
  defined ??= createInspectorClass();
  customElements.define(tagName, defined);
  return defined;
}

declare global {
  interface HTMLElementTagNameMap {
    'taquba-inspector': TaqubaInspectorElement;
  }
}
