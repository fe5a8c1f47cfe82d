/**
 * The CLI on `s3://bucket/prefix` against the S3 test server (test/setup/s3-server.ts), beside a
 * live writer process on the same prefix. S3 has no writer lock: while no closing heartbeat of
 * the writer is stored, write operations go through its command inbox (TIMEOUT, naming the
 * command id and the --force escape, when it does not answer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3TestServer, type S3TestServer } from '../setup/s3-server.js';
import { cli, json, oneLine, plainEnv, startWriter } from './cli-harness.js';

let server: S3TestServer;
let writer: Awaited<ReturnType<typeof startWriter>>;
let env: NodeJS.ProcessEnv;
const PREFIX = 'cli-test';
let at: (...args: string[]) => string[];

beforeAll(async () => {
  server = await startS3TestServer();
  env = plainEnv({ AWS_ACCESS_KEY_ID: server.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: server.credentials.secretAccessKey, AWS_REGION: server.region });
  at = (...args) => ['--store', `s3://${server.bucket}/${PREFIX}`, '--endpoint', server.endpoint, '--force-path-style', ...args];
  writer = await startWriter(['s3', server.endpoint, server.bucket, `${PREFIX}/`], env);
}, 180_000);

afterAll(async () => {
  await writer?.stop();
  await server?.stop();
}, 60_000);

describe('taquba CLI on S3 beside a live writer', () => {
  it('reads runs, a timeline, dead steps and queue counts without a writer lock', async () => {
    const [runs, run, dead, queues] = await Promise.all([cli(at('runs', '--json'), env), cli(at('run', 'approval-1', '--json'), env), cli(at('dead', '--json'), env), cli(at('queues', '--json'), env)]);
    const doc = json(runs);
    expect(doc).toMatchObject({ schema: 'taquba-cli/1', command: 'runs', store: `s3://${server.bucket}/${PREFIX}`, path: 'app' });
    expect(doc.runs.map((r: any) => r.runId).sort()).toEqual(['approval-1', 'ticker', 'timer-1']);
    const timeline = json(run).run;
    expect(timeline).toMatchObject({ status: 'active', state: 'waiting-for-signal', headers: { team: 'cli-tests' } });
    expect(timeline.steps[0].memo).toHaveLength(1);
    expect(timeline.steps[0].outcome.kvWrites[0].key.text).toBe('drafts/approval-1');
    expect(json(dead).deadSteps.map((d: any) => [d.runId, d.notification])).toEqual([
      ['broken-1', false],
      ['hookfail-1', true],
    ]);
    expect(json(queues).writer.heartbeat).toMatchObject({ closed: false });
  }, 90_000);

  it('signals through the live writer, times out naming the command id when none answers, and signals as the writer once it closed', async () => {
    const sent = json(await cli(at('signal', 'approve:approval-1', 'ok', '--json'), env));
    expect(sent).toMatchObject({ command: 'signal', outcome: 'delivered', via: 'live-writer' });
    const after = json(await cli(at('run', 'approval-1', '--json'), env)).run;
    expect(after.steps[1].signal).toMatchObject({ arrival: 'woken', payload: { text: 'ok' } });
    // A writer that died (no clean close recorded) answers nothing: TIMEOUT naming the command id.
    await writer.kill();
    const unanswered = await cli(at('signal', 'approve:nobody', 'x', '--timeout', '1'), env);
    expect(unanswered.code).toBe(1);
    const line = oneLine(unanswered);
    expect(line).toMatch(/^taquba: TIMEOUT: the store's live writer did not answer within 1 s \(this store has no writer lock, and no clean close of its last writer is recorded/);
    const commandId = /commandId=([0-9a-z-]+)/.exec(line)?.[1];
    expect(line).toContain(`--command-id ${commandId}`);
    expect(line).toContain('--force');
    // With no writer left, --force opens one; the same command id applies the command once.
    const forced = json(await cli(at('signal', 'approve:nobody', 'x', '--force', '--command-id', commandId!, '--json'), env));
    expect(forced).toMatchObject({ command: 'signal', outcome: 'buffered', via: 'writer' });
    const again = json(await cli(at('signal', 'approve:nobody', 'x', '--force', '--command-id', commandId!, '--json'), env));
    expect(again.outcome).toBe('buffered');
    // Five CLI processes, each loading the S3 SDK: minutes on a loaded 2-core machine.
  }, 240_000);

  it('an empty prefix is not a store; bad credentials give one line', async () => {
    const empty = await cli(['--store', `s3://${server.bucket}/nothing-here`, '--endpoint', server.endpoint, '--force-path-style', 'runs'], env);
    expect(empty.code).toBe(1);
    expect(oneLine(empty)).toMatch(/^taquba: NOT_A_STORE: no taquba store here\. store="s3:\/\/.*\/nothing-here"/);
    const denied = await cli(at('runs'), { ...env, AWS_ACCESS_KEY_ID: 'NOPE' });
    expect(denied.code).toBe(1);
    expect(oneLine(denied)).toMatch(/^taquba: STORE_PERMISSION: .*\(hint: check the credentials/);
  }, 60_000);
});
