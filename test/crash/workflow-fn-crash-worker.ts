/**
 * Child process of the workflow-function crash test. Opens the filesystem store, starts (or finds
 * again: same run id and input) a run of a 5-step workflow function, and works it. When the code
 * reaches the point named by the second argument (`before s3`: step 2 committed, step 3 not begun;
 * `inside s3`: step 3's function running; `before end`: every step committed, the run not ended)
 * it prints `at <point>` and stops there, for the parent to SIGKILL it. Prints, synchronously so a
 * kill cannot reorder them:
 *   `started <new|dup>`, `ran s<k> <key>` when step k's function starts (key: the run's
 *   `ctx.uuid()` it uses), `done s<k>` once the workflow received step k's value (it is durable
 *   then), `at <point>`, and `result <json>` when the run succeeded (then it exits).
 */
import { writeSync } from 'node:fs';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

export const RUN_ID = 'fn-crash';
export const STEPS = 5;

const [root, stopAt = 'none'] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const quiet = { warn: () => undefined };

/** Holds the code for good at `stopAt` (the parent kills the process there). */
async function point(name: string): Promise<void> {
  if (name !== stopAt) return;
  say(`at ${name}`);
  await new Promise(() => undefined);
}

const five = defineWorkflow({
  name: 'five',
  async run(ctx, input: string) {
    // Used by every step: the same on every replay once a step has seen it.
    const key = ctx.uuid();
    let trail = input;
    let sum = 0;
    for (let k = 1; k <= STEPS; k++) {
      await point(`before s${k}`);
      const out = await ctx.step(`s${k}`, async () => {
        say(`ran s${k} ${key}`);
        await point(`inside s${k}`);
        // A little real work, so the step takes a turn of the event loop.
        await new Promise((r) => setTimeout(r, 2));
        return { trail: `${trail}>${k}`, add: k * k, key };
      });
      say(`done s${k}`);
      trail = out.trail;
      sum += out.add;
    }
    await point('before end');
    return { trail, sum, key };
  },
});

const store = new FileSystemObjectStore({ root });
const queue = await Queue.open(store, 'fn-crash', { logger: quiet });
const runtime = new WorkflowRuntime(queue, store, { workflows: [five] }, undefined, { logger: quiet, pollIntervalMs: 50 });
const run = await runtime.start(five, 'in', { runId: RUN_ID });
say(`started ${run.newlySubmitted ? 'new' : 'dup'}`);
const worker = runtime.spawn();
const out = await run.result();
say(`result ${JSON.stringify(out)}`);
await worker.shutdown();
await queue.close();
