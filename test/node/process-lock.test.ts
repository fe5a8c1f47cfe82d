import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { acquireProcessLock } from '../../src/node/process-lock.js';

const holder = fileURLToPath(new URL('./process-lock-holder.ts', import.meta.url));
const children: ChildProcess[] = [];
const roots: string[] = [];

function startHolder(root: string, staleMs: number): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', holder, root, String(staleMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    child.stdout!.once('data', (d: Buffer) => resolve({ child, line: d.toString().trim() }));
    child.once('error', reject);
  });
}

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-lock-'));
  roots.push(root);
  return root;
}

afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

describe('process lock (one Node writer per store directory)', () => {
  it('a second process fails fast with LOCKED while the first holds the lock, and gets it after release', async () => {
    const root = await tempRoot();
    const lock = await acquireProcessLock(root);
    expect((await startHolder(root, 10_000)).line).toBe('error LOCKED');
    await lock.release();
    expect((await startHolder(root, 10_000)).line).toBe('locked');
  });

  it('in one process, a second acquire rejects with LOCKED naming the directory', async () => {
    const root = await tempRoot();
    const lock = await acquireProcessLock(root);
    await expect(acquireProcessLock(root)).rejects.toMatchObject({ code: 'LOCKED', message: expect.stringContaining(root) });
    await lock.release();
    await lock.release(); // idempotent
  });

  it('a lock left by a killed process is taken over once stale', async () => {
    const root = await tempRoot();
    const { child, line } = await startHolder(root, 2000);
    expect(line).toBe('locked');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await expect(acquireProcessLock(root, { staleMs: 2000 })).rejects.toMatchObject({ code: 'LOCKED' });
    // Stale means no refresh for staleMs; leave a margin for a loaded machine.
    await new Promise((r) => setTimeout(r, 3500));
    const lock = await acquireProcessLock(root, { staleMs: 2000 });
    await lock.release();
  });

  it('the lock never shows up as an object of the store', async () => {
    const root = await tempRoot();
    const lock = await acquireProcessLock(root);
    const store = new FileSystemObjectStore({ root });
    await store.put('a/b', utf8('x'));
    const keys: string[] = [];
    for await (const info of store.list('')) keys.push(info.key);
    expect(keys).toEqual(['a/b']);
    await lock.release();
  });
});
