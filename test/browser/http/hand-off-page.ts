/**
 * What the hand-off tests share: cleanups run after each test, the page's worker host on an
 * IndexedDB store (hand-off-worker.ts; a reload is a new one on the same store), the step
 * executions the page's workers report, and a backend's step log through its control server
 * (test/setup/hand-off-backend.ts).
 */
import { connect, type WorkflowClient } from '../../../src/browser/index.js';
import { stepChannelName, type StepExecution } from './hand-off-workflows.js';

export { uniqueName } from '../host/harness.js';

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs `cleanup` after the current test (latest first). */
export function afterThisTest(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}

/** For `afterEach`: runs the cleanups registered during the test. */
export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export interface Page {
  readonly client: WorkflowClient;
  /** Closes the client and its worker (once; later calls wait for the first). */
  close(): Promise<void>;
}

/** A page's worker host on IndexedDB store `storeName`. */
export function openPage(storeName: string): Page {
  const worker = new Worker(new URL('./hand-off-worker.ts', import.meta.url), { type: 'module', name: storeName });
  const client = connect(worker, { persist: false });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= client.close());
  afterThisTest(close);
  return { client, close };
}

/** The step executions every page on `storeName` reports from now on, across reloads. */
export function pageStepLog(storeName: string): StepExecution[] {
  const steps: StepExecution[] = [];
  const channel = new BroadcastChannel(stepChannelName(storeName));
  channel.onmessage = (event) => steps.push(event.data as StepExecution);
  afterThisTest(() => channel.close());
  return steps;
}

/** The backend's step executions of `runId` (its control server's GET /steps). */
export async function backendSteps(controlUrl: string, runId: string): Promise<StepExecution[]> {
  const response = await fetch(`${controlUrl}/steps?runId=${runId}`);
  if (!response.ok) throw new Error(`control GET /steps failed: ${response.status}`);
  return (await response.json()) as StepExecution[];
}
