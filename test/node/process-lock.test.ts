import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi, type OnTestFinishedHandler } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { fromUtf8 } from '../../src/core/bytes.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { acquireProcessLock, type ProcessLockOptions } from '../../src/node/process-lock.js';
import { nodeScript } from '../support/node-script.js';

const holder = fileURLToPath(new URL('./process-lock-holder.ts', import.meta.url));

/**
 * Cleanup per test (the test context's `onTestFinished`), not in a shared afterEach: the
 * real-time tests run concurrently, and one finishing must not kill the other's children.
 */
type Cleanup = (fn: OnTestFinishedHandler) => void;

function startHolder(cleanup: Cleanup, root: string, staleMs: number): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeScript(holder), root, String(staleMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanup(() => void child.kill('SIGKILL'));
    child.stdout!.once('data', (d: Buffer) => resolve({ child, line: d.toString().trim() }));
    child.once('error', reject);
  });
}

const engineOpener = fileURLToPath(new URL('./engine-lock-holder.ts', import.meta.url));

/** A child that opens the engine at `path` (writes `from-child` durably) and reports `opened` or `error <code> <message>`; `hold` keeps it open. */
function startEngineOpener(cleanup: Cleanup, root: string, path: string, mode: 'close' | 'hold' = 'close'): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeScript(engineOpener), root, path, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanup(() => void child.kill('SIGKILL'));
    child.stdout!.once('data', (d: Buffer) => resolve({ child, line: d.toString().trim() }));
    child.once('error', reject);
  });
}

async function tempRoot(cleanup: Cleanup): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-lock-'));
  cleanup(() => rm(root, { recursive: true, force: true }));
  return root;
}

describe('process lock (one Node writer per store directory)', () => {
  it('a second process fails fast with LOCKED while the first holds the lock, and gets it after release', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const lock = await acquireProcessLock(root);
    expect((await startHolder(onTestFinished, root, 10_000)).line).toBe('error LOCKED');
    await lock.release();
    expect((await startHolder(onTestFinished, root, 10_000)).line).toBe('locked');
  });

  it('in one process, a second acquire rejects with LOCKED naming the directory', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const lock = await acquireProcessLock(root);
    await expect(acquireProcessLock(root)).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining(root) });
    await lock.release();
    await lock.release(); // idempotent
  });

  it('rejects options that are not ProcessLockOptions with INVALID_CONFIG, creating nothing', async ({ onTestFinished }) => {
    const root = join(await tempRoot(onTestFinished), 'not-created');
    const cases: [unknown, string][] = [
      ['off', 'lock options must be an object. value="off"'],
      [{ stale: 1 }, 'unknown lock option. option="stale" did_you_mean=staleMs'],
      [{ staleMs: -1 }, 'lock.staleMs must not be negative. option=lock.staleMs value=-1'],
      [{ onCompromised: 1 }, 'lock.onCompromised must be a function, not number. option=lock.onCompromised'],
    ];
    for (const [options, message] of cases) {
      await expect(acquireProcessLock(root, options as ProcessLockOptions)).rejects.toMatchObject({ code: 'INVALID_CONFIG', message });
    }
    await expect(stat(root)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a lock left by a killed process on this host is taken over at once', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const { child, line } = await startHolder(onTestFinished, root, 60_000);
    expect(line).toBe('locked');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const lock = await acquireProcessLock(root, { staleMs: 60_000 });
    await lock.release();
  });

  it('the lock never shows up as an object of the store', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const lock = await acquireProcessLock(root);
    const store = new FileSystemObjectStore({ root });
    await store.put('a/b', utf8('x'));
    const keys: string[] = [];
    for await (const info of store.list('')) keys.push(info.key);
    expect(keys).toEqual(['a/b']);
    await lock.release();
  });

  // Real time is the subject of these two (staleness is judged on the OS clock, and 2 s is the
  // smallest threshold the lock takes), so they run side by side: one wait of about 2 s, not two.
  describe.concurrent('the stale threshold', () => {
    it('a live holder keeps its lock past the stale threshold (its refreshes keep working)', async ({ expect, onTestFinished }) => {
      const root = await tempRoot(onTestFinished);
      const lost: Error[] = [];
      const staleMs = 2000; // the smallest threshold the lock takes
      const startedAt = Date.now();
      const lock = await acquireProcessLock(root, { staleMs, onCompromised: (e) => void lost.push(e) });
      // Real time is the subject (staleness is judged on the OS clock). The lock refreshes its mtime
      // every staleMs/2: wait for two refreshes instead of a guessed margin; a lock that stopped
      // refreshing would be stale (taken over) by the time the second holder looks.
      const lockDir = join(root, '.writer.lock');
      const mtimes = new Set([(await stat(lockDir)).mtimeMs]);
      await vi.waitFor(
        async () => {
          mtimes.add((await stat(lockDir)).mtimeMs);
          expect(mtimes.size, 'refreshes of the lock seen (its mtime moving)').toBeGreaterThanOrEqual(3);
        },
        { timeout: 15_000, interval: 50 },
      );
      const early = staleMs - (Date.now() - startedAt);
      if (early > 0) await new Promise((r) => setTimeout(r, early)); // only if refreshes came faster than staleMs/2
      expect((await startHolder(onTestFinished, root, staleMs)).line).toBe('error LOCKED');
      expect(lost).toEqual([]);
      await lock.release();
    }, 30_000);

    it('a lock held by a stopped (alive) process is taken over only once stale', async ({ expect, onTestFinished }) => {
      const root = await tempRoot(onTestFinished);
      const { child, line } = await startHolder(onTestFinished, root, 2000);
      expect(line).toBe('locked');
      child.kill('SIGSTOP');
      await expect(acquireProcessLock(root, { staleMs: 2000 })).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining(`:${child.pid}`) });
      // Stale means no refresh for staleMs, so time must pass: retry the acquire until it succeeds
      // (generous deadline for a loaded machine) instead of sleeping a guessed margin. Every
      // refusal on the way must be LOCKED, naming the stopped holder.
      const refusals: unknown[] = [];
      let lock: Awaited<ReturnType<typeof acquireProcessLock>> | undefined;
      await expect
        .poll(
          async () => {
            lock = await acquireProcessLock(root, { staleMs: 2000 }).catch((e: unknown) => void refusals.push(e));
            return lock !== undefined;
          },
          { timeout: 20_000, interval: 100, message: 'the stale lock was never taken over' },
        )
        .toBe(true);
      for (const e of refusals) expect(e).toMatchObject({ code: 'LOCKED', message: expect.stringContaining(`:${child.pid}`) });
      await lock!.release();
      child.kill('SIGCONT');
    });
  });
});

