/**
 * Child process of the `ctx.invoke` crash test. Opens the filesystem store, starts (or finds
 * again: same run id and input) a run of `parent`, which runs step `prepare`, invokes `child`
 * (steps c1..c3) and then runs step `finish`, and works both runs. When the code reaches the point
 * named by the second argument it prints `at <point>` and stops there for good, for the parent
 * test to SIGKILL it; every point reached after it stops too, so nothing moves on while the kill
 * is on its way. The points: `inside c<k>` (child step k's function running), `child ended` (the
 * child's run ended and its outcome went to the parent: the app's terminal hook of the child) and
 * `after invoke` (the parent has the child's value, `finish` not begun).
 *
 * Appends to the side file (third argument), synchronously so a kill cannot lose or reorder them:
 * `ran <step>` when a step's function starts and `done <step>` once the workflow received the
 * step's value (it is durable then; replays append it again). Prints `started <new|dup>` and
 * `result <json>` when the parent succeeded (then it exits).
 */
import { appendFileSync, writeSync } from 'node:fs';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow, WorkflowRuntime, type TerminalHook } from '../../src/core/workflow/index.js';
import { PARENT_RUN_HEADER } from '../../src/core/workflow/functions/children.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

export const RUN_ID = 'fn-invoke-crash';

const [root, stopAt = 'none', sideFile] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const side = (line: string): void => appendFileSync(sideFile!, `${line}\n`);
const quiet = { warn: () => undefined };

let stopped = false;

/** Holds the code for good at `stopAt`, and at every point after it. */
async function point(name: string): Promise<void> {
  if (!stopped && name !== stopAt) return;
  if (!stopped) say(`at ${name}`);
  stopped = true;
  await new Promise(() => undefined);
}

const child = defineWorkflow({
  name: 'child',
  async run(ctx, input: string) {
    let trail = input;
    for (let k = 1; k <= 3; k++) {
      const step = `c${k}`;
      trail = await ctx.step(step, async () => {
        side(`ran ${step}`);
        await point(`inside ${step}`);
        // A little real work, so the step takes a turn of the event loop.
        await new Promise((r) => setTimeout(r, 2));
        return `${trail}>${k}`;
      });
      side(`done ${step}`);
    }
    return { trail };
  },
});

const parent = defineWorkflow({
  name: 'parent',
  async run(ctx, input: string) {
    const prepared = await ctx.step('prepare', () => (side('ran prepare'), `${input}!`));
    side('done prepare');
    const got = await ctx.invoke(child, prepared);
    await point('after invoke');
    const finished = await ctx.step('finish', () => (side('ran finish'), `${got.trail}>finished`));
    side('done finish');
    return finished;
  },
});

/** The app's hook: hears the child's ending, after its outcome was sent to the parent. */
const hook: TerminalHook = {
  observes: (outcome) => outcome.headers[PARENT_RUN_HEADER] !== undefined,
  onTermination: () => point('child ended'),
};

const store = new FileSystemObjectStore({ root: root! });
const queue = await Queue.open(store, 'fn-invoke-crash', { logger: quiet });
const runtime = new WorkflowRuntime(queue, store, { workflows: [parent, child] }, hook, { logger: quiet, pollIntervalMs: 50 });
const run = await runtime.start(parent, 'in', { runId: RUN_ID });
say(`started ${run.newlySubmitted ? 'new' : 'dup'}`);
const worker = runtime.spawn();
const out = await run.result();
say(`result ${JSON.stringify(out)}`);
await worker.shutdown();
await queue.close();
