/**
 * Real processes on one filesystem store: a writer is stopped (SIGSTOP) in the middle of its
 * commits, a newer writer takes over and writes (flushing and collecting its WAL), then the
 * stopped one is continued (SIGCONT). Its in-flight WAL put then lands late. The contract: every
 * acknowledged key of every writer is there when the store is opened afterwards, and every writer
 * that was overtaken ends with FENCED (not another error, not more acknowledgements that vanish).
 * Run with the process lock (the stopped holder's lock goes stale and is taken over) and without
 * it (three writers, the first two stopped).
 *
 * Every writer of a trial is started up front and told `go` when it is due (fencing-writer.ts),
 * so process starts overlap instead of lying on the trial's path; the trials of a test run at
 * once (each on its own store), as they spend most of their time waiting for a lock to go stale.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { nodeScript } from '../support/node-script.js';

const writerScript = fileURLToPath(new URL('./fencing-writer.ts', import.meta.url));
/** The writer lock's staleMs: the smallest the store allows (process-lock.ts). */
const STALE_MS = 2000;
/** How long a writer keeps retrying an open refused with LOCKED (the stopped holder's lock goes stale within STALE_MS of its last refresh). */
const LOCK_WAIT_MS = 30_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Writer {
  readonly name: string;
  readonly child: ChildProcess;
  /** Lets the started writer open the store and write (it waits for this). */
  go(): void;
  readonly acked: string[];
  /** The last line that ended it: FENCED, `error ...`, or undefined while it runs. */
  final: string | undefined;
  /** It printed `open <tries>` (its engine opened, after that many tries). */
  opened: boolean;
  readonly exited: Promise<void>;
  stderr: string;
}

const roots: string[] = [];

type Wal = 'log' | 'objects';
/** Cleanup of one test (its context's `onTestFinished`). */
type Cleanup = (fn: OnTestFinishedHandler) => void;

/** Starts a writer process; it opens the store when told `go()`. */
function startWriter(cleanup: Cleanup, root: string, name: string, lock: boolean, wal: Wal): Writer {
  const child = spawn(process.execPath, [...nodeScript(writerScript), root, name, lock ? 'lock' : 'nolock', String(STALE_MS), wal, String(lock ? LOCK_WAIT_MS : 0)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanup(() => {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  });
  const go = () => void child.stdin!.write('go\n');
  child.stdin!.on('error', () => undefined); // a writer that already exited
  const writer: Writer = { name, child, go, acked: [], final: undefined, opened: false, exited: new Promise((r) => child.once('exit', () => r())), stderr: '' };
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('ack ')) writer.acked.push(line.slice(4));
      else if (line.startsWith('open ')) writer.opened = true;
      else if (line === 'FENCED' || line.startsWith('error ')) writer.final = line;
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (writer.stderr += chunk.toString()));
  return writer;
}

