/**
 * What hosts need of the scheduler: declared schedules are marked as such, and with
 * `removeUndeclared` a schedule an earlier declaration wrote and the new one lacks is deleted
 * (those made with `define` or `replace` stay); a firing run id chosen by the host; and the
 * check of a host's declared schedules before it builds its runtime (`checkHostSchedules`).
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../src/core/bytes.js';
import { CronScheduler } from '../../../src/core/cron/index.js';
import { checkHostSchedules } from '../../../src/core/cron/host-schedules.js';
import { encodeSchedule, scheduleKey } from '../../../src/core/cron/schedule-record.js';
import { isTaqubaError, type TaqubaError } from '../../../src/core/errors.js';
import { defineJob, JobRunner } from '../../../src/core/jobs/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineWorkflow, NoopTerminalHook, WorkflowRuntime } from '../../../src/core/workflow/index.js';
import { WorkflowRegistry } from '../../../src/core/workflow/functions/define.js';
import { at, openQueue, START_MS } from './cron-harness.js';

const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });
const other = defineWorkflow({ name: 'other', run: async () => 1 });
const double = defineJob({ name: 'double', run: async (n: number) => n * 2 });

const minutely = { name: 'minutely', cron: '* * * * *', enqueue: { queue: 'tasks' } } as const;
const hourly = { name: 'hourly', cron: '0 * * * *', enqueue: { queue: 'tasks' } } as const;

function thrown(fn: () => unknown): TaqubaError {
  try {
    fn();
  } catch (e) {
    if (isTaqubaError(e)) return e;
    throw e;
  }
  throw new Error('expected a throw');
}

describe('declared schedules', () => {
  it('are marked; with removeUndeclared a later declaration deletes those it lacks and keeps the defined ones', async () => {
    const { queue, clock } = await openQueue();
    const first = new CronScheduler(queue, { schedules: [minutely, hourly], removeUndeclared: true, logger: false });
    await first.fireDueNow();
    await first.define({ name: 'by-hand', cron: '0 0 * * *', enqueue: { queue: 'tasks' } });
    expect((await first.list()).map((s) => [s.name, s.declared === true])).toEqual([
      ['by-hand', false],
      ['hourly', true],
      ['minutely', true],
    ]);

    // The next host's declaration drops `hourly`: it goes, the hand-made one stays.
    await clock.advance(45_000);
    const second = new CronScheduler(queue, { schedules: [minutely], removeUndeclared: true, logger: false });
    expect((await second.fireDueNow()).map((f) => f.schedule)).toEqual(['minutely']);
    expect((await second.list()).map((s) => s.name)).toEqual(['by-hand', 'minutely']);
    // Unchanged, `minutely` kept its firing record.
    expect(await second.get('minutely')).toMatchObject({ lastFireMs: at('2025-01-01T00:01:00Z'), definedAtMs: START_MS, declared: true });

    // Without removeUndeclared (the default) nothing is deleted.
    await new CronScheduler(queue, { schedules: [], logger: false }).fireDueNow();
    expect((await second.list()).map((s) => s.name)).toEqual(['by-hand', 'minutely']);
  });

  it('a replace makes a declared schedule the app\'s own (kept); a record stored without a mark gets it from a declaration', async () => {
    const { queue } = await openQueue();
    const scheduler = new CronScheduler(queue, { schedules: [minutely], removeUndeclared: true, logger: false });
    await scheduler.fireDueNow();
    await scheduler.replace({ ...minutely, cron: '*/2 * * * *' });
    expect((await scheduler.get('minutely'))!.declared).toBeUndefined();
    await new CronScheduler(queue, { schedules: [], removeUndeclared: true, logger: false }).fireDueNow();
    expect(await scheduler.get('minutely')).not.toBeNull();

    // As an earlier version stored it: no mark.
    const { declared: _, ...unmarked } = (await new CronScheduler(queue, { logger: false }).replace(hourly)) as { declared?: boolean };
    await queue.kvPut(scheduleKey('hourly'), encodeSchedule(unmarked as Parameters<typeof encodeSchedule>[0]));
    await new CronScheduler(queue, { schedules: [hourly], logger: false }).fireDueNow();
    expect((await scheduler.get('hourly'))!.declared).toBe(true);
  });

  it('firingRunId names the run of each firing; a bad option is INVALID_CONFIG', async () => {
    const { queue, clock } = await openQueue();
    const runtime = new WorkflowRuntime(queue, new MemoryObjectStore(), { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
    const scheduler = new CronScheduler(queue, {
      runtime,
      schedules: [{ name: 'greeting', cron: '* * * * *', start: [greet, 'ada'] }],
      firingRunId: (name, fireMs) => `mine-${name}-${fireMs / 60_000}`,
      logger: false,
    });
    await scheduler.fireDueNow();
    await clock.advance(30_000);
    const [firing] = await scheduler.fireDueNow();
    expect(firing!.id).toBe(`mine-greeting-${at('2025-01-01T00:01:00Z') / 60_000}`);
    expect(await runtime.getRun(firing!.id)).not.toBeNull();

    expect(thrown(() => new CronScheduler(queue, { firingRunId: 'x' as never })).details).toMatchObject({ option: 'firingRunId' });
    expect(thrown(() => new CronScheduler(queue, { removeUndeclared: 1 as never })).details).toMatchObject({ option: 'removeUndeclared' });
  });
});

