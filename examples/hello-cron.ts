/**
 * hello_cron: a schedule that enqueues a job every minute, and a queue worker that prints each one.
 * The schedule `minutely-task` (`* * * * *`, UTC) is kept in the store; the scheduler, running
 * beside the worker on the same queue handle, sleeps until the next minute and enqueues that
 * minute's job once (its dedup key is the schedule's name and fire time).
 *
 * By default ten minutes pass on a mock clock, in well under a second. With `--real` it runs on
 * the wall clock until ten jobs have arrived or Ctrl-C. Either way the scheduler is stopped
 * before the worker, so the last job enqueued is still handled.
 *
 *   npm run example:hello-cron
 *   npm run example:hello-cron -- --real
 */
import { CronScheduler, HEADER_CRON_FIRE_TIME, MemoryObjectStore, Queue, systemClock, type Clock } from 'taquba-workflow';
import { runWorker, type JobRecord } from 'taquba-workflow/queue';
import { MockClock } from 'taquba-workflow/testing';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const MINUTES = 10;
const real = process.argv.includes('--real');
// The mock clock starts half a minute before the first firing.
const mock = real ? undefined : new MockClock(Date.parse('2025-01-01T00:00:30Z'));
const clock: Clock = mock ?? systemClock;

const store = new MemoryObjectStore();
const queue = await Queue.open(store, 'hello-cron', { clock });
const scheduler = new CronScheduler(queue, {
  schedules: [{ name: 'minutely-task', cron: '* * * * *', enqueue: { queue: 'tasks', payload: utf8('hello from cron') } }],
});

let received = 0;
const workerStop = new AbortController();
const worker = runWorker(
  queue,
  'tasks',
  async (job: JobRecord) => {
    // The fire time the scheduler stamped on the job, as HH:MM:SS.
    const at = job.headers[HEADER_CRON_FIRE_TIME]!.slice(11, 19);
    console.log(`[${at} UTC] received cron job from queue '${job.queue}': ${fromUtf8(job.payload)}`);
    received++;
  },
  { signal: workerStop.signal },
);

const cron = scheduler.spawn();
const [schedule] = await waitForSchedule();
console.log(`schedule ${schedule.name} (${schedule.cron}, ${schedule.timezone}) -> queue 'tasks', first firing ${new Date(schedule.nextFireMs).toISOString()}`);

if (mock) {
  // A second at a time, letting the scheduler and the worker run between steps, until each minute's job is in.
  while (received < MINUTES) {
    await mock.advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
} else {
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearInterval(timer);
      resolve();
    };
    const timer = setInterval(() => received >= MINUTES && done(), 200);
    process.once('SIGINT', done);
  });
}

// The scheduler first (no new job after this), then the worker (it finishes the job in hand).
await cron.shutdown();
workerStop.abort();
await worker;
console.log(`stopped after ${received} jobs`);
await queue.close();

/** The scheduler writes its declared schedule on its first pass. */
async function waitForSchedule() {
  for (;;) {
    const list = await scheduler.list();
    if (list.length > 0) return list;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
