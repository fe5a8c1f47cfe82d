/**
 * The CLI on `s3://bucket/prefix` against the S3 test server (test/setup/s3-server.ts), beside a
 * live writer process on the same prefix. S3 has no writer lock: write operations are refused
 * (LOCKED, with the --force escape named) until the writer's closing heartbeat is stored.
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

  it('refuses a write while the writer may be live, and signals once it closed', async () => {
    const refused = await cli(at('signal', 'approve:approval-1', 'ok'), env);
    expect(refused.code).toBe(1);
    const line = oneLine(refused);
    expect(line).toMatch(/^taquba: LOCKED: this store has no writer lock/);
    expect(line).toContain('--force');
    await writer.stop();
    const sent = json(await cli(at('signal', 'approve:approval-1', 'ok', '--json'), env));
    expect(sent).toMatchObject({ command: 'signal', outcome: 'delivered' });
    const after = json(await cli(at('run', 'approval-1', '--json'), env)).run;
    expect(after.steps[1].signal).toMatchObject({ arrival: 'woken', payload: { text: 'ok' } });
  }, 120_000);

  it('an empty prefix is not a store; bad credentials give one line', async () => {
    const empty = await cli(['--store', `s3://${server.bucket}/nothing-here`, '--endpoint', server.endpoint, '--force-path-style', 'runs'], env);
    expect(empty.code).toBe(1);
    expect(oneLine(empty)).toMatch(/^taquba: NOT_A_STORE: no taquba store here\. store="s3:\/\/.*\/nothing-here"/);
    const denied = await cli(at('runs'), { ...env, AWS_ACCESS_KEY_ID: 'NOPE' });
    expect(denied.code).toBe(1);
    expect(oneLine(denied)).toMatch(/^taquba: STORE_PERMISSION: .*\(hint: check the credentials/);
  }, 60_000);
});
