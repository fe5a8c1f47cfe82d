/**
 * `CronScheduler`: schedules kept in the store (define, replace, delete, list; bad input as typed
 * errors), and their firing with a MockClock: one job per tick in UTC and in a DST zone, no
 * backfill after a gap, exactly one job when two schedulers race a tick or a firing is retried,
 * a takeover by a new writer, and shutdown.
 */
import { describe, expect, it, vi } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { MockClock } from '../../../src/core/clock.js';
import { CronScheduler, HEADER_CRON_FIRE_TIME, HEADER_CRON_SCHEDULE, type ScheduleInfo } from '../../../src/core/cron/index.js';
import { isTaqubaError, StoreUnavailableError, type TaqubaError } from '../../../src/core/errors.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue, QueueReader } from '../../../src/core/queue/index.js';
import { defineWorkflow, NoopTerminalHook, StepOutcome, WorkflowRuntime } from '../../../src/core/workflow/index.js';
import { defineJob, JobRunner } from '../../../src/core/jobs/index.js';
import { listSchedules } from '../../../src/core/cron/index.js';
import { at, openQueue, parked, RecordingLogger, START_MS, waitingJobs } from './cron-harness.js';

const tick = { name: 'minutely-task', cron: '* * * * *', enqueue: { queue: 'tasks', payload: utf8('hello from cron') } } as const;

async function rejection(promise: Promise<unknown> | (() => unknown)): Promise<TaqubaError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (e) {
    if (isTaqubaError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });
const double = defineJob({ name: 'double', run: async (n: number) => n * 2 });