/** `what` is described when the wait times out (so it shows the state then). */
async function waitUntil(what: string | (() => string), cond: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${typeof what === 'string' ? what : what()}`);
    await sleep(10);
  }
}

/**
 * Waits until `writer` has `count` acknowledged keys (failing early if it stopped). Generous: a
 * new writer may wait for a stale lock, and opens on a machine busy with other test files.
 */
async function waitAcks(writer: Writer, count: number): Promise<void> {
  const state = () => `${writer.name} acknowledging ${count} keys (has ${writer.acked.length}, opened=${writer.opened}, final=${writer.final}, stderr=${writer.stderr.slice(0, 300)})`;
  await waitUntil(state, () => {
    if (writer.final !== undefined) throw new Error(`${writer.name} stopped early: ${writer.final} ${writer.stderr.slice(0, 300)}`);
    return writer.acked.length >= count;
  }, 40_000);
}

/** The WAL object and log segment keys now in the store at `root`. */
async function walKeys(root: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const info of new FileSystemObjectStore({ root, writerLock: false }).list('')) if (info.key.includes('wal/') || info.key.includes('/log/')) keys.add(info.key);
  return keys;
}

/** Waits until some of the WAL objects in `before` were deleted: the newer writer's GC has run over them. */
async function waitWalCollected(root: string, before: ReadonlySet<string>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const now = await walKeys(root);
    if ([...before].some((key) => !now.has(key))) return;
    if (Date.now() > deadline) throw new Error(`timed out: ${what} (WAL objects: ${before.size} before, ${now.size} now)`);
    await sleep(10);
  }
}

/** Continues a stopped writer; it must end with FENCED (it commits back to back, so its next put meets the fence). */
async function expectFencedAfterContinue(writer: Writer): Promise<void> {
  writer.child.kill('SIGCONT');
  await waitUntil(`${writer.name}, continued, ending`, () => writer.final !== undefined, 15_000).catch(() => undefined);
  expect(writer.final, `${writer.name}, overtaken while stopped, ends FENCED (stderr: ${writer.stderr.slice(0, 500)})`).toBe('FENCED');
}

async function checkStore(root: string, writers: readonly Writer[], context: string, wal: Wal): Promise<void> {
  const db = await KvDb.open(new FileSystemObjectStore({ root, writerLock: false, appendLogs: wal === 'log' }));
  try {
    for (const w of writers) {
      const missing: string[] = [];
      for (const key of w.acked) {
        const v = await db.get(utf8(key));
        if (v === undefined || fromUtf8(v) !== key) missing.push(key);
      }
      expect(missing, `${context}: acknowledged keys of ${w.name} (${w.acked.length} acknowledged) missing after reopen`).toEqual([]);
    }
  } finally {
    await db.close();
  }
}

async function newRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-sigstop-'));
  roots.push(root);
  return root;
}

afterAll(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

/**
 * Runs `trial(i)` for i < count, all at once (each on its own store). A trial takes a few seconds
 * here, most of it waiting for a stopped holder's lock to go stale; the tests' timeouts leave room
 * for a machine several times slower (each wait inside has its own deadline).
 */
async function trials(count: number, trial: (i: number) => Promise<void>): Promise<void> {
  await Promise.all(Array.from({ length: count }, (_, i) => trial(i)));
}

// The append-log WAL (the default) gets every trial; WAL objects, kept for stores without logs, half.
describe.each([
  ['log', 6],
  ['objects', 3],
] as const)('fencing across real processes on the filesystem store (SIGSTOP / SIGCONT), %s WAL', (wal, count) => {
  it('with the process lock: a stopped holder whose lock went stale is fenced on SIGCONT, and nothing acknowledged is lost', async ({ onTestFinished }) => {
    await trials(count, async (t) => {
      const root = await newRoot();
      const first = startWriter(onTestFinished, root, `L${t}-first`, true, wal);
      const second = startWriter(onTestFinished, root, `L${t}-second`, true, wal);
      first.go();
      await waitAcks(first, 20 + t * 15);
      first.child.kill('SIGSTOP');
      const walAtStop = await walKeys(root);
      // Refused (LOCKED) while the stopped holder's lock is fresh; it retries until the lock is stale.
      second.go();
      await waitAcks(second, 250);
      await waitWalCollected(root, walAtStop, `L${t}: the second writer's GC deleting WAL objects its flushes retired`);
      await expectFencedAfterContinue(first);
      expect(second.final, `L${t}: the newer writer is unharmed`).toBeUndefined();
      const n = second.acked.length;
      await waitAcks(second, n + 20);
      second.child.kill('SIGKILL');
      await Promise.all([first.exited, second.exited]);
      await checkStore(root, [first, second], `lock trial ${t}`, wal);
    });
  }, 300_000);

  it('without the lock: two stopped writers are fenced on SIGCONT by a third, and nothing acknowledged is lost', async ({ onTestFinished }) => {
    await trials(count, async (t) => {
      const root = await newRoot();
      const [first, second, third] = ['first', 'second', 'third'].map((n) => startWriter(onTestFinished, root, `N${t}-${n}`, false, wal));
      first.go();
      await waitAcks(first, 20 + t * 10);
      first.child.kill('SIGSTOP');
      second.go();
      await waitAcks(second, 120);
      second.child.kill('SIGSTOP');
      const walAtStop = await walKeys(root);
      third.go();
      await waitAcks(third, 250);
      await waitWalCollected(root, walAtStop, `N${t}: the third writer's GC deleting WAL objects its flushes retired`);
      await Promise.all([expectFencedAfterContinue(first), expectFencedAfterContinue(second)]);
      expect(third.final, `N${t}: the newest writer is unharmed`).toBeUndefined();
      const n = third.acked.length;
      await waitAcks(third, n + 20);
      third.child.kill('SIGKILL');
      await Promise.all([first.exited, second.exited, third.exited]);
      await checkStore(root, [first, second, third], `no-lock trial ${t}`, wal);
    });
  }, 300_000);
});