describe('checkHostSchedules', () => {
  const plan = { queueName: 'workflow', workflows: new WorkflowRegistry({ workflows: [greet] }), jobs: [double], jobsQueueName: 'jobs' };

  it('resolves as the host scheduler will: queue names from the plan, workflows and jobs checked', async () => {
    const resolved = checkHostSchedules(
      [
        { name: 'a', cron: '0 3 * * *', timezone: 'Europe/Paris', start: [greet, 'ada'] },
        { name: 'b', cron: '*/5 * * * *', job: [double, 4] },
        { name: 'c', cron: '0 0 * * 1', submit: { input: utf8('x') } },
      ],
      plan,
    );
    expect(resolved.map((r) => [r.name, r.target.type, r.target.queueName])).toEqual([
      ['a', 'start', 'workflow'],
      ['b', 'job', 'jobs'],
      ['c', 'submit', 'workflow'],
    ]);

    // The same stored target as a real scheduler's.
    const { queue } = await openQueue();
    const store = new MemoryObjectStore();
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
    const jobs = new JobRunner(queue, store, { logger: false }).register(double);
    const real = await new CronScheduler(queue, { runtime, jobs, logger: false }).define({ name: 'b', cron: '*/5 * * * *', job: [double, 4] });
    expect(real.target).toEqual(resolved[1]!.target);
  });

  it('refuses what the scheduler refuses: an unknown workflow or job, a bad expression, a duplicate, a non-array', () => {
    expect(thrown(() => checkHostSchedules([{ name: 'a', cron: '* * * * *', start: [other, undefined] }], plan)).details).toMatchObject({ reason: 'unknown_workflow' });
    const job = defineJob({ name: 'triple', run: async (n: number) => n * 3 });
    expect(thrown(() => checkHostSchedules([{ name: 'a', cron: '* * * * *', job: [job, 1] }], plan)).details).toMatchObject({ reason: 'unregistered_job' });
    expect(thrown(() => checkHostSchedules([{ name: 'a', cron: '* * * * *', job: [double, 1] }], { ...plan, jobs: [] })).details).toMatchObject({ reason: 'invalid_schedule' });
    expect(thrown(() => checkHostSchedules([{ name: 'a', cron: '0 * * * * *', start: [greet, 'x'] }], plan)).details).toMatchObject({ reason: 'invalid_cron_expression' });
    expect(thrown(() => checkHostSchedules([minutely, minutely], plan)).details).toMatchObject({ reason: 'duplicate_schedule' });
    expect(thrown(() => checkHostSchedules({}, plan)).code).toBe('INVALID_CONFIG');
  });
});
