/**
 * `createRuntimeHost`: workflows, typed jobs and a bulk pipeline assembled on one queue and store,
 * the operations answering for all three, and the one worker handle: its shutdown answers waits
 * at once, lets the runtime's in-flight steps finish on jobs that still run, and stops everything.
 */
import { describe, expect, it } from 'vitest';
import { createRuntimeHost, type RuntimeHost, type RuntimeHostOptions } from '../../../src/core/operations/runtime-host.js';
import type { BatchProgressUpdate } from '../../../src/core/operations/local-bulk-operations.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue } from '../../../src/core/queue/index.js';
import { utf8 } from '../../../src/core/bytes.js';
import { defineWorkflow, StepOutcome } from '../../../src/core/workflow/index.js';
import { defineJob } from '../../../src/core/jobs/index.js';
import { pipeline } from '../../../src/core/bulk/index.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { waitFor } from '../../support/wait.js';
import { MockClock } from '../../../src/core/clock.js';
import { CronScheduler } from '../../../src/core/cron/index.js';

const quiet = { warn: () => undefined, info: () => undefined };
const fast = { pollIntervalMs: 5, logger: quiet };

const double = defineJob({ name: 'double', run: async (n: number) => n * 2 });
const lengths = pipeline<string>().phase('length', (text) => text.length);
const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });
const parked = defineWorkflow({
  name: 'parked',
  async run(ctx) {
    await ctx.waitForSignal('go');
    return 'went';
  },
});

async function openHost<I, O>(options: RuntimeHostOptions<I, O>): Promise<{ queue: Queue; host: RuntimeHost<I, O> }> {
  const store = new MemoryObjectStore();
  const queue = await Queue.open(store, 'host', { logger: quiet });
  return { queue, host: createRuntimeHost(queue, store, options) };
}

describe('createRuntimeHost', () => {
  it('runs workflows, jobs and a bulk pipeline on one store, and its operations answer for all three', async () => {
    const updates: BatchProgressUpdate[] = [];
    const { queue, host } = await openHost({
      runner: { workflows: [greet] },
      runtimeOptions: fast,
      jobs: [double],
      jobRunnerOptions: { pollIntervalMs: 5 },
      bulk: { pipeline: lengths, options: fast },
      onBatchProgress: (update) => updates.push(update),
    });
    const worker = host.spawn();

    // The typed parts, as a Node process uses them.
    const run = await host.runtime.start(greet, 'ada');
    expect(await run.result()).toBe('hello ada');
    expect(await (await host.jobs!.submit(double, 21)).result()).toBe(42);
    expect((await (await host.bulk!.submit(['a', 'bb'])).done()).succeeded).toBe(2);

    // The same host through its operations, as a tab, an inbox or a tool calls them.
    expect(await host.operations.status(run.runId)).toMatchObject({ runId: run.runId, state: 'succeeded' });
    const job = await host.operations.jobSubmit('double', double.codec.encode(5));
    expect(await host.operations.jobWait('double', job.id, 10_000)).toEqual({ ok: true, output: double.codec.encode(10) });
    await host.operations.bulkSubmit(['xyz'], { batchId: 'one-item' });
    await waitFor(() => updates.some((u) => u.batchId === 'one-item' && u.progress.finished), 'the final progress update of batch one-item');
    expect(await host.operations.bulkStatus('one-item')).toMatchObject({ total: 1, succeeded: 1 });

    await worker.shutdown();
    await worker.done;
    await queue.close();
  });

  it('shuts down in order: waits answer at once, the runtime finishes its steps on jobs still running, then everything stops', async () => {
    const log: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let host!: RuntimeHost;
    // A step that submits a job only after the shutdown began, and waits for its result.
    const asksLate = defineWorkflow({
      name: 'asks-late',
      run: (ctx) =>
        ctx.step('ask', async () => {
          log.push('step waiting');
          await released;
          const doubled = await (await host.jobs!.submit(double, 4)).result();
          log.push(`step got ${doubled}`);
          return doubled;
        }),
    });
    const opened = await openHost({ runner: { workflows: [asksLate, parked] }, runtimeOptions: fast, jobs: [double], jobRunnerOptions: { pollIntervalMs: 5 } });
    host = opened.host;
    const worker = host.spawn();

    const waiting = await host.runtime.start(parked, undefined);
    const later = await host.operations.jobSubmit('double', double.codec.encode(1), { runAt: Date.now() + 3_600_000 });
    const runWait = host.operations.runWait(waiting.runId, 60_000);
    const jobWait = host.operations.jobWait('double', later.id, 60_000);
    const asking = await host.runtime.start(asksLate, undefined);
    await waitFor(() => log.includes('step waiting'), 'the step to start');

    const stopped = worker.shutdown().then(() => log.push('stopped'));
    // Waits answer (null) as soon as the shutdown begins.
    expect(await runWait).toBeNull();
    expect(await jobWait).toBeNull();
    release();
    await stopped;
    expect(log).toEqual(['step waiting', 'step got 8', 'stopped']);
    await expect(worker.done).resolves.toBeUndefined();
    expect(worker.shutdown()).toBe(worker.shutdown());
    // The step's run ended with it, before the runtime stopped.
    expect(await host.runtime.getRun(asking.runId, { includeFinished: true })).toMatchObject({ runId: asking.runId, status: 'succeeded' });
    await opened.queue.close();
  });

  it('stops in order when the signal given to spawn aborts', async () => {
    const { queue, host } = await openHost({ runner: { workflows: [parked] }, runtimeOptions: fast, jobs: [double] });
    const stop = new AbortController();
    const worker = host.spawn(stop.signal);
    const run = await host.runtime.start(parked, undefined);
    const wait = host.operations.runWait(run.runId, 60_000);
    stop.abort();
    expect(await wait).toBeNull();
    await expect(worker.done).resolves.toBeUndefined();
    await worker.shutdown();
    await queue.close();
  });

  it('without jobs or bulk builds neither, and their operations say so', async () => {
    const { queue, host } = await openHost({ runner: async () => StepOutcome.succeed(utf8('done')) });
    expect(host.jobs).toBeUndefined();
    expect(host.bulk).toBeUndefined();
    await expect(host.operations.jobSubmit('double', utf8('1'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unregistered_job' } });
    await expect(host.operations.bulkSubmit(['a'])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'bulk_not_configured' } });
    expect(await host.operations.jobCancel('some-id')).toBe(false);
    await queue.close();
  });

  it('rejects an unknown option with INVALID_CONFIG naming the nearest one', async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'host', { logger: quiet });
    let error: unknown;
    try {
      createRuntimeHost(queue, store, { runner: { workflows: [greet] }, job: [double] } as RuntimeHostOptions);
    } catch (e) {
      error = e;
    }
    expect(isTaqubaError(error, 'INVALID_CONFIG')).toBe(true);
    expect((error as Error).message).toMatch(/jobs/);
    await queue.close();
  });
});