describe('the engine writer lock of the filesystem store (on by default)', () => {
  it('a second process opening the same engine gets LOCKED at once, naming the root, the path and the holder pid; readers never lock', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const db = await KvDb.open(new FileSystemObjectStore({ root }), { path: 'app/kv' });
    await db.write([{ type: 'put', key: utf8('k'), value: utf8('v') }]);
    const { line } = await startEngineOpener(onTestFinished, root, 'app/kv');
    expect(line).toMatch(new RegExp(`^error LOCKED .*root=${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} path=app/kv holder=[^ ]+:${process.pid}`));
    // A reader beside the live writer takes no lock.
    const reader = await KvDb.openReader(new FileSystemObjectStore({ root }), { path: 'app/kv' });
    expect(fromUtf8((await reader.get(utf8('k')))!)).toBe('v');
    await reader.close();
    // Another engine path of the same root is a different lock.
    const other = await KvDb.open(new FileSystemObjectStore({ root }), { path: 'other/kv' });
    await other.close();
    // In this process too.
    await expect(KvDb.open(new FileSystemObjectStore({ root }), { path: 'app/kv' })).rejects.toMatchObject({ code: 'LOCKED' });
    await db.close();
    expect((await startEngineOpener(onTestFinished, root, 'app/kv')).line).toBe('opened');
  });

  it('the lock of a killed writer is taken over at once by the next open, which keeps what it acknowledged', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const { child, line } = await startEngineOpener(onTestFinished, root, 'kv', 'hold');
    expect(line).toBe('opened');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const db = await KvDb.open(new FileSystemObjectStore({ root }));
    expect(fromUtf8((await db.get(utf8('from-child')))!)).toBe('yes');
    await db.close();
  });

  it('a lock naming this process that it does not hold (a store copied with its lock) is taken over', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const db = await KvDb.open(new FileSystemObjectStore({ root }));
    await db.write([{ type: 'put', key: utf8('k'), value: utf8('v') }]);
    const copy = await tempRoot(onTestFinished);
    await cp(root, copy, { recursive: true });
    const opened = await KvDb.open(new FileSystemObjectStore({ root: copy }));
    expect(fromUtf8((await opened.get(utf8('k')))!)).toBe('v');
    await opened.close();
    await db.close();
  });

  it('writerLock: false opts out: a second writer opens and fences the first', async ({ onTestFinished }) => {
    const root = await tempRoot(onTestFinished);
    const first = await KvDb.open(new FileSystemObjectStore({ root, writerLock: false }));
    const second = await KvDb.open(new FileSystemObjectStore({ root, writerLock: false }));
    await expect(first.write([{ type: 'put', key: utf8('a'), value: utf8('1') }])).rejects.toMatchObject({ code: 'FENCED' });
    await second.close();
  });
});