describe('CronScheduler: schedules in the store', () => {
  it('define stores a schedule with its first firing strictly after now; get, list, replace and delete', async () => {
    const { queue, clock } = await openQueue();
    const scheduler = new CronScheduler(queue, { logger: false });
    const defined = await scheduler.define(tick);
    expect(defined).toMatchObject({ name: 'minutely-task', cron: '* * * * *', timezone: 'UTC', definedAtMs: START_MS, nextFireMs: at('2025-01-01T00:01:00Z') });
    expect(defined.target).toMatchObject({ type: 'enqueue', queueName: 'tasks', options: { headers: {} } });
    expect(fromUtf8(defined.target.input)).toBe('hello from cron');
    expect(await scheduler.get('minutely-task')).toEqual(defined);
    expect(await scheduler.get('absent')).toBeNull();

    await scheduler.define({ name: 'hourly', cron: '0 * * * *', timezone: 'Europe/Paris', priority: 3, headers: { team: 'ops' }, enqueue: { queue: 'reports' } });
    expect((await scheduler.list()).map((s) => s.name)).toEqual(['hourly', 'minutely-task']);

    // Replace with the same timing keeps the recorded next firing; a new expression recomputes it.
    await clock.advance(20_000);
    const retargeted = await scheduler.replace({ ...tick, enqueue: { queue: 'other' } });
    expect(retargeted).toMatchObject({ nextFireMs: at('2025-01-01T00:01:00Z'), target: { queueName: 'other' }, definedAtMs: START_MS + 20_000 });
    const retimed = await scheduler.replace({ ...tick, cron: '*/5 * * * *' });
    expect(retimed.nextFireMs).toBe(at('2025-01-01T00:05:00Z'));

    expect(await scheduler.delete('hourly')).toBe(true);
    expect(await scheduler.delete('hourly')).toBe(false);
    expect((await scheduler.list()).map((s) => s.name)).toEqual(['minutely-task']);
  });

  it('a duplicate name: the same definition again is a no-op, another is CONFLICT; two declared under one name are INVALID_ARGUMENT', async () => {
    const { queue, clock } = await openQueue();
    const scheduler = new CronScheduler(queue, { logger: false });
    const first = await scheduler.define(tick);
    await clock.advance(5_000);
    expect(await scheduler.define({ ...tick, enqueue: { ...tick.enqueue } })).toEqual(first);
    expect(await scheduler.define({ ...tick, cron: ' *  * * * *\t' })).toEqual(first);

    const conflict = await rejection(scheduler.define({ ...tick, cron: '0 * * * *' }));
    expect(conflict.code).toBe('CONFLICT');
    expect(conflict.details).toMatchObject({ reason: 'duplicate_schedule', schedule: 'minutely-task' });
    expect(conflict.message).toContain('schedule=minutely-task');
    expect((await scheduler.get('minutely-task'))!.cron).toBe('* * * * *');

    const declared = await rejection(() => new CronScheduler(queue, { schedules: [tick, { ...tick, cron: '0 0 * * *' }] }));
    expect(declared.code).toBe('INVALID_ARGUMENT');
    expect(declared.details).toMatchObject({ reason: 'duplicate_schedule', schedule: 'minutely-task' });
  });

  it('bad schedules and options are typed errors naming the value and the rule', async () => {
    const store = new MemoryObjectStore();
    const { queue } = await openQueue(store);
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
    const jobs = new JobRunner(queue, store, { logger: false });
    const scheduler = new CronScheduler(queue, { runtime, jobs, logger: false });
    const reason = async (schedule: unknown): Promise<unknown> => (await rejection(scheduler.define(schedule as never))).details.reason;

    const seconds = await rejection(scheduler.define({ ...tick, cron: '*/10 * * * * *' }));
    expect(seconds.code).toBe('INVALID_ARGUMENT');
    expect(seconds.details).toMatchObject({ reason: 'invalid_cron_expression', expression: '"*/10 * * * * *"' });
    expect(await reason({ ...tick, cron: '@daily' })).toBe('invalid_cron_expression');
    expect(await reason({ ...tick, timezone: 'Nowhere/Special' })).toBe('invalid_timezone');
    expect(await reason({ ...tick, name: 'has space' })).toBe('invalid_schedule_name');
    expect(await reason({ ...tick, name: 'x'.repeat(101) })).toBe('invalid_schedule_name');
    expect(await reason({ name: 'none', cron: '* * * * *' })).toBe('invalid_schedule');
    expect(await reason({ ...tick, submit: {} })).toBe('invalid_schedule');
    expect(await reason({ ...tick, every: 'minute' })).toBe('invalid_schedule');
    expect(await reason({ name: 's', cron: '* * * * *', start: [greet, 'x'], maxAttempts: 3 })).toBe('invalid_schedule');
    expect(await reason({ name: 's', cron: '* * * * *', start: [greet, 'x'], headers: { 'workflow.step': '1' } })).toBe('reserved_header');
    const unregistered = defineWorkflow({ name: 'unregistered', run: async () => 1 });
    expect(await reason({ name: 's', cron: '* * * * *', start: [unregistered, undefined] })).toBe('unknown_workflow');
    expect(await reason({ name: 's', cron: '* * * * *', job: [double, 1] })).toBe('unregistered_job');
    expect(await reason({ name: 's', cron: '* * * * *', start: [greet, () => 1] })).toBe('unstorable_input');
    expect(await reason({ ...tick, enqueue: { queue: 'tasks', payload: 'text' } })).toBeUndefined(); // validatePayload: no reason, still INVALID_ARGUMENT
    expect((await rejection(scheduler.define({ ...tick, enqueue: { queue: 'tasks', payload: 'text' as never } }))).code).toBe('INVALID_ARGUMENT');

    const bare = new CronScheduler(queue, { logger: false });
    const noRuntime = await rejection(bare.define({ name: 's', cron: '* * * * *', start: [greet, 'x'] }));
    expect(noRuntime.details).toMatchObject({ reason: 'invalid_schedule', key: 'runtime' });
    expect(noRuntime.message).toContain('needs runtime');

    expect(await reason({ name: 's', cron: '* * * * *', start: ['greet', 'x'] })).toBe('invalid_schedule');
    expect(await reason({ name: 's', cron: '* * * * *', job: [double] })).toBe('invalid_schedule');

    // The input's type follows the workflow's and the job's (checked by the compiler, never called).
    const mistyped = (): unknown[] => [
      // @ts-expect-error greet takes a string
      scheduler.define({ name: 'typed', cron: '* * * * *', start: [greet, 42] }),
      // @ts-expect-error double takes a number
      scheduler.define({ name: 'typed', cron: '* * * * *', job: [double, 'x'] }),
      // @ts-expect-error one target only
      scheduler.define({ name: 'typed', cron: '* * * * *', job: [double, 1], enqueue: { queue: 'q' } }),
    ];
    expect(mistyped).toBeTypeOf('function');

    expect((await rejection(() => new CronScheduler({} as never))).details).toMatchObject({ argument: 'queue' });
    expect((await rejection(() => new CronScheduler(queue, { runtime: {} as never }))).details).toMatchObject({ option: 'runtime' });
    expect((await rejection(() => new CronScheduler(queue, { retryDelayMs: 0 }))).code).toBe('INVALID_CONFIG');
    expect((await rejection(() => new CronScheduler(queue, { schedule: [] } as never))).details).toMatchObject({ option: 'schedule', suggestion: 'schedules' });
    expect(await scheduler.list()).toEqual([]);
  });

  it('another process lists the schedules through a QueueReader of the same store', async () => {
    const store = new MemoryObjectStore();
    const { queue } = await openQueue(store);
    await new CronScheduler(queue, { logger: false }).define(tick);
    const reader = await QueueReader.open(store, 'app', { pollIntervalMs: null, logger: false });
    try {
      expect((await listSchedules(reader)).map((s) => [s.name, s.nextFireMs])).toEqual([['minutely-task', at('2025-01-01T00:01:00Z')]]);
    } finally {
      await reader.close();
    }
  });
});

