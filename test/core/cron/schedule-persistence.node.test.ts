/**
 * Schedules survive a restart: defined by one writer, listed and fired by the next one on the same
 * store, with their recorded firings (a memory store reopened, and a filesystem store on a temp
 * directory opened by a new store instance, as a new process would).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { CronScheduler } from '../../../src/core/cron/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { FileSystemObjectStore } from '../../../src/node/fs-store.js';
import { at, openQueue, START_MS, waitingJobs } from './cron-harness.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

const schedules = [
  { name: 'minutely-task', cron: '* * * * *', enqueue: { queue: 'tasks' } },
  { name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Paris', headers: { team: 'ops' }, enqueue: { queue: 'reports' } },
] as const;

/** Defines and fires on one writer, then reopens the store with `reopen` and checks the next writer sees it all. */
async function survivesRestart(first: ObjectStore, reopen: () => ObjectStore): Promise<void> {
  const clock = new MockClock(START_MS);
  const before = await openQueue(first, clock);
  const scheduler = new CronScheduler(before.queue, { logger: false });
  for (const schedule of schedules) await scheduler.define(schedule);
  await clock.advance(30_000);
  expect(await scheduler.fireDueNow()).toHaveLength(1);
  const listed = await scheduler.list();
  await before.queue.close();

  const after = await openQueue(reopen(), clock);
  const next = new CronScheduler(after.queue, { logger: false });
  expect(await next.list()).toEqual(listed);
  expect(await next.get('minutely-task')).toMatchObject({ lastFireMs: at('2025-01-01T00:01:00Z'), nextFireMs: at('2025-01-01T00:02:00Z') });
  // 03:00 in Paris is 02:00 UTC in winter.
  expect(await next.get('nightly')).toMatchObject({ timezone: 'Europe/Paris', nextFireMs: at('2025-01-01T02:00:00Z'), target: { options: { headers: { team: 'ops' } } } });
  // The tick fired before the restart is not fired again; the next one is.
  expect(await next.fireDueNow()).toEqual([]);
  await clock.advance(60_000);
  expect((await next.fireDueNow()).map((f) => f.fireMs)).toEqual([at('2025-01-01T00:02:00Z')]);
  expect(await waitingJobs(after.queue, 'tasks')).toHaveLength(2);
}

describe('schedules across a restart', () => {
  it('memory store reopened', async () => {
    const store = new MemoryObjectStore();
    await survivesRestart(store, () => store);
  });

  it('filesystem store, reopened by a new store instance on the same directory', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-cron-'));
    roots.push(root);
    await survivesRestart(new FileSystemObjectStore({ root }), () => new FileSystemObjectStore({ root }));
  });
});
