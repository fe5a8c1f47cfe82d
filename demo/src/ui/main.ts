/**
 * The demo page: connects to its tab's worker, keeps the run list and the selected run's detail
 * in step with the runtime (run events for speed, a slow poll for everything events do not
 * carry), and turns buttons into runtime calls. All state it shows is read back from the store,
 * so a reload (or another tab) shows the same thing.
 */
import { connect, type DeadStepView, type HostEvent, type RunEvent, type WorkflowClient } from 'taquba-workflow/browser';
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
import { LiveSteps, type RunRow } from './run-model.js';
import { renderDeadSteps, renderEntries, renderModelCalls, renderRunDetail, renderRuns } from './views.js';

const STORE_SETTING = 'taquba-demo:store';
const POLL_MS = 2_000;

const store: StoreKind = localStorage.getItem(STORE_SETTING) === 'opfs' ? 'opfs' : 'indexeddb';
// The worker learns its store from its name (the URL must stay a literal for the bundler).
const worker = new Worker(new URL('../agent/agent-worker.ts', import.meta.url), { type: 'module', name: `agent-${store}` });
const client: WorkflowClient = connect(worker);
const live = new LiveSteps();
const runs = new Map<string, RunRow>();
let selected: string | null = new URL(location.href).searchParams.get('run');
let stepRecords: StepRecord[] = [];
let dead: readonly DeadStepView[] = [];
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

async function loadRun(runId: string, meta: RunMeta): Promise<RunRow> {
  const [outcome, escalated] = await Promise.all([client.kvGet(keys.outcome(runId)), client.kvGet(keys.escalation(runId))]);
  const outcomeRecord = outcome ? decodeJson<OutcomeRecord>(outcome) : null;
  const view = outcomeRecord ? null : await client.status(runId);
  return { runId, meta, outcome: outcomeRecord, view, escalated: escalated !== null };
}

/** Reads everything the page shows from the store. Calls while one runs coalesce into one more. */
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
        const rows = await Promise.all(metas.map(([key, value]) => loadRun(key.slice(keys.runsPrefix.length), decodeJson<RunMeta>(value))));
        runs.clear();
        for (const row of rows.sort((a, b) => b.meta.createdAt - a.meta.createdAt)) runs.set(row.runId, row);
        if (selected === null || !runs.has(selected)) selected = rows[0]?.runId ?? null;
        stepRecords = selected ? (await allKv(keys.stepsPrefix(selected))).map(([, v]) => decodeJson<StepRecord>(v)) : [];
        dead = await client.listDeadSteps({ limit: 20 });
        render();
        await loadEntries();
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

function renderDetail(): void {
  const row = selected ? runs.get(selected) : undefined;
  renderRunDetail(row, stepRecords, row ? live.of(row.runId) : [], summarize(callLog, row?.runId));
}

async function loadEntries(): Promise<void> {
  const runId = selected;
  if (!runId) return renderEntries([], []);
  const single = async (key: string): Promise<[string, Uint8Array][]> => {
    const value = await client.kvGet(key);
    return value ? [[key, value]] : [];
  };
  const kv = [...(await single(keys.run(runId))), ...(await allKv(keys.stepsPrefix(runId))), ...(await single(keys.escalation(runId))), ...(await single(keys.outcome(runId)))];
  const memo = await Promise.all(
    stepRecords.filter((r) => r.usedModel).map(async (r) => [r.stepNumber, await client.memoGet(runId, r.stepNumber, MODEL_MEMO_KEY)] as const),
  );
  if (runId === selected) renderEntries(kv, memo);
}

async function loadModelCalls(): Promise<void> {
  callLog = await modelCalls(store);
  renderModelCalls(summarize(callLog));
}


function render(): void {
  renderRuns(runs.values(), selected, select);
  renderDetail();
  renderDeadSteps(dead);
}

function select(runId: string): void {
  selected = runId;
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  history.replaceState(null, '', url);
  $('decision-note').hidden = true;
  render();
  void refresh();
}

// ---- actions ----

function readTask(form: HTMLFormElement): TaskSpec {
  const data = new FormData(form);
  const topic = String(data.get('topic') ?? '').trim();
  if (topic === '' || topic.length > LIMITS.topicMaxLength) throw new Error(`the topic must be 1..${LIMITS.topicMaxLength} characters`);
  const int = (name: string, min: number, max: number): number => {
    const value = Number(data.get(name));
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number in ${min}..${max}. ${name}=${String(data.get(name))}`);
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
  try {
    const task = readTask(event.target as HTMLFormElement);
    const runId = newRunId();
    const state: AgentState = { task, phase: 'research', index: 0, notes: [], draft: null, escalated: false };
    const meta: RunMeta = { topic: task.topic, createdAt: Date.now(), researchCalls: task.researchCalls };
    // The run's listing record commits with its first step: a run is never listed without existing, nor the reverse.
    await client.submit({ runId, input: encodeJson(state), kvWrites: [[keys.run(runId), encodeJson(meta)]] });
    select(runId);
  } catch (e) {
    showError(e);
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

async function saveModel(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const data = new FormData(event.target as HTMLFormElement);
  const settings: ModelSettings =
    data.get('kind') === 'openai'
      ? { kind: 'openai', endpoint: String(data.get('endpoint') ?? ''), model: String(data.get('model') ?? ''), apiKey: String(data.get('apiKey') ?? '') }
      : { kind: 'simulated' };
  try {
    if (settings.kind === 'openai' && !/^https?:\/\//.test(settings.endpoint)) throw new Error(`the endpoint must be an http(s) URL. endpoint=${settings.endpoint}`);
    await saveModelSettings(settings);
    clearError();
  } catch (e) {
    showError(e);
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
}

// ---- events ----

function onEvent(event: HostEvent): void {
  if (event.type === 'role-changed') {
    const role = $('tab-role');
    if (event.role === 'leader') role.textContent = 'executes the steps';
    else if (event.role === 'follower') role.textContent = 'standing by (another tab executes the steps)';
    else if (event.role === 'failed') role.textContent = `failed: ${event.error?.message ?? 'unknown error'}`;
    else role.textContent = event.role === 'starting' ? 'connecting…' : event.role;
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
  live.apply(event);
  if (event.runId === selected) renderDetail();
  refreshSoon();
}

function onLive(message: LiveMessage): void {
  if (message.type === 'tokens') {
    live.streamed(message.runId, message.stepNumber, message.text);
    if (message.runId === selected) renderDetail();
  } else {
    void loadModelCalls().then(() => message.runId === selected && renderDetail());
  }
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
  $('approve').addEventListener('click', () => void decide('approve'));
  $('reject').addEventListener('click', () => void decide('reject'));
  $('cancel').addEventListener('click', () => void cancelRun());
  $('crash').addEventListener('click', () => location.reload());

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
  // Re-render countdowns between polls.
  setInterval(() => selected && renderDetail(), 1_000);

  if (__OFFLINE_BUILD__ && 'serviceWorker' in navigator) {
    navigator.serviceWorker.register('./sw.js').catch((e: unknown) => console.warn('offline support unavailable:', e));
  }
  document.title = `Durable agent (${store === 'opfs' ? 'OPFS' : 'IndexedDB'}) · taquba-workflow`;
}

boot();