describe('CronScheduler: firing', () => {
  it('UTC, every minute: the run loop enqueues one job per tick with its dedup key and headers', async () => {
    const { queue, clock } = await openQueue();
    const scheduler = new CronScheduler(queue, { schedules: [tick], logger: false });
    const base = clock.pendingSleepers;
    const worker = scheduler.spawn();
    await parked(clock, base + 1);
    expect(await waitingJobs(queue, 'tasks')).toEqual([]);

    for (let minute = 1; minute <= 3; minute++) {
      await clock.advance(60_000);
      await parked(clock, base + 1);
      expect(await waitingJobs(queue, 'tasks')).toHaveLength(minute);
    }
    await worker.shutdown();

    const jobs = await waitingJobs(queue, 'tasks');
    const fireTimes = ['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z', '2025-01-01T00:03:00.000Z'];
    expect(jobs.map((j) => j.headers[HEADER_CRON_FIRE_TIME]).sort()).toEqual(fireTimes);
    expect(jobs.every((j) => j.headers[HEADER_CRON_SCHEDULE] === 'minutely-task' && fromUtf8(j.payload) === 'hello from cron')).toBe(true);
    expect(jobs.map((j) => j.dedupKey).sort()).toEqual(fireTimes.map((t) => `cron:minutely-task:${Date.parse(t)}`));
    expect(await scheduler.get('minutely-task')).toMatchObject({ lastFireMs: at('2025-01-01T00:03:00Z'), nextFireMs: at('2025-01-01T00:04:00Z') });
  });

  it('a DST zone: 02:30 America/New_York fires at 03:00 EDT on the spring-forward day, then at 02:30 EDT', async () => {
    const { queue, clock } = await openQueue(undefined, new MockClock(at('2025-03-07T12:00:00Z')));
    const scheduler = new CronScheduler(queue, { logger: false });
    await scheduler.define({ name: 'nightly', cron: '30 2 * * *', timezone: 'America/New_York', enqueue: { queue: 'tasks' } });
    const fired: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { nextFireMs } = (await scheduler.get('nightly'))!;
      await clock.advance(nextFireMs - clock.now());
      fired.push(...(await scheduler.fireDueNow()).map((f) => new Date(f.fireMs).toISOString()));
    }
    expect(fired).toEqual(['2025-03-08T07:30:00.000Z', '2025-03-09T07:00:00.000Z', '2025-03-10T06:30:00.000Z', '2025-03-11T06:30:00.000Z']);
    expect(await waitingJobs(queue, 'tasks')).toHaveLength(4);
  });

  it('after a gap of hours, only the recorded overdue firing is made up, then the next strictly future one', async () => {
    const store = new MemoryObjectStore();
    const clock = new MockClock(START_MS);
    const first = await openQueue(store, clock);
    await new CronScheduler(first.queue, { logger: false }).define({ name: 'hourly', cron: '0 * * * *', enqueue: { queue: 'tasks' } });
    await first.queue.close();

    // The writer is away for five hours and ten minutes (five firings missed); a new one opens.
    await clock.advance(5 * 3_600_000 + 10 * 60_000);
    const { queue } = await openQueue(store, clock);
    const scheduler = new CronScheduler(queue, { logger: false });
    const fired = await scheduler.fireDueNow();
    expect(fired).toMatchObject([{ schedule: 'hourly', fireMs: at('2025-01-01T01:00:00Z') }]);
    expect(await scheduler.get('hourly')).toMatchObject({ lastFireMs: at('2025-01-01T01:00:00Z'), nextFireMs: at('2025-01-01T06:00:00Z') });
    expect(await scheduler.fireDueNow()).toEqual([]);

    await clock.advance(at('2025-01-01T06:00:00Z') - clock.now());
    expect((await scheduler.fireDueNow()).map((f) => f.fireMs)).toEqual([at('2025-01-01T06:00:00Z')]);
    expect((await waitingJobs(queue, 'tasks')).map((j) => j.headers[HEADER_CRON_FIRE_TIME]).sort()).toEqual(['2025-01-01T01:00:00.000Z', '2025-01-01T06:00:00.000Z']);
  });

  it('two schedulers on one writer racing a tick enqueue one job, in passes and in their loops', async () => {
    const { queue, clock } = await openQueue();
    const a = new CronScheduler(queue, { schedules: [tick], logger: false });
    const b = new CronScheduler(queue, { schedules: [tick], logger: false });
    await a.fireDueNow();
    await b.fireDueNow();
    await clock.advance(30_000);
    const raced = [...(await Promise.all([a.fireDueNow(), b.fireDueNow(), a.fireDueNow()]))].flat();
    expect(raced).toHaveLength(1);
    expect(await waitingJobs(queue, 'tasks')).toHaveLength(1);

    const base = clock.pendingSleepers;
    const loops = [a.spawn(), b.spawn()];
    await parked(clock, base + 2);
    await clock.advance(60_000);
    await parked(clock, base + 2);
    await Promise.all(loops.map((l) => l.shutdown()));
    const jobs = await waitingJobs(queue, 'tasks');
    expect(jobs.map((j) => j.headers[HEADER_CRON_FIRE_TIME]).sort()).toEqual(['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z']);
  });

  it('a takeover: the new writer fires the tick once, and the fenced scheduler stops with FENCED', async () => {
    const store = new MemoryObjectStore();
    const clock = new MockClock(START_MS);
    const old = await openQueue(store, clock);
    const oldScheduler = new CronScheduler(old.queue, { schedules: [tick], logger: false });
    await oldScheduler.fireDueNow();

    const next = await openQueue(store, clock);
    const scheduler = new CronScheduler(next.queue, { schedules: [tick], logger: false });
    await clock.advance(30_000);
    await expect(oldScheduler.run()).rejects.toMatchObject({ code: 'FENCED' });
    expect(await scheduler.fireDueNow()).toHaveLength(1);
    expect(await scheduler.fireDueNow()).toEqual([]);
    expect(await waitingJobs(next.queue, 'tasks')).toHaveLength(1);
  });

  it('a failed enqueue is logged and retried at the next pass with the same fire time', async () => {
    const { queue, clock } = await openQueue();
    const logger = new RecordingLogger();
    const scheduler = new CronScheduler(queue, { schedules: [tick], logger, retryDelayMs: 1_000 });
    await scheduler.fireDueNow();
    await clock.advance(30_000);
    const enqueue = vi.spyOn(queue, 'enqueueWithKv').mockRejectedValueOnce(new StoreUnavailableError('injected outage'));
    expect(await scheduler.fireDueNow()).toEqual([]);
    expect(logger.at('warn')).toMatchObject([{ message: expect.stringContaining('firing of schedule minutely-task failed; retried in 1000 ms'), fields: { schedule: 'minutely-task', fireTime: '2025-01-01T00:01:00.000Z', error: 'injected outage' } }]);
    expect(await waitingJobs(queue, 'tasks')).toEqual([]);

    // Not before its retry wait...
    await clock.advance(500);
    expect(await scheduler.fireDueNow()).toEqual([]);
    // ...then with the fire time it failed at.
    await clock.advance(500);
    expect(await scheduler.fireDueNow()).toMatchObject([{ fireMs: at('2025-01-01T00:01:00Z') }]);
    expect(enqueue).toHaveBeenCalledTimes(2);
    expect((await waitingJobs(queue, 'tasks')).map((j) => j.dedupKey)).toEqual([`cron:minutely-task:${at('2025-01-01T00:01:00Z')}`]);
    expect(logger.at('info')).toHaveLength(1);
  });

  it('a run started whose schedule update was lost is answered again on the retry: one run', async () => {
    const store = new MemoryObjectStore();
    const { queue, clock } = await openQueue(store);
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
    const scheduler = new CronScheduler(queue, { runtime, logger: false, schedules: [{ name: 'greeter', cron: '* * * * *', start: [greet, 'ada'] }] });
    await scheduler.fireDueNow();
    await clock.advance(30_000);
    // The run commits; the record update after it fails (a crash there would lose it the same way).
    const kvPut = vi.spyOn(queue, 'kvPut').mockRejectedValueOnce(new StoreUnavailableError('injected outage'));
    expect(await scheduler.fireDueNow()).toEqual([]);
    expect((await runtime.listRuns()).runs.map((r) => r.runId)).toEqual([`cron-greeter-${at('2025-01-01T00:01:00Z')}`]);

    // The retry submits the same command again: the ledger answers with the run already there.
    const submit = vi.spyOn(runtime, 'submit');
    await clock.advance(1_000);
    expect(await scheduler.fireDueNow()).toMatchObject([{ fireMs: at('2025-01-01T00:01:00Z'), id: `cron-greeter-${at('2025-01-01T00:01:00Z')}` }]);
    expect(submit.mock.calls[0]![1]).toEqual({ commandId: `cron:greeter:${at('2025-01-01T00:01:00Z')}` });
    expect(kvPut).toHaveBeenCalledTimes(2);
    expect((await runtime.listRuns()).runs).toHaveLength(1);
    expect(await scheduler.get('greeter')).toMatchObject({ lastFireMs: at('2025-01-01T00:01:00Z'), nextFireMs: at('2025-01-01T00:02:00Z') });
  });

  it('a schedule defined while the loop sleeps wakes it, and an undecodable record is logged and skipped', async () => {
    const { queue, clock } = await openQueue();
    const logger = new RecordingLogger();
    const scheduler = new CronScheduler(queue, { logger });
    const base = clock.pendingSleepers;
    const loop = scheduler.spawn();
    await parked(clock, base + 1);
    await queue.kvPut(utf8('workflow/cron/schedules/broken'), utf8('not a record'));
    await new CronScheduler(queue, { logger: false }).define(tick);
    await parked(clock, base + 1);
    await clock.advance(30_000);
    await parked(clock, base + 1);
    await loop.shutdown();
    expect(await waitingJobs(queue, 'tasks')).toHaveLength(1);
    expect(logger.at('error')[0]!.message).toContain('does not decode');
    await expect(listSchedules(queue)).rejects.toMatchObject({ code: 'CORRUPT_DATA', details: { reason: 'undecodable_record' } });
  });

  it('shutdown by AbortSignal: the loop resolves, and nothing fires after it', async () => {
    const { queue, clock } = await openQueue();
    const scheduler = new CronScheduler(queue, { schedules: [tick], logger: false });
    const stop = new AbortController();
    const base = clock.pendingSleepers;
    const running = scheduler.run(stop.signal);
    await parked(clock, base + 1);
    stop.abort();
    await running;
    expect(clock.pendingSleepers).toBe(base);
    await clock.advance(120_000);
    expect(await waitingJobs(queue, 'tasks')).toEqual([]);

    // An aborted signal stops a spawned loop before its first pass; shutdown() waits for it.
    const handle = scheduler.spawn(AbortSignal.abort());
    await handle.done;
    await handle.shutdown();
    expect(await waitingJobs(queue, 'tasks')).toEqual([]);
  });
});

