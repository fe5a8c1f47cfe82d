/**
 * The page's worker of the hand-off tests: `serveWorkflowRuntime` on IndexedDB with `travel`; the
 * store name is the worker's name. Its step executions go to the store's step channel.
 */
import { serveWorkflowRuntime } from '../../../src/browser/worker.js';
import { stepChannelName, stepSite, travel } from './hand-off-workflows.js';

const channel = new BroadcastChannel(stepChannelName(self.name));
stepSite.where = 'browser';
stepSite.report = (execution) => channel.postMessage(execution);

serveWorkflowRuntime({ store: 'indexeddb', name: self.name, hostId: `page-${self.name}`, workflows: [travel], runtimeOptions: { pollIntervalMs: 50 } });
