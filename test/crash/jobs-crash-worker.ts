/**
 * Child process of the jobs crash test. Opens the filesystem store, submits one `slow.square` job
 * per argument under its idempotency key, prints `submitted <input> <id>`, then works the jobs.
 * Mode `hang`: every job waits forever after printing `started <input>` (the parent kills the
 * process there). Mode `finish`: jobs complete; prints `done <input> <output>` for each, then
 * `all done`, and waits to be killed.
 */
import { writeSync } from 'node:fs';
import { Queue } from '../../src/core/queue/index.js';
import { JobRunner } from '../../src/core/jobs/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { squareJob } from './jobs-crash-job.js';

const [root, mode, ...inputs] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);

const store = new FileSystemObjectStore({ root: root! });
const queue = await Queue.open(store, 'jobs-crash', { logger: false });
const job = squareJob(mode === 'hang', (n) => say(`started ${n}`));
const runner = new JobRunner(queue, store, { pollIntervalMs: 20, logger: false }).register(job);
const handles = [];
for (const n of inputs.map(Number)) {
  const h = await runner.submit(job, { n });
  say(`submitted ${n} ${h.id}`);
  handles.push([n, h] as const);
}
runner.spawn();
if (mode === 'finish') {
  for (const [n, h] of handles) say(`done ${n} ${await h.result()}`);
  say('all done');
}
await new Promise(() => undefined);
