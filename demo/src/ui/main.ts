/**
 * The demo page: connects to its tab's worker, shows the selected run's agent view (decisions,
 * streamed output, notes, the brief) next to `<taquba-inspector>` (runs, timelines, memo, KV,
 * dead letters, queues), and turns buttons into runtime calls. Everything it shows is read back
 * from the store, so a reload (or another tab) shows the same thing.
 */
import { connect, type HostEvent, type RunEvent, type WorkflowClient } from 'taquba-workflow/browser';
import { defineTaqubaInspector, RUN_SELECT_EVENT, type RunDescription } from 'taquba-workflow/browser/inspector';
import {
  approvalKey,
  decodeJson,
  encodeJson,
  keys,
  LIMITS,
  liveChannelName,
  MODEL_MEMO_KEY,
  type AgentState,
  type Decision,
  type LiveMessage,
  type OutcomeRecord,
  type RunMeta,
  type StepRecord,
  type StoreKind,
  type TaskSpec,
} from '../shared/agent-state.js';
import { loadModelSettings, modelCalls, saveModelSettings, summarize, type ModelCallRecord, type ModelSettings } from '../shared/demo-db.js';
import { byId as $ } from './dom.js';
import { labelForStep, plannedSteps, type RunRow } from './run-model.js';
import { renderModelCalls, renderRunDetail, type Activity } from './views.js';

const STORE_SETTING = 'taquba-demo:store';
const POLL_MS = 2_000;

const store: StoreKind = localStorage.getItem(STORE_SETTING) === 'opfs' ? 'opfs' : 'indexeddb';
// The worker learns its store from its name (the URL must stay a literal for the bundler).
const worker = new Worker(new URL('../agent/agent-worker.ts', import.meta.url), { type: 'module', name: `agent-${store}` });
const client: WorkflowClient = connect(worker);
defineTaqubaInspector();
const inspector = $('inspector') as HTMLElementTagNameMap['taquba-inspector'];

/** What the demo's own KV records say about a run (stored with its submission and at its end). */
interface RunRecords {
  readonly meta: RunMeta;
  readonly outcome: OutcomeRecord | null;
  readonly escalated: boolean;
}

const records = new Map<string, RunRecords>();
let selected: string | null = new URL(location.href).searchParams.get('run');
let selectedRow: RunRow | undefined;
let stepRecords: StepRecord[] = [];
/** What the running step streams, per run (cleared when the step finishes). */
const streaming = new Map<string, { stepNumber: number; text: string }>();
/** The model-call log of this store (demo-db.ts), for the header's counter and per run. */
let callLog: ModelCallRecord[] = [];
let refreshing: Promise<void> | undefined;
let refreshAgain = false;
let firstStepEventSeen = false;

// ---- talking to the runtime ----

function showError(error: unknown): void {
  const alert = $('alert');
  const code = (error as { code?: string }).code;
  alert.textContent = `${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`;
  alert.hidden = false;
}

function clearError(): void {
  $('alert').hidden = true;
}

