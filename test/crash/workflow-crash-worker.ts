/**
 * Child process of the workflow crash test. Opens the filesystem store, submits RUNS runs (mode
 * `submit`; later modes resubmit the runs still in flight, which must be duplicates), and works
 * them with a runtime whose steps do three memoized units each. Prints, synchronously so a kill
 * cannot reorder them:
 *   `submitted <run> <new|dup>`, `ran <run> <step> <attempt>` when a step starts,
 *   `computing <run> <step> <unit>` when a unit's work starts, `stored <run> <step> <unit>` once
 *   its memo entry is stored (durable), `hit <run> <step> <unit>` when the memo served it, `ready`.
 * Mode `finish` exits with `all done` once every run's result is stored by the terminal hook.
 */
import { writeSync } from 'node:fs';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime, type Step } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { waitFor } from '../support/wait.js';

export const RUNS = 12;
export const STEPS = 4;
export const UNITS = 3;

const [root, mode] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const quiet = { warn: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function step(s: Step): Promise<StepOutcome> {
  say(`ran ${s.runId} ${s.stepNumber} ${s.attempt}`);
  for (let unit = 0; unit < UNITS; unit++) {
    const id = `${s.runId} ${s.stepNumber} ${unit}`;
    let ran = false;
    await s.memo.memoized(`unit-${unit}`, async () => {
      ran = true;
      say(`computing ${id}`);
      // Real time is the subject: a unit's work takes 10-29 ms, so the parent's kill can land inside it.
      await sleep(10 + ((s.stepNumber * 7 + unit * 13) % 20));
      return { unit, by: process.pid };
    });
    // memoized resolves after the entry is stored.
    say(ran ? `stored ${id}` : `hit ${id}`);
  }
  s.effects.put(`app/done/${s.runId}/${s.stepNumber}`, utf8(String(s.attempt)));
  const trail = `${fromUtf8(s.payload)}${s.stepNumber}`;
  return s.stepNumber === STEPS - 1 ? StepOutcome.succeed(utf8(trail)) : StepOutcome.continueNow(utf8(trail));
}

const store = new FileSystemObjectStore({ root });
const queue = await Queue.open(store, 'workflow', { logger: quiet, defaultQueueConfig: { maxAttempts: 50, retryBackoffBaseMs: 0 } });
const runtime = new WorkflowRuntime(
  queue,
  store,
  step,
  {
    async onTermination(outcome, effects) {
      effects.put(`app/result/${outcome.runId}`, outcome.result ?? utf8(`${outcome.status}: ${outcome.error}`));
    },
  },
  { maxConcurrentSteps: 4, pollIntervalMs: 50, logger: quiet },
);
for (let i = 0; i < RUNS; i++) {
  const runId = `run-${i}`;
  // Mode `submit` starts every run; the other modes submit again only the runs still in flight
  // (a finished run released its id, and submitting it would start it over).
  if (mode !== 'submit' && (await queue.kvGet(utf8(`workflow/runs/${runId}`))) === undefined) continue;
  const r = await runtime.submit({ runId, input: utf8(`${runId}:`) });
  say(`submitted ${runId} ${r.newlySubmitted ? 'new' : 'dup'}`);
}
const worker = runtime.spawn();
say('ready');
if (mode === 'finish') {
  await waitFor(
    async () => {
      let done = 0;
      for (let i = 0; i < RUNS; i++) if ((await queue.kvGet(utf8(`app/result/run-${i}`))) !== undefined) done++;
      return done === RUNS;
    },
    `the results of all ${RUNS} runs`,
    { timeoutMs: 60_000, intervalMs: 20 },
  );
  await worker.shutdown();
  await queue.close();
  say('all done');
} else {
  await worker.done;
}