describe('CronScheduler: targets', () => {
  /** A queue on the system clock (runs execute at once) and a scheduler on a MockClock. */
  async function setup() {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app', { logger: false, schedulerIntervalMs: 10 });
    const clock = new MockClock(START_MS);
    return { store, queue, clock, close: () => queue.close() };
  }

  async function fireOnce(scheduler: CronScheduler, clock: MockClock): Promise<{ id: string; info: ScheduleInfo[] }> {
    await scheduler.fireDueNow();
    await clock.advance(30_000);
    const firings = await scheduler.fireDueNow();
    expect(firings).toHaveLength(1);
    return { id: firings[0]!.id, info: await scheduler.list() };
  }

  it('start: a workflow function run with the input, its run id from the schedule and fire time', async () => {
    const { store, queue, clock, close } = await setup();
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false, pollIntervalMs: 5 });
    const worker = runtime.spawn();
    try {
      const scheduler = new CronScheduler(queue, { runtime, clock, logger: false, schedules: [{ name: 'greeter', cron: '* * * * *', start: [greet, 'ada'] }] });
      const { id, info } = await fireOnce(scheduler, clock);
      expect(id).toBe(`cron-greeter-${at('2025-01-01T00:01:00Z')}`);
      expect(info[0]!.target).toMatchObject({ type: 'start', workflow: 'greet@1', queueName: 'workflow-steps' });
      expect(await runtime.workflowRun(greet, id).result({ timeoutMs: 10_000 })).toBe('hello ada');
    } finally {
      await worker.shutdown();
      await close();
    }
  });

  it('submit: a plain run of a StepRunner runtime, with the schedule headers', async () => {
    const { store, queue, clock, close } = await setup();
    const runtime = new WorkflowRuntime(queue, store, async (step) => StepOutcome.succeed(utf8(`${fromUtf8(step.payload)} at ${step.headers[HEADER_CRON_FIRE_TIME]}`)), new NoopTerminalHook(), {
      logger: false,
      pollIntervalMs: 5,
    });
    const worker = runtime.spawn();
    try {
      const scheduler = new CronScheduler(queue, { runtime, clock, logger: false, schedules: [{ name: 'ping', cron: '* * * * *', headers: { team: 'ops' }, submit: { input: utf8('ping') } }] });
      const { id } = await fireOnce(scheduler, clock);
      const outcome = await runtime.result(id, { timeoutMs: 10_000 });
      expect(outcome.status).toBe('succeeded');
      expect(fromUtf8(outcome.result!)).toBe('ping at 2025-01-01T00:01:00.000Z');
    } finally {
      await worker.shutdown();
      await close();
    }
  });

  it('job: a typed job of the job runner, awaited through its handle', async () => {
    const { store, queue, clock, close } = await setup();
    const jobs = new JobRunner(queue, store, { logger: false, pollIntervalMs: 5 }).register(double);
    const worker = jobs.spawn();
    try {
      const scheduler = new CronScheduler(queue, { jobs, clock, logger: false, schedules: [{ name: 'doubler', cron: '* * * * *', maxAttempts: 2, job: [double, 21] }] });
      const { id, info } = await fireOnce(scheduler, clock);
      expect(info[0]!.target).toMatchObject({ type: 'job', job: 'double', queueName: 'jobs', options: { maxAttempts: 2 } });
      expect(await jobs.handle(double, id).result({ timeoutMs: 10_000 })).toBe(42);
    } finally {
      await worker.shutdown();
      await close();
    }
  });

  it('enqueue: a plain job with the payload, priority and attempts', async () => {
    const { queue, clock, close } = await setup();
    try {
      const scheduler = new CronScheduler(queue, { clock, logger: false, schedules: [{ ...tick, priority: 7, maxAttempts: 4 }] });
      const { id } = await fireOnce(scheduler, clock);
      const job = await queue.getJob(id);
      expect(job).toMatchObject({ queue: 'tasks', priority: 7, maxAttempts: 4, status: 'pending' });
      expect(fromUtf8(job!.payload)).toBe('hello from cron');
    } finally {
      await close();
    }
  });

  it('a stored target this scheduler has no runtime for is logged and retried, never dropped', async () => {
    const { store, queue, clock, close } = await setup();
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
    try {
      await new CronScheduler(queue, { runtime, clock, logger: false }).define({ name: 'greeter', cron: '* * * * *', start: [greet, 'ada'] });
      const logger = new RecordingLogger();
      const elsewhere = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false, queueName: 'elsewhere' });
      const wrong = new CronScheduler(queue, { runtime: elsewhere, clock, logger });
      await clock.advance(30_000);
      expect(await wrong.fireDueNow()).toEqual([]);
      expect(logger.at('warn')[0]!.fields).toMatchObject({ schedule: 'greeter', error: expect.stringContaining('"workflow-steps"') });
      await clock.advance(1_000);
      expect(await new CronScheduler(queue, { runtime, clock, logger: false }).fireDueNow()).toMatchObject([{ fireMs: at('2025-01-01T00:01:00Z') }]);
    } finally {
      await close();
    }
  });
});
