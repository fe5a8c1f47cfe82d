/**
 * Kills a child process holding queue claims (SIGKILL), then reopens the filesystem store: every
 * unacknowledged job is delivered again with an interruption counted (not an attempt),
 * acknowledged jobs stay done, and nothing is lost.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { nodeScript } from '../support/node-script.js';

const child = fileURLToPath(new URL('./queue-crash-worker.ts', import.meta.url));
const quiet = { warn: () => undefined };

interface ChildReport {
  claimed: string[];
  acked: string[];
}

/** Runs the child in `mode`; kills it `killAfterMs` after it prints `ready`. */
function runAndKill(root: string, args: string[], killAfterMs: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(child), root, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const report: ChildReport = { claimed: [], acked: [] };
    let buffer = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        // Real time is the subject: the kill lands at a random point of the child's work.
        if (line === 'ready') setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
        else if (line.startsWith('claimed ')) report.claimed.push(line.slice(8));
        else if (line.startsWith('acked ')) report.acked.push(line.slice(6));
      }
    });
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(report);
      else reject(new Error(`queue child exited on its own: code=${code} ${stderr}`));
    });
  });
}

async function openQueue(root: string): Promise<Queue> {
  return Queue.open(new FileSystemObjectStore({ root }), 'queue', { logger: quiet, flushIntervalMs: 1 });
}

describe('queue crash recovery (child process killed while holding claims)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  it('delivers every unacknowledged claimed job again with an interruption counted (not an attempt); acked jobs stay done', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-queue-crash-'));
    roots.push(root);
    const setup = await openQueue(root);
    const ids = await setup.enqueueBatch('jobs', Array.from({ length: 30 }, (_, i) => utf8(`job-${i}`)));
    await setup.close();

    const report = await runAndKill(root, ['hold', '10'], 0);
    expect(report.claimed).toEqual(ids.slice(0, 10));
    expect(report.acked).toEqual(ids.slice(0, 3));

    const q = await openQueue(root);
    expect(await q.stats('jobs')).toMatchObject({ pending: 27, claimed: 0, done: 3 });
    for (const id of ids.slice(3, 10)) {
      expect((await q.attemptHistory(id)).map((a) => a.outcome), `history of ${id}`).toEqual(['interrupted']);
    }
    const again = await q.claimBatch('jobs', 100, 60_000);
    expect(again.map((c) => c.id)).toEqual(ids.slice(3));
    // An interrupted claim gives its try back and counts an interruption instead (#13).
    for (const c of again) expect([c.job.attempts, c.job.interruptions], c.id).toEqual(ids.slice(3, 10).includes(c.id) ? [1, 1] : [1, 0]);
    for (const id of report.acked) expect(await q.getJob(id)).toBeUndefined();
    for (const c of again) await q.ack(c);
    expect(await q.stats('jobs')).toMatchObject({ pending: 0, claimed: 0, done: 30 });
    await q.close();
  }, 120_000);

  it('loses no job when a concurrent worker is killed at random moments over 3 rounds', async () => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-queue-crash-'));
    roots.push(root);
    const setup = await openQueue(root);
    const ids = await setup.enqueueBatch('jobs', Array.from({ length: 400 }, (_, i) => Uint8Array.of(i % 256)));
    await setup.close();
    const acked = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const report = await runAndKill(root, ['work'], 100 + Math.floor(Math.random() * 300));
      for (const id of report.acked) acked.add(id);
    }
    expect(acked.size).toBeGreaterThan(0);
    const q = await openQueue(root);
    const stats = await q.stats('jobs');
    expect(stats.claimed).toBe(0);
    expect(stats.pending + stats.done).toBe(ids.length);
    for (const id of acked) {
      expect(await q.getJob(id), `acknowledged ${id} must stay done`).toBeUndefined();
      expect(await q.kvGet(utf8(`done/${id}`)), `effects of acknowledged ${id}`).toEqual(utf8('1'));
    }
    const rest = await q.claimBatch('jobs', 1000, 60_000);
    expect(rest.length).toBe(stats.pending);
    const seen = new Set(rest.map((c) => c.id));
    for (const id of ids) {
      // Every job is either redelivered now or was acked (its ack effects are stored).
      if (!seen.has(id)) expect(await q.kvGet(utf8(`done/${id}`)), `job ${id} neither pending nor done`).toEqual(utf8('1'));
    }
    expect(rest.every((c) => c.job.attempts >= 1)).toBe(true);
    await q.close();
  }, 120_000);
});