describe('createRuntimeHost: schedules', () => {
  /** The scheduler's own clock: runs and jobs go on in real time while cron time is stepped. */
  const cronClock = (): MockClock => new MockClock(Date.parse('2025-01-01T00:00:30.000Z'));
  const minutelyGreeting = { name: 'greeting', cron: '* * * * *', start: [greet, 'ada'] } as const;
  const minutelyDouble = { name: 'doubling', cron: '* * * * *', job: [double, 21] } as const;

  it('fires its schedules on its runtime and jobs, lists them through its operations, and stops firing at shutdown', async () => {
    const clock = cronClock();
    const { queue, host } = await openHost({
      runner: { workflows: [greet] },
      runtimeOptions: fast,
      jobs: [double],
      jobRunnerOptions: { pollIntervalMs: 5 },
      schedules: [minutelyGreeting, minutelyDouble],
      cronOptions: { clock },
    });
    expect(host.cron).toBeDefined();
    const worker = host.spawn();
    await waitFor(() => clock.pendingSleepers === 1, 'the scheduler to sleep until the first firing');
    await clock.advance(30_000);
    await waitFor(async () => (await host.cron!.list()).every((s) => s.lastFireId !== undefined), 'both schedules to fire');

    const [doubling, greeting] = await host.operations.listSchedules();
    expect(greeting).toMatchObject({ name: 'greeting', cron: '* * * * *', timezone: 'UTC', declared: true, lastFireMs: Date.parse('2025-01-01T00:01:00Z'), nextFireMs: Date.parse('2025-01-01T00:02:00Z') });
    expect(greeting!.target).toMatchObject({ type: 'start', workflow: 'greet@1', queueName: host.runtime.queueName });
    expect(await host.runtime.workflowRun(greet, greeting!.lastFireId!).result()).toBe('hello ada');
    expect(await host.jobs!.handle(double, doubling!.lastFireId!).result()).toBe(42);

    await worker.shutdown();
    await clock.advance(60_000);
    expect((await host.cron!.get('greeting'))!.lastFireMs).toBe(Date.parse('2025-01-01T00:01:00Z'));
    await queue.close();
  });

  it('its schedules are its whole declaration: the next host keeps an unchanged one with its firing record and deletes a dropped one', async () => {
    const clock = cronClock();
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'host', { logger: quiet });
    const first = createRuntimeHost(queue, store, { runner: { workflows: [greet] }, runtimeOptions: fast, schedules: [minutelyGreeting, { ...minutelyGreeting, name: 'dropped' }], cronOptions: { clock } });
    await first.cron!.fireDueNow();
    await clock.advance(30_000);
    await first.cron!.fireDueNow();
    await first.cron!.define({ name: 'by-hand', cron: '0 0 * * *', enqueue: { queue: 'tasks' } });

    const next = createRuntimeHost(queue, store, { runner: { workflows: [greet] }, runtimeOptions: fast, schedules: [minutelyGreeting], cronOptions: { clock } });
    await next.cron!.fireDueNow();
    expect((await next.operations.listSchedules()).map((s) => [s.name, s.lastFireMs])).toEqual([
      ['by-hand', undefined],
      ['greeting', Date.parse('2025-01-01T00:01:00Z')],
    ]);
    await queue.close();
  });

  it('without schedules builds no scheduler, and its operations still list the store\'s; a bad schedule is INVALID_ARGUMENT at once', async () => {
    const copies: Uint8Array[] = [];
    const { queue, host } = await openHost({
      runner: { workflows: [greet] },
      exportBytes: (bytes) => {
        const copy = bytes.slice();
        copies.push(copy);
        return copy;
      },
    });
    expect(host.cron).toBeUndefined();
    expect(await host.operations.listSchedules()).toEqual([]);
    const store = new MemoryObjectStore();
    await new CronScheduler(queue, { logger: false }).define({ name: 'plain', cron: '0 3 * * *', enqueue: { queue: 'tasks', payload: utf8('p') } });
    const [plain] = await host.operations.listSchedules();
    expect(plain).toMatchObject({ name: 'plain', target: { type: 'enqueue', queueName: 'tasks' } });
    // Bytes leave through the host's exportBytes.
    expect(copies).toContain(plain!.target.input);

    let error: unknown;
    try {
      createRuntimeHost(queue, store, { runner: { workflows: [greet] }, schedules: [{ name: 'bad', cron: '0 0 * * * *', start: [greet, 'x'] }] });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_cron_expression' } });
    await queue.close();
  });
});
