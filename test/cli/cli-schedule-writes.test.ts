/**
 * `taquba schedules add` / `remove` beside a live application (a child process running a runtime
 * host with schedules, test/cli/schedule-host.ts): the CLI holds no writer, so each goes through
 * the host's runtime inbox, which checks the workflow against the app's code. What it adds is
 * stored and fires; removing stops it; bad input gives typed errors. Without a live writer, an add
 * is refused (nothing could check the workflow) and a removal is made as the writer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { cliHere, json, oneLine, plainEnv, startWriter } from './cli-harness.js';

const HOST = fileURLToPath(new URL('./schedule-host.ts', import.meta.url));
let root: string;
let writer: Awaited<ReturnType<typeof startWriter>>;
const at = (...args: string[]) => ['--store', root, ...args];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'taquba-cli-schedule-writes-'));
  writer = await startWriter(['fs', root], plainEnv(), HOST);
}, 120_000);

afterAll(async () => {
  await writer?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('taquba schedules add / remove through the live writer', () => {
  it('adds a schedule that fires on the live host, then removes it', async () => {
    const added = json(await cliHere(at('--json', 'schedules', 'add', 'ticking', '--cron', '* * * * *', '--workflow', 'greet', '--input', '"cli"')));
    expect(added).toMatchObject({ command: 'schedules-add', path: 'app', queue: 'workflow-steps', via: 'live-writer', schedule: { name: 'ticking', change: 'created' } });
    const listed = json(await cliHere(at('--json', 'schedules'))).schedules as Record<string, unknown>[];
    expect(listed.find((s) => s.name === 'ticking')).toMatchObject({ cron: '* * * * *', origin: 'operation', target: { type: 'start', workflow: 'greet@1' } });

    // The host's scheduler clock stands at 50 s past a minute when it starts: the first firing comes within about 10 s.
    const fired = await waitFor(
      async () => (json(await cliHere(at('--json', 'schedules'))).schedules as { name: string; lastFireId: string | null }[]).find((s) => s.name === 'ticking')?.lastFireId,
      'the added schedule to fire',
      { timeoutMs: 100_000, intervalMs: 500 },
    );
    await waitFor(async () => (json(await cliHere(at('--json', 'runs', '--status', 'succeeded'))).runs as { runId: string }[]).some((r) => r.runId === fired), 'its run to succeed', {
      timeoutMs: 30_000,
      intervalMs: 200,
    });

    const removed = json(await cliHere(at('--json', 'schedules', 'remove', 'ticking')));
    expect(removed).toMatchObject({ command: 'schedules-remove', name: 'ticking', removed: true, via: 'live-writer' });
    expect((json(await cliHere(at('--json', 'schedules'))).schedules as { name: string }[]).map((s) => s.name)).toEqual(['declared-daily']);
    const again = await cliHere(at('schedules', 'remove', 'ticking'));
    expect([again.code, oneLine(again)]).toEqual([1, expect.stringMatching(/^taquba: NOT_FOUND: no schedule of this name/)]);
  }, 180_000);

  it('refuses bad definitions with typed errors, and a different definition of a stored name unless --replace', async () => {
    const sixFields = await cliHere(at('schedules', 'add', 'bad', '--cron', '0 * * * * *', '--workflow', 'greet'));
    expect([sixFields.code, oneLine(sixFields)]).toEqual([2, expect.stringMatching(/^taquba: INVALID_ARGUMENT: invalid cron expression: expected 5 fields/)]);
    const unknown = await cliHere(at('schedules', 'add', 'bad', '--cron', '0 * * * *', '--workflow', 'greeet'));
    expect([unknown.code, oneLine(unknown)]).toEqual([2, expect.stringMatching(/^taquba: INVALID_ARGUMENT: workflow greeet is not registered .*registered: greet@1/)]);
    const notJson = await cliHere(at('schedules', 'add', 'bad', '--cron', '0 * * * *', '--workflow', 'greet', '--input', '{oops'));
    expect([notJson.code, oneLine(notJson)]).toEqual([2, expect.stringMatching(/^taquba: USAGE: --input is not JSON/)]);

    await cliHere(at('schedules', 'add', 'hourly', '--cron', '0 * * * *', '--workflow', 'greet', '--input', '"a"'));
    const conflict = await cliHere(at('schedules', 'add', 'hourly', '--cron', '0 * * * *', '--workflow', 'greet', '--input', '"b"'));
    expect([conflict.code, oneLine(conflict)]).toEqual([1, expect.stringMatching(/^taquba: CONFLICT: .*schedule=hourly \(hint: add --replace/)]);
    const replaced = await cliHere(at('schedules', 'add', 'hourly', '--cron', '30 * * * *', '--tz', 'Europe/Paris', '--workflow', 'greet@1', '--input', '"b"', '--replace'));
    expect([replaced.code, replaced.stdout]).toEqual([0, expect.stringMatching(/^schedule hourly replaced: next firing \S+ \(in /)]);
    expect(json(await cliHere(at('--json', 'schedules', 'remove', 'hourly', '--command-id', 'rm-hourly')))).toMatchObject({ removed: true });
    // Sent again with its id, the removal answers from its record.
    expect(json(await cliHere(at('--json', 'schedules', 'remove', 'hourly', '--command-id', 'rm-hourly')))).toMatchObject({ removed: true });
  }, 120_000);

  it('without a live writer: an add is refused, a removal is made as the writer', async () => {
    await writer.stop();
    const add = await cliHere(at('schedules', 'add', 'later', '--cron', '0 * * * *', '--workflow', 'greet'));
    expect([add.code, oneLine(add)]).toEqual([1, expect.stringMatching(/^taquba: NO_LIVE_WRITER: adding a schedule is checked against the application's workflows/)]);
    expect(json(await cliHere(at('--json', 'schedules', 'remove', 'declared-daily')))).toMatchObject({ removed: true, via: 'writer' });
    expect(json(await cliHere(at('--json', 'schedules'))).schedules).toEqual([]);
  }, 60_000);
});
