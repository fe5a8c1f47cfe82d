/**
 * Schedules changed at run time (issue 29): `addSchedule`, `replaceSchedule` and `removeSchedule`
 * sent by another "process" (a `RuntimeClient` on the same store, which holds no writer: its
 * commands go through the running runtime's inbox) to a host that fires schedules. What they add
 * fires; a removal stops the firings; each command applies once per id; bad definitions give typed
 * errors; the host's declared list never deletes what an operation added, and a declaration of
 * the same name wins at the next start.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { createRuntimeHost, type RuntimeHostOptions } from '../../../src/core/operations/runtime-host.js';
import { Queue } from '../../../src/core/queue/index.js';
import { RuntimeClient } from '../../../src/core/workflow/commands/runtime-client.js';
import { defineWorkflow, NoopTerminalHook, WorkflowRuntime } from '../../../src/core/workflow/index.js';
import type { ScheduleDefinition, ScheduleWriteResult } from '../../../src/core/cron/index.js';
import { waitFor } from '../../support/wait.js';
import { at, START_MS } from './cron-harness.js';

const quiet = { warn: () => undefined, info: () => undefined };
const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });
const greetV2 = defineWorkflow({ name: 'greet', version: 2, run: (ctx, name: string) => ctx.step('greet', () => `hi ${name}`) });
const minutely: ScheduleDefinition = { name: 'added', cron: '* * * * *', workflow: 'greet', input: 'bob' };

/** A host on a memory store (runs on real time, cron on `clock`) and a client of its runtime's inbox. */
async function setup(store = new MemoryObjectStore(), clock = new MockClock(START_MS), options: Partial<RuntimeHostOptions> = {}) {
  const queue = await Queue.open(store, 'app', { logger: quiet });
  const host = createRuntimeHost(queue, store, {
    runner: { workflows: [greet, greetV2] },
    runtimeOptions: { pollIntervalMs: 5, commandPollMs: 5, logger: quiet },
    schedules: [],
    cronOptions: { clock, logger: false },
    ...options,
  });
  const worker = host.spawn();
  const client = new RuntimeClient(store, { path: queue.path, pollMs: 5, timeoutMs: 20_000 });
  const stop = async () => {
    client.close();
    await worker.shutdown();
    await queue.close();
  };
  onTestFinished(() => stop().catch(() => undefined));
  const send = (method: string, args: unknown[], commandId?: string) => client.sendOperation(method, args, commandId === undefined ? undefined : { commandId });
  return { store, clock, queue, host, client, send, stop };
}

const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(
  () => {
    throw new Error('expected a rejection');
  },
  (e: unknown) => e,
);

