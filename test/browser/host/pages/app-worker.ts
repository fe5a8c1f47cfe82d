/**
 * The test app's worker: a scripted StepRunner and terminal hook served by `serveWorkflowRuntime`.
 * Configured through the worker's name (JSON `WorkerConfig`). Everything it does is reported on
 * the BroadcastChannel `config.log` so a test (in any tab of the origin) can watch it.
 *
 * A run's input (and every step's payload) is a JSON `Plan`:
 *   steps      total number of steps; the last one succeeds with `done:<runId>` (or fails with `failWith`)
 *   holdAt     this step hangs on its first delivery (until its worker dies or the run is cancelled)
 *   delayMs    every step sleeps this long
 *   afterAt    at this step, continue after `ms` (a durable timer)
 *   signalAt   at this step, park the run on `key` for `timeoutMs`
 *   failOnceAt this step throws a transient error on its first attempt
 *   poisonAt   this step throws a permanent error (its job dead-letters at once)
 * Every step runs a memoized computation (`work`, logged as `computed` when it really runs) and
 * stages the KV write `exec/<runId>/<step>` = host id; the hook stages `done/<runId>` = status.
 */
import { utf8 } from '../../../../src/core/bytes.js';
import { StepError, StepOutcome, type Step, type TerminalHook } from '../../../../src/core/workflow/index.js';
import { serveWorkflowRuntime } from '../../../../src/browser/worker.js';
import { greet, hang, refuse } from './app-jobs.js';
import { squares } from './app-bulk.js';

export interface WorkerConfig {
  readonly store: 'indexeddb' | 'opfs';
  readonly name: string;
  readonly hostId: string;
  readonly log: string;
  /** The queue's scheduler tick (default 1 s). */
  readonly schedulerIntervalMs?: number;
}

export interface Plan {
  readonly steps: number;
  readonly holdAt?: number;
  readonly delayMs?: number;
  readonly afterAt?: { readonly step: number; readonly ms: number };
  readonly signalAt?: { readonly step: number; readonly key: string; readonly timeoutMs: number };
  readonly failOnceAt?: number;
  readonly poisonAt?: number;
  readonly failWith?: string;
}

/** What the worker reports on the log channel. */
export type LogEntry =
  | { readonly type: 'run'; readonly host: string; readonly runId: string; readonly step: number; readonly attempt: number; readonly interruptions: number; readonly signal: string | null; readonly at: number }
  | { readonly type: 'computed'; readonly host: string; readonly runId: string; readonly step: number }
  | { readonly type: 'holding'; readonly host: string; readonly runId: string; readonly step: number }
  | { readonly type: 'hook'; readonly host: string; readonly runId: string; readonly status: string }
  | { readonly type: 'role'; readonly host: string; readonly role: string; readonly leader: string | null; readonly at: number }
  /** A `greet` job started (pages/app-jobs.ts, when its input names the log). */
  | { readonly type: 'job'; readonly jobId: string };

const config = JSON.parse(self.name) as WorkerConfig;
const log = new BroadcastChannel(config.log);
const report = (entry: LogEntry): void => log.postMessage(entry);
const text = new TextDecoder();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function runStep(step: Step): Promise<StepOutcome> {
  const plan = JSON.parse(text.decode(step.payload)) as Plan;
  const n = step.stepNumber;
  report({
    type: 'run',
    host: config.hostId,
    runId: step.runId,
    step: n,
    attempt: step.attempt,
    interruptions: step.interruptions,
    signal: step.signalPayload === null ? null : text.decode(step.signalPayload),
    at: Date.now(),
  });
  await step.memo.memoized('work', () => {
    report({ type: 'computed', host: config.hostId, runId: step.runId, step: n });
    return { host: config.hostId, step: n };
  });
  step.effects.put(`exec/${step.runId}/${n}`, utf8(config.hostId));
  if (plan.holdAt === n && step.attempt === 1 && step.interruptions === 0) {
    report({ type: 'holding', host: config.hostId, runId: step.runId, step: n });
    await new Promise((resolve) => step.signal.addEventListener('abort', resolve, { once: true }));
    return StepOutcome.cancel('released by a cancel');
  }
  if (plan.failOnceAt === n && step.attempt === 1) throw StepError.transient('flaky dependency');
  if (plan.poisonAt === n) throw StepError.permanent('poisoned input');
  // Real time is the subject: a step that takes a while, so a reload, crash or handover lands mid-step.
  if (plan.delayMs) await sleep(plan.delayMs);
  if (n >= plan.steps - 1) return plan.failWith ? StepOutcome.fail(plan.failWith) : StepOutcome.succeed(utf8(`done:${step.runId}`));
  if (plan.signalAt?.step === n) return StepOutcome.continueOnSignal(step.payload, plan.signalAt.key, plan.signalAt.timeoutMs);
  if (plan.afterAt?.step === n) return StepOutcome.continueAfter(step.payload, plan.afterAt.ms);
  return StepOutcome.continueNow(step.payload);
}

const hook: TerminalHook = {
  async onTermination(outcome, effects) {
    effects.put(`done/${outcome.runId}`, utf8(outcome.status));
    report({ type: 'hook', host: config.hostId, runId: outcome.runId, status: outcome.status });
  },
};

const handle = serveWorkflowRuntime({
  store: config.store,
  name: config.name,
  hostId: config.hostId,
  runner: runStep,
  terminalHook: hook,
  jobs: [greet, refuse, hang],
  jobRunnerOptions: { pollIntervalMs: 50 },
  bulk: { pipeline: squares, options: { pollIntervalMs: 50, logger: false } },
  // Retries of `failOnceAt` come back fast.
  queueOptions: {
    defaultQueueConfig: { retryBackoffBaseMs: 50, retryBackoffMaxMs: 200 },
    ...(config.schedulerIntervalMs === undefined ? {} : { schedulerIntervalMs: config.schedulerIntervalMs }),
  },
  runtimeOptions: { pollIntervalMs: 50 },
});
handle.listen((event) => {
  if (event.type === 'role-changed') report({ type: 'role', host: config.hostId, role: event.role, leader: event.leader, at: Date.now() });
});
