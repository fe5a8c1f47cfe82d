/**
 * `taquba schedules`: the cron schedules a writer keeps in a filesystem store, listed by the CLI
 * in another "process" (its own store instance, read-only) with their next and last firing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { MockClock } from '../../src/core/clock.js';
import { CronScheduler } from '../../src/core/cron/index.js';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow, NoopTerminalHook, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { cliHere, json } from './cli-harness.js';

const greet = defineWorkflow({ name: 'greet', run: (ctx, name: string) => ctx.step('greet', () => `hello ${name}`) });
const START = Date.parse('2025-01-01T00:00:30Z');
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'taquba-cli-schedules-'));
  const store = new FileSystemObjectStore({ root });
  const clock = new MockClock(START);
  const queue = await Queue.open(store, 'app', { clock, logger: false });
  const runtime = new WorkflowRuntime(queue, store, { workflows: [greet] }, new NoopTerminalHook(), { logger: false });
  const scheduler = new CronScheduler(queue, {
    runtime,
    logger: false,
    schedules: [
      { name: 'minutely-task', cron: '* * * * *', enqueue: { queue: 'tasks', payload: utf8('hello from cron') } },
      { name: 'nightly-greeting', cron: '0 3 * * *', timezone: 'Europe/Paris', start: [greet, 'ada'] },
    ],
  });
  await scheduler.fireDueNow();
  await clock.advance(30_000);
  await scheduler.fireDueNow();
  await queue.close();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('taquba schedules', () => {
  it('lists each schedule with its expression, zone, target, next and last firing', async () => {
    const result = await cliHere(['--store', root, 'schedules']);
    expect(result.code, result.stderr).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SCHEDULE\s+CRON\s+ZONE\s+TARGET\s+NEXT\s+LAST$/);
    expect(rows).toHaveLength(2);
    // The store's clock stood still in 2025: both next firings are overdue now.
    expect(rows[0]).toMatch(/^minutely-task\s+\* \* \* \* \*\s+UTC\s+enqueue on tasks\s+2025-01-01T00:02Z \(overdue, \d+ \w+ ago\)\s+\d+ \w+ ago \w+$/);
    expect(rows[1]).toMatch(/^nightly-greeting\s+0 3 \* \* \*\s+Europe\/Paris\s+start greet@1 on workflow-steps\s+2025-01-01T02:00Z \(overdue, .*\)\s+never$/);
  });

  it('--json: one document with every schedule', async () => {
    const doc = json(await cliHere(['--store', root, '--json', 'schedules']));
    expect(doc).toMatchObject({ schema: 'taquba-cli/1', command: 'schedules', path: 'app' });
    expect(doc.schedules).toEqual([
      {
        name: 'minutely-task',
        cron: '* * * * *',
        timezone: 'UTC',
        target: { type: 'enqueue', queueName: 'tasks', workflow: null, job: null, headers: {} },
        definedAtMs: START,
        nextFireMs: Date.parse('2025-01-01T00:02:00Z'),
        lastFireMs: Date.parse('2025-01-01T00:01:00Z'),
        lastFireId: expect.stringMatching(/^[0-9A-Z]{26}$/),
        origin: 'declared',
      },
      {
        name: 'nightly-greeting',
        cron: '0 3 * * *',
        timezone: 'Europe/Paris',
        target: { type: 'start', queueName: 'workflow-steps', workflow: 'greet@1', job: null, headers: {} },
        definedAtMs: START,
        nextFireMs: Date.parse('2025-01-01T02:00:00Z'),
        lastFireMs: null,
        lastFireId: null,
        origin: 'declared',
      },
    ]);
  });
});