describe('schedule operations from another process', () => {
  it('a schedule added through the inbox fires on the writer, and removing it stops the firings', async () => {
    const { clock, host, send } = await setup();
    const added = (await send('addSchedule', [minutely])) as ScheduleWriteResult;
    expect(added).toEqual({ name: 'added', change: 'created', nextFireMs: at('2025-01-01T00:01:00Z') });
    expect(await host.cron!.get('added')).toMatchObject({ cron: '* * * * *', timezone: 'UTC', viaOperation: true, target: { type: 'start', workflow: 'greet@2' } });

    await clock.advance(30_000);
    const fired = await waitFor(async () => (await host.cron!.get('added'))?.lastFireId, 'the added schedule to fire');
    expect(await host.runtime.workflowRun(greetV2, fired).result()).toBe('hi bob');

    expect(await send('removeSchedule', ['added'])).toBe(true);
    expect(await host.operations.listSchedules()).toEqual([]);
    await clock.advance(120_000);
    // A pass now fires whatever is due (or waits for the loop's firing in flight, under its lock).
    expect(await host.cron!.fireDueNow()).toEqual([]);
    const active = (await host.runtime.listRuns()).runs.map((r) => r.runId);
    const finished = (await host.runtime.listRuns({ status: 'succeeded' })).runs.map((r) => r.runId);
    expect([...active, ...finished].filter((id) => id.startsWith('cron-added-'))).toEqual([fired]);
    expect(await send('removeSchedule', ['added'])).toBe(false);
  });

  it('adding again as stored changes nothing; another definition is a CONFLICT until replaced', async () => {
    const { host, send } = await setup();
    await send('addSchedule', [minutely]);
    expect(await send('addSchedule', [minutely])).toMatchObject({ change: 'unchanged' });
    const conflict = await rejection(send('addSchedule', [{ ...minutely, input: 'eve' }]));
    expect(isTaqubaError(conflict, 'CONFLICT') && conflict.details).toMatchObject({ reason: 'duplicate_schedule', schedule: 'added' });

    const hourly = { ...minutely, cron: '0 * * * *', workflow: 'greet@1', timezone: 'Europe/Paris' };
    expect(await send('replaceSchedule', [hourly])).toEqual({ name: 'added', change: 'replaced', nextFireMs: at('2025-01-01T01:00:00Z') });
    expect(await host.cron!.get('added')).toMatchObject({ cron: '0 * * * *', timezone: 'Europe/Paris', target: { workflow: 'greet@1' }, viaOperation: true });
  });

  it('bad definitions give typed errors naming the rule', async () => {
    const { host, send } = await setup();
    const sixFields = await rejection(send('addSchedule', [{ ...minutely, cron: '0 * * * * *' }]));
    expect(isTaqubaError(sixFields, 'INVALID_ARGUMENT') && sixFields.details).toMatchObject({ reason: 'invalid_cron_expression', fields: '6' });
    const unknown = await rejection(send('addSchedule', [{ ...minutely, workflow: 'greeet' }]));
    expect(isTaqubaError(unknown, 'INVALID_ARGUMENT') && unknown.details).toMatchObject({ reason: 'unknown_workflow', workflow: 'greeet' });
    expect((unknown as Error).message).toMatch(/registered: greet@1, greet@2/);
    const noVersion = await rejection(send('addSchedule', [{ ...minutely, workflow: 'greet@3' }]));
    expect(isTaqubaError(noVersion, 'INVALID_ARGUMENT') && noVersion.details.reason).toBe('unknown_workflow');
    const zone = await rejection(send('addSchedule', [{ ...minutely, timezone: 'Mars/Olympus' }]));
    expect(isTaqubaError(zone, 'INVALID_ARGUMENT') && zone.details.reason).toBe('invalid_timezone');
    const extra = await rejection(send('addSchedule', [{ ...minutely, every: 'minute' }]));
    expect(isTaqubaError(extra, 'INVALID_ARGUMENT') && extra.details).toMatchObject({ reason: 'invalid_schedule', key: 'every' });
    const name = await rejection(send('removeSchedule', ['no spaces']));
    expect(isTaqubaError(name, 'INVALID_ARGUMENT') && name.details.reason).toBe('invalid_schedule_name');
    expect(await host.operations.listSchedules()).toEqual([]);
  });

  it('a command sent again with its id applies once: a resent removal does not delete the schedule added since', async () => {
    const { host, send } = await setup();
    await send('addSchedule', [minutely], 'add-1');
    expect(await send('removeSchedule', ['added'], 'remove-1')).toBe(true);
    expect(await send('addSchedule', [minutely], 'add-2')).toMatchObject({ change: 'created' });
    // The first removal's reply was "lost": sent again, it answers from its record and deletes nothing.
    expect(await send('removeSchedule', ['added'], 'remove-1')).toBe(true);
    expect((await host.operations.listSchedules()).map((s) => s.name)).toEqual(['added']);
    // The first add answers as it did, though the schedule was re-created since.
    expect(await send('addSchedule', [minutely], 'add-1')).toMatchObject({ change: 'created' });
    // The same ids through the host's own operations (a tab, HTTP) share the ledger.
    expect(await host.operations.removeSchedule('added', { commandId: 'remove-1' })).toBe(true);
    expect((await host.operations.listSchedules()).map((s) => s.name)).toEqual(['added']);
  });

  it("the host's declared list never deletes an added schedule; a declaration of the same name wins at the next start", async () => {
    const store = new MemoryObjectStore();
    const clock = new MockClock(START_MS);
    const first = await setup(store, clock, { schedules: [{ name: 'nightly', cron: '0 3 * * *', start: [greet, 'code'] }] });
    await first.send('addSchedule', [minutely]);
    await first.send('addSchedule', [{ ...minutely, name: 'nightly-extra' }]);
    await first.stop();

    // The next start declares `added` itself and drops `nightly`.
    const second = await setup(store, clock, { schedules: [{ name: 'added', cron: '30 4 * * *', start: [greet, 'from code'] }] });
    await waitFor(async () => (await second.host.cron!.get('nightly')) === null, 'the dropped declaration to go');
    const listed = await second.host.operations.listSchedules();
    expect(listed.map((s) => [s.name, s.cron, s.declared === true, s.viaOperation === true])).toEqual([
      ['added', '30 4 * * *', true, false],
      ['nightly-extra', '* * * * *', false, true],
    ]);
  });

  it('a host without schedules, and a runtime without a host, refuse the schedule writes with typed errors', async () => {
    const { send, host } = await setup(new MemoryObjectStore(), new MockClock(START_MS), { schedules: undefined });
    const none = await rejection(send('addSchedule', [minutely]));
    expect(isTaqubaError(none, 'INVALID_ARGUMENT') && none.details.reason).toBe('cron_not_configured');
    expect(await rejection(host.operations.removeSchedule('added'))).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'cron_not_configured' } });

    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'bare', { logger: quiet });
    const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { pollIntervalMs: 5, commandPollMs: 5, logger: quiet });
    const worker = runtime.spawn();
    const client = new RuntimeClient(store, { path: 'bare', pollMs: 5 });
    try {
      const unserved = await rejection(client.sendOperation('addSchedule', [minutely]));
      expect(isTaqubaError(unserved, 'INVALID_ARGUMENT') && unserved.details).toMatchObject({ reason: 'unknown_operation', method: 'addSchedule' });
    } finally {
      client.close();
      await worker.shutdown();
      await queue.close();
    }
  });
});
