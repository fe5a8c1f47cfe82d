/**
 * The demo's worker: one per tab. It serves the workflow runtime with the agent's workflow over
 * the store the page chose (the worker's name: `agent-indexeddb` or `agent-opfs`); the workers of
 * all tabs elect one leader that executes the runs (and fires the daily digest's schedule), the
 * others forward to it.
 */
import { serveWorkflowRuntime } from 'taquba-workflow/browser/worker';
import { liveChannelName, STORE_NAME, type StoreKind } from '../shared/agent-state.js';
import { loadModelSettings, recordModelCall, startAttempt } from '../shared/demo-db.js';
import { agent, provideAgentEnvironment } from './agent-workflow.js';
import { digest, digestSchedule } from './digest-workflow.js';

const store: StoreKind = self.name === 'agent-opfs' ? 'opfs' : 'indexeddb';
const hostId = `tab-${crypto.randomUUID().slice(0, 8)}`;
const live = new BroadcastChannel(liveChannelName(store));

provideAgentEnvironment({
  host: hostId,
  loadModelSettings,
  recordModelCall: (record) => recordModelCall({ ...record, store }),
  startAttempt: (record) => startAttempt({ ...record, store }),
  post: (message) => live.postMessage(message),
});

serveWorkflowRuntime({
  store,
  name: STORE_NAME,
  hostId,
  workflows: [agent, digest],
  schedules: [digestSchedule(store)],
  queueOptions: {
    // A durable timer (the approval timeout) fires within half a second.
    schedulerIntervalMs: 500,
    // The queue's retries are for the runtime's own deliveries of a run (a step's retries happen
    // inside the workflow, see agent-workflow.ts). A delivery cut off by a reload or a closed tab
    // counts as an interruption, not an attempt. Finished deliveries are kept a day, so the
    // inspector shows every execution's tries after a reload.
    defaultQueueConfig: { maxAttempts: 5, retryBackoffBaseMs: 500, retryBackoffMaxMs: 10_000, leaseMs: 30_000, keepDoneMs: 24 * 3600_000 },
  },
  // Finished runs (their status, error and result) are kept 30 days: the page and the inspector read them back.
  runtimeOptions: { maxConcurrentSteps: 4, outcomeRetentionMs: 30 * 24 * 3600_000 },
});
