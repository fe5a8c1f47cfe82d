/**
 * The demo page: connects to its tab's worker, starts the agent's workflow (`client.start(agent,
 * task)`), shows the selected run's agent view (what it does or waits for, the draft, every step
 * with its attempts, the brief) next to `<taquba-inspector>` (runs, the workflow's calls,
 * executions, signals, dead letters, queues), and turns buttons into runtime calls (`client.signal`,
 * `client.cancel`), and lists the scheduled daily digest with its next firing
 * (`client.listSchedules()`). The run's state is read from the runtime, as the inspector reads it; what the
 * runtime does not keep (outputs, every attempt) comes from the demo's own log (demo-db.ts). A
 * reload, or another tab, shows the same thing.
 *
 * "Continue on the server" hands the selected run off to the demo's Node backend (`npm run
 * demo:server`, named with `?server=<url>` and remembered): `client.handOff(runId, server)` moves
 * it at its next pause, and the panel then reads the run (and sends its signals) there. A hand-off
 * made offline is delivered when the server answers again, also after a reload
 * (`client.resumeHandOffs`).
 */
import { connect, connectHttp, type HostEvent, type HttpWorkflowClient, type MovedRunView, type RunEvent, type WorkflowClient } from 'taquba-workflow/browser';
import { defineTaqubaInspector, RUN_SELECT_EVENT, type RunDescription } from 'taquba-workflow/browser/inspector';
import { agent } from '../agent/agent-workflow.js';
import { LIMITS, liveChannelName, SERVER_LOG, SIGNALS, type Decision, type LiveMessage, type RetryDecision, type StoreKind, type TaskSpec } from '../shared/agent-state.js';
import {
  attemptsOf,
  loadModelSettings,
  modelCalls,
  recordRun,
  runsOf,
  saveModelSettings,
  summarize,
  type AttemptRecord,
  type ModelCallRecord,
  type ModelSettings,
  type RunRecord,
} from '../shared/demo-db.js';
import { byId as $ } from './dom.js';
import type { RunLocation, RunSnapshot } from './run-model.js';
import { renderModelCalls, renderRunDetail, type Streaming } from './views.js';
import { renderSchedules } from './schedules-view.js';

const STORE_SETTING = 'taquba-demo:store';
const SERVER_SETTING = 'taquba-demo:server';
const POLL_MS = 2_000;
/** How often the page asks whether the server answers (the hand-off button's state). */
const SERVER_PROBE_MS = 5_000;

const store: StoreKind = localStorage.getItem(STORE_SETTING) === 'opfs' ? 'opfs' : 'indexeddb';
// The worker learns its store from its name (the URL must stay a literal for the bundler).
const worker = new Worker(new URL('../agent/agent-worker.ts', import.meta.url), { type: 'module', name: `agent-${store}` });
const client: WorkflowClient = connect(worker);
defineTaqubaInspector();
const inspector = $('inspector') as HTMLElementTagNameMap['taquba-inspector'];

/** The runs this browser started, newest first (demo-db.ts). */
let records = new Map<string, RunRecord>();
let selected: string | null = new URL(location.href).searchParams.get('run');
let snapshot: RunSnapshot | undefined;
/** Results of succeeded runs, read once each. */
const results = new Map<string, RunSnapshot['result']>();
/** What the running step streams, per run. */
const streaming = new Map<string, Streaming>();
/** The model-call log of this store (demo-db.ts), for the header's counter and per run. */
let callLog: ModelCallRecord[] = [];
/** The tab that executes runs now (its host id). */
let leader: string | null = null;
let sending = false;
let handingOff = false;
/** The demo's Node backend, when the page was given one (`?server=<url>`, remembered in this browser). */
const server = connectServer();
let serverUp = false;
/** The runs this store handed off, by run id (where to, at which step, whether delivered). */
let movedRuns = new Map<string, MovedRunView>();
let refreshing: Promise<void> | undefined;
let refreshAgain = false;
let firstStepEventSeen = false;

// ---- talking to the runtime ----

