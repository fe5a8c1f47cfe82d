/**
 * The CLI's failures, as a child process: bad arguments, a path that is not a store, a corrupt
 * store and an unknown run each give exactly one line on stderr (no stack unless --debug) and a
 * non-zero exit code (2 for bad arguments, 1 otherwise).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { runCli } from '../../src/cli/program.js';
import { openCluster } from '../../src/core/cluster/index.js';
import { ClusterLayout } from '../../src/core/cluster/layout.js';
import { cli, json, oneLine } from './cli-harness.js';
import { waitFor } from '../support/wait.js';

/** The CLI in this process: what it wrote to stdout and stderr, and its exit code. */
async function inProcess(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => void out.push(t), env: {}, isTty: false, stop: new AbortController().signal, now: () => Date.now() };
  const code = await runCli(argv, io, (line) => void err.push(line));
  return { code, out, err };
}

let dir: string;

/** A small store at `root`: one run parked on a signal, the writer closed. */
async function writeStore(root: string, path = 'app'): Promise<void> {
  const store = new FileSystemObjectStore({ root });
  const queue = await Queue.open(store, path, { logger: false });
  const runtime = new WorkflowRuntime(queue, store, async (s) => StepOutcome.continueOnSignal(s.payload, 'go', 60_000), { onTermination: async () => undefined }, { logger: false });
  const worker = runtime.spawn();
  await runtime.submit({ runId: 'parked', input: utf8('x') });
  await waitFor(async () => (await runtime.getRun('parked'))?.state === 'waiting-for-signal', `run parked waiting for its signal (store ${root})`, { timeoutMs: 30_000 });
  await worker.shutdown();
  await queue.close();
}

