/**
 * The test app's worker for workflow functions: `serveWorkflowRuntime({ workflows })` with the
 * definitions of fn-workflows.ts, configured through the worker's name (JSON `FnWorkerConfig`).
 */
import { serveWorkflowRuntime } from '../../../../src/browser/worker.js';
import { doomed, flaky, review, stepHost } from './fn-workflows.js';

export interface FnWorkerConfig {
  readonly store: 'indexeddb' | 'opfs';
  readonly name: string;
  readonly hostId: string;
  /** The `draft` step hangs here (until the worker dies). */
  readonly holdDraft: boolean;
}

const config = JSON.parse(self.name) as FnWorkerConfig;
stepHost.hostId = config.hostId;
stepHost.holdDraft = config.holdDraft;

serveWorkflowRuntime({
  store: config.store,
  name: config.name,
  hostId: config.hostId,
  workflows: [review, doomed, flaky],
  runtimeOptions: { pollIntervalMs: 50 },
});
