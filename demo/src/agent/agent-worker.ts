/**
 * The demo's worker: one per tab. It serves the workflow runtime over the store the page chose
 * (the worker's name: `agent-indexeddb` or `agent-opfs`); the workers of all tabs elect one leader that
 * executes the steps, the others forward to it.
 */
import { serveWorkflowRuntime } from 'taquba-workflow/browser/worker';
import { decodeJson, encodeJson, keys, liveChannelName, STORE_NAME, type OutcomeRecord, type StoreKind } from '../shared/agent-state.js';
import { loadModelSettings, recordModelCall } from '../shared/demo-db.js';
import { AgentRunner } from './agent-runner.js';

const store: StoreKind = self.name === 'agent-opfs' ? 'opfs' : 'indexeddb';

const live = new BroadcastChannel(liveChannelName(store));

serveWorkflowRuntime({
  store,
  name: STORE_NAME,
  runner: new AgentRunner({
    loadModelSettings,
    recordModelCall: (record) => recordModelCall({ ...record, store }),
    post: (message) => live.postMessage(message),
  }),
  terminalHook: {
    async onTermination(outcome, effects) {
      const article = outcome.result === null ? null : decodeJson<{ article: string }>(outcome.result).article;
      const record: OutcomeRecord = { status: outcome.status, error: outcome.error, finalStep: outcome.finalStep, finishedAt: Date.now(), article };
      effects.put(keys.outcome(outcome.runId), encodeJson(record));
    },
  },
  queueOptions: {
    // A durable timer (approval timeout, retry backoff) fires within half a second.
    schedulerIntervalMs: 500,
    // Five tries for failures (the "outage" task uses them all). A step cut off by a reload or a
    // closed tab does not use one: it counts as an interruption (up to the default 20).
    // Finished step jobs are kept a day, so the inspector shows every step's tries after a reload.
    defaultQueueConfig: { maxAttempts: 5, retryBackoffBaseMs: 500, retryBackoffMaxMs: 10_000, leaseMs: 30_000, keepDoneMs: 24 * 3600_000 },
  },
  runtimeOptions: { maxConcurrentSteps: 4 },
});
