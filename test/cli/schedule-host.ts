/**
 * Child process of the schedule CLI tests: the live writer of a filesystem store, running a
 * runtime host with the workflow `greet` and schedules (one declared, `declared-daily`), so
 * `taquba schedules add` / `remove` reach it through its runtime's inbox. Its scheduler's clock
 * reads 50 s past a minute when it starts (real time otherwise), so a minutely schedule added at
 * once fires about 10 s later instead of up to a minute later.
 * Prints `ready`, works until SIGTERM, then shuts down cleanly and prints `closed`.
 *
 * Usage: `schedule-host.ts fs <root>`.
 */
import { writeSync } from 'node:fs';
import { systemClock, type Clock } from '../../src/core/clock.js';
import { createRuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const say = (line: string): void => void writeSync(1, `${line}\n`);
const root = process.argv[3]!;
const store = new FileSystemObjectStore({ root });
const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });

const MINUTE = 60_000;
const offsetMs = (((50_000 - (Date.now() % MINUTE)) % MINUTE) + MINUTE) % MINUTE;
const cronClock: Clock = { now: () => Date.now() + offsetMs, sleep: (ms, signal) => systemClock.sleep(ms, signal) };

const queue = await Queue.open(store, 'app', { logger: false });
const host = createRuntimeHost(queue, store, {
  runner: { workflows: [greet] },
  runtimeOptions: { pollIntervalMs: 20, commandPollMs: 20, logger: false },
  schedules: [{ name: 'declared-daily', cron: '0 6 * * *', start: [greet, 'daily'] }],
  cronOptions: { clock: cronClock, logger: false },
});
const worker = host.spawn();
say('ready');

process.once('SIGTERM', () => {
  void (async () => {
    await worker.shutdown();
    await queue.close();
    say('closed');
    process.exit(0);
  })();
});
