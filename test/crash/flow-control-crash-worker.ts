/**
 * Child process of the flow-control crash test. Opens the filesystem store; mode `submit` submits
 * RUNS runs under concurrency keys (`a` limit 1, `b` limit 2) and works them; mode `finish`
 * reports the runs still waiting for a slot, works everything to the end and exits with
 * `all done`. Prints, synchronously so a kill cannot reorder them: `waiting <run>` (finish, at
 * start), `start <run> <step> <attempt>` when a step starts, `end <run>` just before the last step
 * returns (its ending commits after: no run of the key can start before that line),
 * `ready`. Steps take 15-35 ms of real time, so the parent's kill lands inside one.
 */
import { writeSync } from 'node:fs';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime, type Step } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { waitFor } from '../support/wait.js';
import { RUNS } from './flow-control-crash-runs.js';

const STEPS = 3;

const [root, mode] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const quiet = { warn: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function step(s: Step): Promise<StepOutcome> {
  say(`start ${s.runId} ${s.stepNumber} ${s.attempt}`);
  await sleep(15 + ((s.stepNumber * 7 + s.runId.charCodeAt(1) * 5) % 20));
  const trail = `${fromUtf8(s.payload)}${s.stepNumber}`;
  if (s.stepNumber < STEPS - 1) return StepOutcome.continueNow(utf8(trail));
  say(`end ${s.runId}`);
  return StepOutcome.succeed(utf8(trail));
}

const store = new FileSystemObjectStore({ root });
const queue = await Queue.open(store, 'flow', { logger: quiet, defaultQueueConfig: { maxAttempts: 50, retryBackoffBaseMs: 0 } });
const runtime = new WorkflowRuntime(
  queue,
  store,
  step,
  {
    async onTermination(outcome, effects) {
      effects.put(`app/result/${outcome.runId}`, outcome.result ?? utf8(`${outcome.status}: ${outcome.error}`));
    },
  },
  { maxConcurrentSteps: 8, pollIntervalMs: 50, logger: quiet },
);
if (mode === 'submit') {
  for (const { runId, key, limit } of RUNS) await runtime.submit({ runId, input: utf8(`${runId}:`), concurrency: { key, limit } });
} else {
  for (const { runId } of RUNS) if ((await runtime.getRun(runId))?.state === 'waiting-for-slot') say(`waiting ${runId}`);
}
const worker = runtime.spawn();
say('ready');
if (mode === 'finish') {
  await waitFor(
    async () => {
      for (const { runId } of RUNS) if ((await queue.kvGet(utf8(`app/result/${runId}`))) === undefined) return false;
      return true;
    },
    'the results of every run',
    { timeoutMs: 60_000, intervalMs: 20 },
  );
  await worker.shutdown();
  for (const { runId } of RUNS) say(`result ${runId} ${fromUtf8((await queue.kvGet(utf8(`app/result/${runId}`)))!)}`);
  say(`flow keys left ${(await queue.kvScan(utf8('workflow/flow/'))).entries.length}`);
  await queue.close();
  say('all done');
} else {
  await worker.done;
}
