/**
 * One tab of the test app: starts the app worker (app-worker.ts, or with `worker=fn` the workflow
 * functions' fn-worker.ts) on the store named in the query string, connects to it, and exposes
 * `window.__tab` (`TabApi`) for the browser commands of test/setup/browser-tabs.ts, which drive it
 * with `page.evaluate`. Only JSON crosses that way: bytes are UTF-8 text here.
 */
import { connect, type HostEvent } from '../../../../src/browser/index.js';
import { greet } from './app-jobs.js';
import type { WorkerConfig } from './app-worker.js';
import type { FnWorkerConfig } from './fn-worker.js';
import { review, type Decision } from './fn-workflows.js';

const params = new URLSearchParams(location.search);
// A fresh id per page load, so a reloaded tab is told apart from its earlier self.
const hostId = `${params.get('host') ?? 'tab'}.${Math.random().toString(36).slice(2, 6)}`;
const scheduler = params.get('scheduler');
const config: WorkerConfig = {
  store: (params.get('store') ?? 'indexeddb') as WorkerConfig['store'],
  name: params.get('name') ?? 'default',
  hostId,
  log: params.get('log') ?? 'taquba-test-log',
  ...(scheduler === null ? {} : { schedulerIntervalMs: Number(scheduler) }),
};
// `hold=draft`: the fn worker holds the draft step on this tab's first load only (a reload then finishes it).
const holdKey = `taquba-test-held:${config.name}`;
const holdDraft = params.get('hold') === 'draft' && sessionStorage.getItem(holdKey) === null;
if (holdDraft) sessionStorage.setItem(holdKey, '1');
const fnConfig: FnWorkerConfig = { store: config.store, name: config.name, hostId, holdDraft };
const worker =
  params.get('worker') === 'fn'
    ? new Worker(new URL('./fn-worker.ts', import.meta.url), { type: 'module', name: JSON.stringify(fnConfig) })
    : new Worker(new URL('./app-worker.ts', import.meta.url), { type: 'module', name: JSON.stringify(config) });
const client = connect(worker);
const events: HostEvent[] = [];
client.subscribe((e) => events.push(e));
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const tab = {
  ready: true,
  hostId,
  async info() {
    return { ...(await client.info()), persistence: await client.persistence };
  },
  async submit(plan: unknown, runId?: string) {
    return client.submit({ ...(runId === undefined ? {} : { runId }), input: encoder.encode(JSON.stringify(plan)) });
  },
  async status(runId: string) {
    const view = await client.status(runId);
    return view && { ...view, result: view.result == null ? null : decoder.decode(view.result) };
  },
  async kvGet(key: string) {
    const value = await client.kvGet(key);
    return value === null ? null : decoder.decode(value);
  },
  async kvKeys(prefix: string) {
    const page = await client.kvScan(prefix, { limit: 1000 });
    return page.entries.map(([k, v]) => [decoder.decode(k), decoder.decode(v)]);
  },
  signal(key: string, payload: string) {
    return client.signal(key, encoder.encode(payload));
  },
  /** The run events this tab received, as `type:runId[:step]`. */
  events() {
    return events.filter((e) => e.type !== 'role-changed').map((e) => ('stepNumber' in e ? `${e.type}:${e.runId}:${e.stepNumber}` : `${e.type}:${e.runId}`));
  },
  async waitRole(role: string, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await client.info();
      if (info.role === role) return info;
      if (Date.now() > deadline) throw new Error(`tab ${hostId} is ${info.role}, not ${role}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  },
  /** Submits the `greet` job (its starts reported on `log`); resolves with its id. */
  async submitGreet(name: string, delayMs: number, log?: string) {
    return (await client.jobs.submit(greet, { name, delayMs, ...(log === undefined ? {} : { log }) })).id;
  },
  /** Re-attaches to a `greet` job by id: its stored outcome (null while pending) or, with `wait`, its awaited greeting. */
  async greetResult(id: string, wait: boolean) {
    const handle = client.jobs.handle(greet, id);
    if (wait) return (await handle.result()).greeting;
    const stored = await handle.fetchResult();
    return stored === null ? null : stored.ok ? stored.value.greeting : `failed:${stored.error.reason}`;
  },
  /** Starts the `review` workflow function (fn worker); its steps report on `log`. */
  async startReview(topic: string, log: string, runId: string) {
    const run = await client.start(review, { topic, log }, { runId });
    return { runId: run.runId, newlySubmitted: run.newlySubmitted };
  },
  async reviewState(runId: string) {
    return (await client.workflowRun(review, runId).status())?.state ?? null;
  },
  approve(runId: string, decision: Decision) {
    return client.signal(runId, 'approve', decision);
  },
  /** The review's typed result, its Date as ISO text. */
  async reviewResult(runId: string) {
    const result = await client.workflowRun(review, runId).result();
    return { ...result, at: result.at.toISOString() };
  },
  close() {
    return client.close();
  },
};

export type TabApi = typeof tab;
(window as unknown as { __tab: TabApi }).__tab = tab;
