/**
 * Jobs across a process restart: a child submits keyed jobs on the filesystem store and is killed
 * (SIGKILL) either while the jobs run or after they finished; this process then opens the same
 * store (the dead holder's writer lock is taken over at once) and reads the outcomes by id.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Queue } from '../../src/core/queue/index.js';
import { JobRunner } from '../../src/core/jobs/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { squareJob } from './jobs-crash-job.js';
import { nodeScript } from '../support/node-script.js';

const child = fileURLToPath(new URL('./jobs-crash-worker.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Runs the child until `killAt(lines)` holds, then SIGKILLs it. Returns its stdout lines. */
function runChild(root: string, mode: string, inputs: number[], killAt: (lines: string[]) => boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(child), root, mode, ...inputs.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    proc.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts);
      if (killAt(lines)) proc.kill('SIGKILL');
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('error', reject);
    proc.on('exit', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL' || !killAt(lines)) reject(new Error(`child ended unexpectedly: ${signal}\n${lines.join('\n')}\n${stderr}`));
      else resolve(lines);
    });
  });
}

const ids = (lines: string[]) => new Map(lines.filter((l) => l.startsWith('submitted ')).map((l) => [Number(l.split(' ')[1]), l.split(' ')[2]!] as const));

describe('jobs across a process restart', () => {
  it('a job killed mid-run is pending after the restart, and a new runner completes it for the handle by id', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-jobs-crash-'));
    dirs.push(root);
    const inputs = [3, 4];
    const lines = await runChild(root, 'hang', inputs, (ls) => inputs.every((n) => ls.includes(`started ${n}`)));
    const byInput = ids(lines);
    const store = new FileSystemObjectStore({ root });
    const queue = await Queue.open(store, 'jobs-crash', { logger: false });
    const job = squareJob(false);
    const runner = new JobRunner(queue, store, { pollIntervalMs: 20, logger: false }).register(job);
    try {
      for (const n of inputs) expect(await runner.handle(job, byInput.get(n)!).fetchResult()).toBeNull();
      // A resubmission under the key collapses onto the interrupted job.
      const again = await runner.submit(job, { n: 3 });
      expect(again.id).toBe(byInput.get(3));
      expect(again.newlySubmitted).toBe(false);
      const worker = runner.spawn();
      for (const n of inputs) expect(await runner.handle(job, byInput.get(n)!).result()).toBe(n * n);
      expect(await runner.handle(job, byInput.get(4)!).fetchResult()).toEqual({ ok: true, value: 16 });
      await worker.shutdown();
    } finally {
      await queue.close();
    }
  });

  it('an outcome stored before the kill is read back by id, and a keyed resubmission does not run again', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-jobs-crash-'));
    dirs.push(root);
    const lines = await runChild(root, 'finish', [5], (ls) => ls.includes('all done'));
    expect(lines).toContain('done 5 25');
    const id = ids(lines).get(5)!;
    const store = new FileSystemObjectStore({ root });
    const queue = await Queue.open(store, 'jobs-crash', { logger: false });
    let ran = 0;
    const job = squareJob(false, () => ran++);
    const runner = new JobRunner(queue, store, { pollIntervalMs: 20, logger: false }).register(job);
    try {
      expect(await runner.handle(job, id).fetchResult()).toEqual({ ok: true, value: 25 });
      expect(await runner.handle(job, id).result()).toBe(25);
      const again = await runner.submit(job, { n: 5 });
      expect([again.id, again.newlySubmitted]).toEqual([id, false]);
      expect(await again.result()).toBe(25);
      expect(ran).toBe(0);
    } finally {
      await queue.close();
    }
  });
});