async function allKv(prefix: string): Promise<[string, Uint8Array][]> {
  const out: [string, Uint8Array][] = [];
  const decoder = new TextDecoder();
  let cursor: Uint8Array | undefined;
  do {
    const page = await client.kvScan(prefix, { cursor, limit: 200 });
    for (const [k, v] of page.entries) out.push([decoder.decode(k), v]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

async function loadRecords(runId: string, meta: RunMeta): Promise<RunRecords> {
  const [outcome, escalated] = await Promise.all([client.kvGet(keys.outcome(runId)), client.kvGet(keys.escalation(runId))]);
  return { meta, outcome: outcome ? decodeJson<OutcomeRecord>(outcome) : null, escalated: escalated !== null };
}

/** Reads the demo's records and the selected run's state. Calls while one runs coalesce into one more. */
function refresh(): Promise<void> {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    try {
      do {
        refreshAgain = false;
        const metas = await allKv(keys.runsPrefix);
        const loaded = await Promise.all(metas.map(async ([key, value]) => [key.slice(keys.runsPrefix.length), await loadRecords(key.slice(keys.runsPrefix.length), decodeJson<RunMeta>(value))] as const));
        records.clear();
        for (const [runId, r] of loaded.sort((a, b) => b[1].meta.createdAt - a[1].meta.createdAt)) records.set(runId, r);
        if (selected === null || !records.has(selected)) {
          selected = records.keys().next().value ?? null;
          inspector.selectRun(selected);
        }
        const r = selected ? records.get(selected) : undefined;
        if (selected && r) {
          const view = r.outcome ? null : await client.status(selected);
          selectedRow = { runId: selected, meta: r.meta, outcome: r.outcome, view, escalated: r.escalated };
          stepRecords = (await allKv(keys.stepsPrefix(selected))).map(([, v]) => decodeJson<StepRecord>(v));
        } else {
          selectedRow = undefined;
          stepRecords = [];
        }
        renderDetail();
      } while (refreshAgain);
    } catch (e) {
      if ((e as { code?: string }).code !== 'CLOSED') showError(e);
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
function refreshSoon(): void {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refresh(), 50);
}

// ---- rendering ----

function activityOf(row: RunRow | undefined): Activity | null {
  const now = row ? streaming.get(row.runId) : undefined;
  return row && now ? { label: labelForStep(row.meta, now.stepNumber, row.escalated), text: now.text } : null;
}

function renderDetail(): void {
  const row = selected === selectedRow?.runId ? selectedRow : undefined;
  renderRunDetail(row, stepRecords, activityOf(row), summarize(callLog, row?.runId));
}

/** What the inspector shows about a run beyond what the runtime stores: names, the plan, how it ended. */
function describeRun(runId: string): RunDescription | undefined {
  const r = records.get(runId);
  if (!r) return undefined;
  const done = runId === selected ? new Map(stepRecords.map((s) => [s.stepNumber, s])) : new Map<number, StepRecord>();
  return {
    title: r.meta.topic,
    submittedAtMs: r.meta.createdAt,
    steps: plannedSteps(r.meta, r.escalated).map((name, n) => {
      const step = done.get(n);
      // The output itself is in the agent panel; the timeline says whether the model was paid for.
      return step?.usedModel ? { name, note: step.memoHit ? 'memo hit: the model was not called again' : 'model called' } : { name };
    }),
    ...(r.outcome ? { ended: { status: r.outcome.status, error: r.outcome.status === 'cancelled' ? null : r.outcome.error, finalStep: r.outcome.finalStep, at: r.outcome.finishedAt } } : {}),
    signalKeys: [approvalKey(runId)],
    kvPrefixes: [keys.run(runId), keys.stepsPrefix(runId), keys.escalation(runId), keys.outcome(runId)],
  };
}

async function loadModelCalls(): Promise<void> {
  callLog = await modelCalls(store);
  renderModelCalls(summarize(callLog));
}

function select(runId: string): void {
  selected = runId;
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  history.replaceState(null, '', url);
  $('decision-note').hidden = true;
  inspector.selectRun(runId);
  renderDetail();
  void refresh();
}

// ---- actions ----

/** Shows a form's error next to it, pointing the invalid field at it (or clears it with null). */
function fieldError(form: 'task' | 'model', error: FieldError | null): void {
  const message = $(`${form}-error`);
  message.hidden = error === null;
  message.textContent = error?.message ?? '';
  for (const el of $(`${form}-form`).querySelectorAll('[aria-invalid]')) {
    el.removeAttribute('aria-invalid');
    el.removeAttribute('aria-describedby');
  }
  if (error) {
    error.field.setAttribute('aria-invalid', 'true');
    error.field.setAttribute('aria-describedby', message.id);
    error.field.focus();
  }
}

/** A form value the person must fix: names the field by its visible label. */
class FieldError extends Error {
  constructor(
    readonly field: HTMLElement,
    message: string,
  ) {
    super(message);
  }
}

/** The visible label text of a form field (its wrapping label, without the field's own text). */
function labelOf(field: HTMLInputElement): string {
  const label = field.closest('label');
  return (label ? [...label.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('') : field.name).trim();
}

function readTask(form: HTMLFormElement): TaskSpec {
  const data = new FormData(form);
  const field = (name: string): HTMLInputElement => form.elements.namedItem(name) as HTMLInputElement;
  const topic = String(data.get('topic') ?? '').trim();
  if (topic === '' || topic.length > LIMITS.topicMaxLength) throw new FieldError(field('topic'), `${labelOf(field('topic'))}: enter 1 to ${LIMITS.topicMaxLength} characters.`);
  const int = (name: string, min: number, max: number): number => {
    const raw = String(data.get(name) ?? '').trim();
    const value = Number(raw);
    if (raw === '' || !Number.isInteger(value) || value < min || value > max) {
      throw new FieldError(field(name), `${labelOf(field(name))}: enter a whole number from ${min} to ${max}${raw === '' ? '' : ` (not ${raw})`}.`);
    }
    return value;
  };
  return {
    topic,
    researchCalls: int('researchCalls', 1, LIMITS.researchCallsMax),
    approvalTimeoutMs: int('approvalTimeoutS', 1, 86_400) * 1000,
    tokenDelayMs: int('tokenDelayMs', 0, 2000),
    flaky: data.get('flaky') !== null,
    outage: data.get('outage') !== null,
  };
}

function newRunId(): string {
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `run-${Date.now().toString(36)}-${[...random].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

async function startTask(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const form = event.target as HTMLFormElement;
  fieldError('task', null);
  try {
    const task = readTask(form);
    const runId = newRunId();
    const state: AgentState = { task, phase: 'research', index: 0, notes: [], draft: null, escalated: false };
    const meta: RunMeta = { topic: task.topic, createdAt: Date.now(), researchCalls: task.researchCalls };
    // The run's listing record commits with its first step: a run is never listed without existing, nor the reverse.
    await client.submit({ runId, input: encodeJson(state), kvWrites: [[keys.run(runId), encodeJson(meta)]] });
    select(runId);
  } catch (e) {
    if (e instanceof FieldError) fieldError('task', e);
    else showError(e);
  }
}

async function decide(decision: Decision['decision']): Promise<void> {
  if (!selected) return;
  clearError();
  const reasonInput = $<HTMLInputElement>('reject-reason');
  const payload: Decision = { decision, reason: decision === 'reject' ? reasonInput.value : '' };
  try {
    const outcome = await client.signal(approvalKey(selected), encodeJson(payload));
    const note = $('decision-note');
    note.hidden = false;
    const what = decision === 'approve' ? 'Approval' : 'Rejection';
    note.textContent =
      outcome === 'delivered'
        ? `${what} delivered to the waiting step.`
        : `${what} recorded: the run will read it when it reaches the approval step.`;
    if (decision === 'reject') reasonInput.value = '';
    refreshSoon();
  } catch (e) {
    showError(e);
  }
}

async function cancelRun(): Promise<void> {
  if (!selected) return;
  clearError();
  try {
    const cancelled = await client.cancel(selected);
    const note = $('decision-note');
    note.hidden = false;
    note.textContent = cancelled ? 'Cancellation requested.' : 'The run had already finished.';
    refreshSoon();
  } catch (e) {
    showError(e);
  }
}

/** The endpoint fields matter only for an endpoint model: hidden (and skipped by Tab) otherwise. */
function showEndpointFields(): void {
  const kind = $<HTMLSelectElement>('model-kind').value;
  ($('endpoint-fields') as HTMLFieldSetElement).hidden = kind !== 'openai';
}

async function saveModel(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const data = new FormData(form);
  const saved = $('model-saved');
  saved.textContent = '';
  fieldError('model', null);
  const settings: ModelSettings =
    data.get('kind') === 'openai'
      ? { kind: 'openai', endpoint: String(data.get('endpoint') ?? '').trim(), model: String(data.get('model') ?? '').trim(), apiKey: String(data.get('apiKey') ?? '') }
      : { kind: 'simulated' };
  try {
    if (settings.kind === 'openai' && !/^https?:\/\//.test(settings.endpoint)) {
      const endpoint = form.elements.namedItem('endpoint') as HTMLInputElement;
      throw new FieldError(endpoint, `${labelOf(endpoint)}: enter an http(s) URL, such as https://api.openai.com/v1${settings.endpoint === '' ? '' : ` (not ${settings.endpoint})`}.`);
    }
    await saveModelSettings(settings);
    clearError();
    saved.textContent =
      settings.kind === 'openai'
        ? `Saved: ${settings.model || 'the default model'} at ${settings.endpoint}. The next model call uses it.`
        : 'Saved: the simulated model (local, works offline). The next model call uses it.';
  } catch (e) {
    if (e instanceof FieldError) fieldError('model', e);
    else showError(e);
  }
}

async function loadModelForm(): Promise<void> {
  const settings = await loadModelSettings();
  const form = $<HTMLFormElement>('model-form');
  (form.elements.namedItem('kind') as HTMLSelectElement).value = settings.kind;
  if (settings.kind === 'openai') {
    (form.elements.namedItem('endpoint') as HTMLInputElement).value = settings.endpoint;
    (form.elements.namedItem('model') as HTMLInputElement).value = settings.model;
    (form.elements.namedItem('apiKey') as HTMLInputElement).value = settings.apiKey;
  }
  showEndpointFields();
}

// ---- events ----

const storeTitle = `Durable agent (${store === 'opfs' ? 'OPFS' : 'IndexedDB'}) · taquba-workflow`;

function onEvent(event: HostEvent): void {
  if (event.type === 'role-changed') {
    const role = $('tab-role');
    if (event.role === 'leader') role.textContent = 'executes the steps';
    else if (event.role === 'follower') role.textContent = 'standing by (another tab executes the steps)';
    else if (event.role === 'failed') role.textContent = `failed: ${event.error?.message ?? 'unknown error'}`;
    else role.textContent = event.role === 'starting' ? 'connecting…' : event.role;
    role.dataset.role = event.role;
    // The tab strip tells which of several tabs executes.
    document.title = event.role === 'leader' ? `▶ Executing · ${storeTitle}` : storeTitle;
    if (event.role === 'leader' || event.role === 'follower') refreshSoon();
    return;
  }
  onRunEvent(event);
}

function onRunEvent(event: RunEvent): void {
  if (event.type === 'step-started' && !firstStepEventSeen) {
    firstStepEventSeen = true;
    // Read by the demo.resume benchmark: navigation start to the first step event after a load.
    performance.mark('demo:first-step-event');
  }
  if (event.type === 'step-started' || event.type === 'terminal' || (event.type === 'step-finished' && streaming.get(event.runId)?.stepNumber === event.stepNumber)) {
    streaming.delete(event.runId);
  }
  if (event.runId === selected) renderDetail();
  refreshSoon();
}

function onLive(message: LiveMessage): void {
  if (message.type === 'tokens') {
    streaming.set(message.runId, { stepNumber: message.stepNumber, text: message.text });
    if (message.runId === selected) renderDetail();
  } else {
    void loadModelCalls().then(() => message.runId === selected && renderDetail());
  }
}

function showNetwork(): void {
  const network = $('network');
  network.textContent = navigator.onLine ? 'online' : 'offline (runs carry on here)';
  network.dataset.online = String(navigator.onLine);
}

// ---- boot ----

function boot(): void {
  const storeSelect = $<HTMLSelectElement>('store-select');
  storeSelect.value = store;
  storeSelect.addEventListener('change', () => {
    localStorage.setItem(STORE_SETTING, storeSelect.value);
    location.reload();
  });
  $('task-form').addEventListener('submit', (e) => void startTask(e as SubmitEvent));
  $('model-form').addEventListener('submit', (e) => void saveModel(e as SubmitEvent));
  $('model-kind').addEventListener('change', () => {
    showEndpointFields();
    $('model-saved').textContent = '';
    fieldError('model', null);
  });
  $('approve').addEventListener('click', () => void decide('approve'));
  $('reject').addEventListener('click', () => void decide('reject'));
  $('cancel').addEventListener('click', () => void cancelRun());
  $('crash').addEventListener('click', () => location.reload());
  addEventListener('online', showNetwork);
  addEventListener('offline', showNetwork);
  showNetwork();

  inspector.options = { describeRun, knownRuns: () => [...records.keys()], memoKeys: [MODEL_MEMO_KEY], pollMs: POLL_MS };
  inspector.client = client;
  if (selected) inspector.selectRun(selected);
  inspector.addEventListener(RUN_SELECT_EVENT, (e) => select((e as CustomEvent<{ runId: string }>).detail.runId));

  client.subscribe(onEvent);
  new BroadcastChannel(liveChannelName(store)).onmessage = (e: MessageEvent<LiveMessage>) => onLive(e.data);
  void client.persistence.then((granted) => {
    $('persistence').textContent = granted === null ? 'unavailable' : granted ? 'granted' : 'not granted (the browser may evict it)';
  });
  void client.info().then((info) => onEvent({ type: 'role-changed', role: info.role, leader: info.leader, error: info.error }), showError);
  void loadModelCalls();
  void loadModelForm();
  void refresh();
  setInterval(() => {
    if (document.visibilityState === 'visible') void refresh();
  }, POLL_MS);

  if (__OFFLINE_BUILD__ && 'serviceWorker' in navigator) {
    navigator.serviceWorker.register('./sw.js').catch((e: unknown) => console.warn('offline support unavailable:', e));
  }
  document.title = storeTitle;
}

boot();