function connectServer(): HttpWorkflowClient | null {
  const given = new URL(location.href).searchParams.get('server');
  if (given !== null) {
    if (given === '') localStorage.removeItem(SERVER_SETTING);
    else localStorage.setItem(SERVER_SETTING, given);
  }
  const url = given ?? localStorage.getItem(SERVER_SETTING);
  if (url === null || url === '') return null;
  try {
    // No resend of its own: a hand-off that finds no server stays pending and is tried again.
    return connectHttp(url, { retries: 0 });
  } catch (e) {
    showError(e);
    return null;
  }
}

/** What the server logged under `prefix` (SERVER_LOG: its attempts or model calls of a run), as this store's records. */
async function serverLog<T>(from: HttpWorkflowClient, prefix: string): Promise<T[]> {
  const entries: T[] = [];
  let cursor: Uint8Array | undefined;
  do {
    const page = await from.kvScan(prefix, cursor === undefined ? {} : { cursor });
    for (const [, value] of page.entries) entries.push({ ...(JSON.parse(new TextDecoder().decode(value)) as object), store } as T);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return entries;
}

/** Where run `runId` is: the server when it was handed off there and delivered; else this browser's store. */
function whereRuns(runId: string): { readonly client: WorkflowClient | HttpWorkflowClient; readonly location: RunLocation | null } {
  const moved = movedRuns.get(runId);
  if (!moved) return { client, location: null };
  const delivered = moved.deliveredAtMs !== null;
  const onServer = server !== null && moved.movedTo === server.url && delivered;
  return { client: onServer ? server : client, location: { movedTo: moved.movedTo, delivered, atStep: moved.step, serverAnswers: serverUp } };
}

function showError(error: unknown): void {
  const alert = $('alert');
  const code = (error as { code?: string }).code;
  alert.textContent = `${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`;
  alert.hidden = false;
}

function clearError(): void {
  $('alert').hidden = true;
}

/** Everything the panel shows about `runId`, read now. */
async function loadSnapshot(runId: string): Promise<RunSnapshot> {
  const where = whereRuns(runId);
  let source = where.client;
  // A server that does not answer leaves the page with what this browser knows (the location line says so).
  const read = async (from: WorkflowClient | HttpWorkflowClient) => Promise.all([from.runTimeline(runId), from.bufferedSignal(`${runId}#${SIGNALS.approve}`)]);
  const there = source === client ? null : (source as HttpWorkflowClient);
  const [[timeline, buffered], localAttempts, [serverAttempts, serverCalls]] = await Promise.all([
    read(source).catch((e: unknown) => {
      if (source === client) throw e;
      source = client;
      return read(client);
    }),
    attemptsOf(store, runId),
    // The steps the server ran, as it logged them (nothing while it does not answer).
    there === null
      ? Promise.resolve([[], []] as [AttemptRecord[], ModelCallRecord[]])
      : Promise.all([serverLog<AttemptRecord>(there, SERVER_LOG.attempts(runId)), serverLog<ModelCallRecord>(there, SERVER_LOG.modelCalls(runId))]).catch(() => [[], []] as [AttemptRecord[], ModelCallRecord[]]),
  ]);
  const attempts = [...localAttempts, ...serverAttempts];
  let result = results.get(runId) ?? null;
  if (result === null && !timeline.active && timeline.terminal?.status === 'succeeded') {
    // The workflow's value, decoded on this page by the definition's codec (null if the store did not keep it).
    result = await source
      .workflowRun(agent, runId)
      .result()
      .catch(() => null);
    results.set(runId, result);
  }
  const calls = [...callLog.filter((c) => c.runId === runId), ...serverCalls];
  return { runId, record: records.get(runId), timeline, attempts, calls, approvalBuffered: buffered !== null, leader, result, location: where.location };
}

/** Reads the runs and the selected run's state. Calls while one runs coalesce into one more. */
function refresh(): Promise<void> {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    try {
      do {
        refreshAgain = false;
        const [runs, moved] = await Promise.all([runsOf(store), client.listMovedRuns()]);
        records = new Map(runs.sort((a, b) => b.createdAt - a.createdAt).map((r) => [r.runId, r]));
        movedRuns = new Map(moved.runs.map((m) => [m.runId, m]));
        if (selected === null && records.size > 0) {
          selected = records.keys().next().value ?? null;
          inspector.selectRun(selected);
        }
        snapshot = selected === null ? undefined : await loadSnapshot(selected);
        if (snapshot && !records.has(snapshot.runId) && snapshot.timeline.status === 'unknown') {
          // A run of the other store (the URL kept it across the switch), or one long gone.
          selected = records.keys().next().value ?? null;
          inspector.selectRun(selected);
          refreshAgain = true;
          continue;
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

function renderDetail(): void {
  const s = snapshot?.runId === selected ? snapshot : undefined;
  renderRunDetail(s, s ? streaming.get(s.runId) : undefined, summarize(callLog, s?.runId), {
    sending,
    noteShown: !$('decision-note').hidden,
    server: { url: server?.url ?? null, answers: serverUp },
    handingOff,
  });
}

/** What the inspector shows about a run beyond what the runtime stores: its title, start and the signal it reads. */
function describeRun(runId: string): RunDescription | undefined {
  const r = records.get(runId);
  return {
    ...(r ? { title: r.topic, submittedAtMs: r.createdAt } : {}),
    // A decision sent before the run waits for it shows as buffered.
    signalKeys: [`${runId}#${SIGNALS.approve}`],
  };
}

/** The schedules the runtime keeps, with their next firing (answered by the tab that executes). */
async function loadSchedules(): Promise<void> {
  try {
    renderSchedules(await client.listSchedules());
  } catch (e) {
    if ((e as { code?: string }).code !== 'CLOSED') showError(e);
  }
}

async function loadModelCalls(): Promise<void> {
  callLog = await modelCalls(store);
  renderModelCalls(summarize(callLog));
}

function select(runId: string): void {
  if (runId !== selected) $('decision-note').hidden = true;
  selected = runId;
  const url = new URL(location.href);
  url.searchParams.set('run', runId);
  history.replaceState(null, '', url);
  inspector.selectRun(runId);
  renderDetail();
  void refresh();
}

/** Brings the run panel into view (on a narrow screen it is below the fold after starting a task). */
function showRunPanel(): void {
  const panel = $('run-panel');
  const top = panel.getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight * 0.6) panel.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
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

async function startTask(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const form = event.target as HTMLFormElement;
  fieldError('task', null);
  try {
    const task = readTask(form);
    const createdAt = Date.now();
    const run = await client.start(agent, task);
    // This browser's list of its runs (the store lists active runs, and finished ones for 30 days).
    await recordRun({ store, runId: run.runId, topic: task.topic, createdAt, researchCalls: task.researchCalls, approvalTimeoutMs: task.approvalTimeoutMs, outage: task.outage });
    select(run.runId);
    showRunPanel();
  } catch (e) {
    if (e instanceof FieldError) fieldError('task', e);
    else showError(e);
  }
}

/** Sends a signal to the selected run and says what became of it. */
async function send(name: string, value: Decision | RetryDecision, says: (outcome: 'delivered' | 'buffered') => string): Promise<void> {
  if (!selected) return;
  clearError();
  sending = true;
  renderDetail();
  try {
    const outcome = await whereRuns(selected).client.signal(selected, name, value);
    const note = $('decision-note');
    note.textContent = outcome === 'run-not-active' ? 'The run had already finished: nothing was sent.' : says(outcome);
    note.hidden = false;
  } catch (e) {
    showError(e);
  } finally {
    sending = false;
  }
  await refresh();
}

function decide(decision: Decision['decision']): Promise<void> {
  const reasonInput = $<HTMLInputElement>('reject-reason');
  const value: Decision = { decision, reason: decision === 'reject' ? reasonInput.value : '' };
  if (decision === 'reject') reasonInput.value = '';
  const what = decision === 'approve' ? 'Approval' : 'Rejection';
  return send(SIGNALS.approve, value, (outcome) =>
    outcome === 'delivered' ? `${what} delivered to the waiting run.` : `${what} recorded: the run will read it when it reaches the approval step.`,
  );
}

function retryStep(value: RetryDecision): Promise<void> {
  const outage = selected !== null && records.get(selected)?.outage === true;
  return send(SIGNALS.retry, value, () =>
    value === 'give-up' ? "Giving up: the run fails with the step's error." : `Retry sent: the step runs again${outage ? ', and the simulated outage is over' : ''}.`,
  );
}

async function cancelRun(): Promise<void> {
  if (!selected) return;
  clearError();
  try {
    const cancelled = await whereRuns(selected).client.cancel(selected);
    const note = $('decision-note');
    note.hidden = false;
    note.textContent = cancelled ? 'Cancellation requested.' : 'The run had already finished.';
    refreshSoon();
  } catch (e) {
    showError(e);
  }
}

/** Hands the selected run off to the server: it leaves this browser at its next pause and continues there. */
async function handOffRun(): Promise<void> {
  if (!selected || !server) return;
  clearError();
  handingOff = true;
  const note = $('decision-note');
  note.hidden = false;
  note.textContent = 'Moving the run to the server: it leaves this browser at its next pause (once its running step has finished)…';
  renderDetail();
  try {
    const moved = await client.handOff(selected, server);
    note.textContent = 'The run left this browser: it is delivered to the server as soon as the server answers.';
    void moved.delivered.then(
      () => {
        note.textContent = `The run continues on the server (${moved.to}).`;
        refreshSoon();
      },
      (e: unknown) => (e as { code?: string }).code !== 'CLOSED' && showError(e),
    );
  } catch (e) {
    note.hidden = true;
    showError(e);
  } finally {
    handingOff = false;
  }
  await refresh();
}

/** Asks whether the server answers (the hand-off button says so); when it comes back, hand-offs left pending are delivered. */
async function probeServer(): Promise<void> {
  if (!server) return;
  const answers = await server.queueCounts().then(
    () => true,
    () => false,
  );
  if (answers === serverUp) return;
  serverUp = answers;
  renderDetail();
  if (answers) {
    // Hand-offs made while the server was away (also before a reload): delivered now.
    const resumed = await client.resumeHandOffs(server).catch((e: unknown) => {
      showError(e);
      return [];
    });
    for (const moved of resumed) void moved.delivered.then(refreshSoon, () => undefined);
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
    leader = event.leader;
    // The tab strip tells which of several tabs executes.
    document.title = event.role === 'leader' ? `▶ Executing · ${storeTitle}` : storeTitle;
    if (event.role === 'leader' || event.role === 'follower') {
      refreshSoon();
      void loadSchedules();
    }
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
  leader = event.executor;
  if (event.type === 'terminal') streaming.delete(event.runId);
  // A scheduled run ended: its schedule's last and next firing moved on.
  if (event.type === 'terminal' && event.runId.startsWith('cron-')) void loadSchedules();
  refreshSoon();
}

function onLive(message: LiveMessage): void {
  if (message.type === 'tokens') {
    streaming.set(message.runId, { step: message.step, text: message.text });
    if (message.runId === selected) renderDetail();
  } else {
    // An attempt started or ended: what it streamed is in the log now (or was cut off).
    streaming.delete(message.runId);
    void loadModelCalls().then(() => message.runId === selected && refreshSoon());
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
  $('retry-step').addEventListener('click', () => void retryStep('retry'));
  $('give-up').addEventListener('click', () => void retryStep('give-up'));
  $('cancel').addEventListener('click', () => void cancelRun());
  $('hand-off').addEventListener('click', () => void handOffRun());
  $('crash').addEventListener('click', () => location.reload());
  addEventListener('online', showNetwork);
  addEventListener('offline', showNetwork);
  showNetwork();

  inspector.options = { describeRun, knownRuns: () => [...records.keys()], pollMs: POLL_MS };
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
    // Also for an ended run: a dead letter retried from the inspector revives its run.
    if (document.visibilityState === 'visible') void refresh();
  }, POLL_MS);
  if (server) {
    void probeServer();
    setInterval(() => document.visibilityState === 'visible' && void probeServer(), SERVER_PROBE_MS);
    addEventListener('online', () => void probeServer());
  }
  // A firing moves the next one on; a minute is often enough for a daily schedule.
  setInterval(() => document.visibilityState === 'visible' && void loadSchedules(), 60_000);

  if (__OFFLINE_BUILD__ && 'serviceWorker' in navigator) {
    navigator.serviceWorker.register('./sw.js').catch((e: unknown) => console.warn('offline support unavailable:', e));
  }
  document.title = storeTitle;
}

boot();
