/**
 * Child process of the CLI tests: the live writer of a store the CLI inspects. Opens the queue
 * at path `app` (the README's) as the store's writer and runs a workflow with every kind of run:
 *   approval-1  step 0 memoizes, writes a KV effect, waits on signal `approve:approval-1` (1 h);
 *               step 1 succeeds with the signal's payload
 *   timer-1     step 0 continues after 1 h
 *   broken-1    every try throws (2 attempts), so its step is dead-lettered and the run fails
 *   done-1      two steps, succeeds with `finished`
 *   hookfail-1  succeeds, but the terminal hook throws for it: its notification job goes dead
 *   ticker      a new step every 100 ms, for as long as the process lives (the store keeps changing)
 * Prints `ready` once the runs are in those states, then works until SIGTERM, when it shuts down
 * cleanly (releasing the writer lock, writing a closing heartbeat) and prints `closed`.
 *
 * Usage: `live-writer.ts fs <root>` or `live-writer.ts s3 <endpoint> <bucket> <prefix>`
 * (S3 credentials from the environment).
 */
import { writeSync } from 'node:fs';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { Queue } from '../../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime, type Step } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { S3ObjectStore } from '../../src/stores/s3/index.js';
import { waitFor } from '../support/wait.js';

const say = (line: string): void => void writeSync(1, `${line}\n`);
const [kind, ...args] = process.argv.slice(2);
const store: ObjectStore =
  kind === 's3'
    ? new S3ObjectStore({ bucket: args[1], prefix: args[2], clientConfig: { endpoint: args[0], region: 'us-east-1', forcePathStyle: true } })
    : new FileSystemObjectStore({ root: args[0] });

async function step(s: Step): Promise<StepOutcome> {
  const run = s.runId;
  if (run === 'broken-1') throw new Error('model endpoint refused: 503');
  if (run === 'ticker') return StepOutcome.continueAfter(s.payload, 100);
  if (run === 'timer-1') return s.stepNumber === 0 ? StepOutcome.continueAfter(s.payload, 3600_000) : StepOutcome.succeed(utf8('late'));
  if (run === 'hookfail-1') return StepOutcome.succeed(utf8('ok'));
  if (run === 'done-1') return s.stepNumber === 0 ? StepOutcome.continueNow(s.payload) : StepOutcome.succeed(utf8('finished'));
  // approval-*
  if (s.stepNumber === 0) {
    const draft = await s.memo.memoized('draft', () => `draft of ${fromUtf8(s.payload)}`);
    s.effects.put(`drafts/${run}`, utf8(draft));
    return StepOutcome.continueOnSignal(utf8(draft), `approve:${run}`, 3600_000);
  }
  return StepOutcome.succeed(s.signalPayload ?? utf8('no signal'));
}

const quiet = false;
const queue = await Queue.open(store, 'app', {
  logger: quiet,
  livenessHeartbeatMs: 1000,
  schedulerIntervalMs: 50,
  queueConfigs: { 'workflow-steps': { keepDoneMs: 3600_000, maxAttempts: 2, retryBackoffBaseMs: 20, retryBackoffMaxMs: 20 } },
});
const hook = {
  async onTermination(outcome: { runId: string }): Promise<void> {
    if (outcome.runId === 'hookfail-1') throw new Error('webhook receiver down');
  },
};
const runtime = new WorkflowRuntime(queue, store, step, hook, { stepOutputReplay: true, pollIntervalMs: 50, logger: quiet });
const worker = runtime.spawn();
for (const runId of ['approval-1', 'timer-1', 'broken-1', 'done-1', 'hookfail-1', 'ticker']) await runtime.submit({ runId, input: utf8(runId), headers: { team: 'cli-tests' } });

await waitFor(
  async () => {
    const approval = await runtime.getRun('approval-1');
    const timer = await runtime.getRun('timer-1');
    const dead = await runtime.listDeadSteps();
    const done = await runtime.getRun('done-1');
    const broken = await runtime.getRun('broken-1');
    return approval?.state === 'waiting-for-signal' && timer?.state === 'scheduled' && dead.some((d) => d.runId === 'broken-1') && dead.some((d) => d.runId === 'hookfail-1') && done === null && broken === null;
  },
  'every run in the state the CLI tests expect',
  { timeoutMs: 60_000, intervalMs: 20 },
);
say('ready');

process.once('SIGTERM', () => {
  void (async () => {
    await worker.shutdown();
    await queue.close();
    say('closed');
    process.exit(0);
  })();
});