/** Every file under `root` whose path contains `part`. */
async function filesUnder(root: string, part: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && join(e.parentPath, e.name).includes(part)).map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-cli-errors-'));
  await writeStore(join(dir, 'good'));
  await writeStore(join(dir, 'two'), 'alpha');
  await writeStore(join(dir, 'two'), 'beta');
  await writeStore(join(dir, 'corrupt'));
  // Damage every manifest object of the corrupt copy (a bit flip in the middle: the CRC-32C fails).
  const manifests = await filesUnder(join(dir, 'corrupt'), 'manifest');
  expect(manifests.length).toBeGreaterThan(0);
  for (const file of manifests) {
    const bytes = await readFile(file);
    bytes[bytes.length >> 1] ^= 0xff;
    await writeFile(file, bytes);
  }
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('taquba CLI failures', () => {
  it('bad arguments: one usage line and exit code 2 (as a process)', async () => {
    const store = join(dir, 'good');
    const [unknown, badLimit, none] = await Promise.all([cli(['--store', store, 'bogus']), cli(['--store', store, 'runs', '--limit', 'many']), cli([])]);
    for (const r of [unknown, badLimit, none]) expect(r.code).toBe(2);
    expect(oneLine(unknown)).toBe("taquba: USAGE: unknown command 'bogus' (hint: see taquba --help)");
    expect(oneLine(badLimit)).toMatch(/^taquba: USAGE: option '--limit <n>' argument 'many' is invalid/);
    // No arguments at all: the help on stdout (nothing on stderr), and the usage exit code.
    expect(none.stdout).toContain('Usage: taquba');
    expect(none.stderr).toBe('');
  }, 60_000);

  it('bad arguments: every rule gives its own usage line (in process, through runCli)', async () => {
    const store = join(dir, 'good');
    const cases: [string[], RegExp][] = [
      [['runs', '--status', 'sleeping'], /^taquba: USAGE: unknown run state\. status="sleeping" \(hint: one of pending, scheduled, waiting-for-signal/],
      [['runs', '--bogus'], /^taquba: USAGE: unknown option '--bogus'/],
      [['run'], /^taquba: USAGE: missing required argument 'id'/],
      [['run', 'not a run id!'], /^taquba: INVALID_ARGUMENT: invalid run id/],
      [['dead', '--limit', '0'], /^taquba: USAGE: option '--limit <n>' argument '0' is invalid/],
      [['dead', '--limit', '1001'], /^taquba: USAGE: option '--limit <n>' argument '1001' is invalid/],
      [['watch', '--interval', '5'], /^taquba: USAGE: option '--interval <ms>' argument '5' is invalid/],
      [['runs', '--after', 'not/a/cursor'], /^taquba: USAGE: not a cursor printed by taquba runs/],
      [['signal', 'k', '%%%', '--base64'], /^taquba: USAGE: payload is not base64/],
      [['--path', 'bad//path', 'runs'], /^taquba: INVALID_CONFIG: path must be an object-key prefix/],
      [['--queue', '', 'runs'], /^taquba: INVALID_CONFIG: queueName must be a non-empty string/],
    ];
    for (const [args, expected] of cases) {
      const r = await inProcess(['--store', store, ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toHaveLength(1);
      expect(r.err[0], args.join(' ')).toMatch(expected);
      expect(r.out, args.join(' ')).toEqual([]);
    }
    const location = await inProcess(['--store', 'ftp://host/x', 'runs']);
    expect([location.code, location.err]).toEqual([2, ['taquba: USAGE: unsupported store location. store="ftp://host/x" (hint: use a directory or s3://bucket/prefix)']]);
    const bucket = await inProcess(['--store', 's3://', 'runs']);
    expect(bucket.err[0]).toMatch(/^taquba: USAGE: an S3 location needs a bucket/);
  }, 60_000);

  it('a path that is not a store: one line naming it, exit code 1', async () => {
    const empty = await mkdtemp(join(dir, 'empty-'));
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a store');
    const results = await Promise.all([cli(['--store', join(dir, 'missing'), 'runs']), cli(['--store', empty, 'runs']), cli(['--store', file, 'queues']), cli(['--store', join(dir, 'good'), '--path', 'nope', 'runs'])]);
    const lines = results.map((r) => {
      expect(r.code).toBe(1);
      return oneLine(r);
    });
    expect(lines[0]).toMatch(/^taquba: NOT_A_STORE: no such directory\. store=".*missing"/);
    expect(lines[1]).toMatch(/^taquba: NOT_A_STORE: no taquba store here\. store=".*empty-/);
    expect(lines[2]).toMatch(/^taquba: NOT_A_STORE: not a directory/);
    expect(lines[3]).toMatch(/^taquba: NOT_A_STORE: no taquba store here\. .*path="nope"/);
  }, 60_000);

  it('a corrupt store: one CORRUPT_DATA line, exit code 1; --debug adds the stack', async () => {
    const store = join(dir, 'corrupt');
    const [plain, asJson, debug] = await Promise.all([cli(['--store', store, 'runs']), cli(['--store', store, '--json', 'runs']), cli(['--store', store, '--debug', 'runs'])]);
    expect(plain.code).toBe(1);
    expect(oneLine(plain)).toMatch(/^taquba: CORRUPT_DATA: .* \(hint: the store is damaged/);
    expect(plain.stdout).toBe('');
    expect(asJson.code).toBe(1);
    expect(JSON.parse(oneLine(asJson))).toMatchObject({ schema: 'taquba-cli/1', error: { code: 'CORRUPT_DATA', hint: expect.stringContaining('damaged') } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^taquba: CORRUPT_DATA: /);
    expect(debug.stderr).toMatch(/\n\s+at /);
  }, 60_000);

  it('picks the engine: app or the only one, else asks for --path naming the engines', async () => {
    const two = join(dir, 'two');
    const [ambiguous, alpha, good, unknownRun] = await Promise.all([
      cli(['--store', two, 'runs']),
      cli(['--store', two, '--path', 'alpha', 'runs', '--json']),
      cli(['--store', join(dir, 'good'), 'runs', '--json']),
      cli(['--store', join(dir, 'good'), 'run', 'nobody']),
    ]);
    expect(ambiguous.code).toBe(2);
    expect(oneLine(ambiguous)).toBe('taquba: USAGE: the store holds several engines; pick one with --path. engines=alpha,beta');
    expect(json(alpha)).toMatchObject({ path: 'alpha', runs: [{ runId: 'parked', state: 'waiting-for-signal' }] });
    expect(json(good)).toMatchObject({ path: 'app', runs: [{ runId: 'parked', waitingFor: { type: 'signal', correlationKey: 'go' } }] });
    expect(unknownRun.code).toBe(1);
    expect(oneLine(unknownRun)).toMatch(/^taquba: NOT_FOUND: no run with this id in the store\. runId="nobody"/);
  }, 60_000);

  it("refuses write commands on a cluster's shard engine (they take no lock: opening one would fence its owner); --force opens it", async () => {
    const root = join(dir, 'cluster');
    const store = new FileSystemObjectStore({ root });
    const member = await openCluster(store, { name: 'orders', shards: 2, runner: async (s) => StepOutcome.continueOnSignal(s.payload, 'go', 60_000), hook: { onTermination: async () => undefined }, logger: false });
    await member.submit({ runId: 'r0' });
    await member.leave();
    const path = new ClusterLayout('orders').queuePath(member.shardOf('r0'));
    const refused = await inProcess(['--store', root, '--path', path, 'signal', 'go', 'x']);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(new RegExp(`^taquba: LOCKED: this engine is shard \\d of the cluster "orders", which its owner holds under a lease\\. .*path="${path}"`));
    expect(refused.err[0]).toMatch(/through a member of the cluster/);
    // Reads are fine, and --force (no member runs) goes through.
    expect((await inProcess(['--store', root, '--path', path, 'runs'])).code).toBe(0);
    const forced = await inProcess(['--store', root, '--path', path, 'signal', 'go', 'x', '--force']);
    expect([forced.code, forced.err]).toEqual([0, []]);
  }, 60_000);
});
