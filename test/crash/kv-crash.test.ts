/**
 * Kills a child process that is committing to a filesystem store at random moments, then reopens
 * the store: every acknowledged commit must be there, and every commit must be whole (both keys
 * of a pair, or neither).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { randomInt, seededRandom } from '../support/random.js';
import { nodeScript } from '../support/node-script.js';

const writer = fileURLToPath(new URL('./kv-crash-writer.ts', import.meta.url));

type Wal = 'log' | 'objects';

function runAndKill(root: string, start: number, killAfterMs: number, wal: Wal): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeScript(writer), root, String(start), wal], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: number[] = [];
    let buffer = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        // Real time is the subject: the kill lands at a random point of the writer's work.
        if (line === 'open') setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        else if (line.startsWith('ack ')) acked.push(Number(line.slice(4)));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`writer exited on its own: code=${code} ${stderr}`));
    });
  });
}

describe('kv engine crash safety (child process killed mid-write)', () => {
  const roots: string[] = [];
  afterAll(async () => {
    for (const r of roots) await rm(r, { recursive: true, force: true });
  });

  // The append log gets more kills: every kill lands at another point of an append, a segment
  // roll or a flush, and each reopen seals the killed writer's log and records its end.
  it.each([
    ['log', 8],
    ['objects', 4],
  ] as const)('%s WAL: keeps every acknowledged commit and never half-applies one across %i kills', async (wal, kills) => {
    const root = await mkdtemp(join(tmpdir(), 'taquba-crash-'));
    roots.push(root);
    const seed = Date.now() >>> 0;
    const rand = seededRandom(seed);
    const acked = new Set<number>();
    let start = 0;
    for (let round = 0; round < kills; round++) {
      const got = await runAndKill(root, start, 100 + randomInt(rand, 500), wal);
      for (const n of got) acked.add(n);
      start += 1_000_000; // each round numbers its commits apart
    }
    expect(acked.size).toBeGreaterThan(50);
    const db = await KvDb.open(new FileSystemObjectStore({ root, appendLogs: wal === 'log' }));
    for (const n of acked) {
      const a = await db.get(utf8(`a${n}`));
      expect(a && fromUtf8(a), `acknowledged commit ${n} (seed ${seed})`).toBe(`round-${n}-${'p'.repeat(n % 50)}`);
    }
    let pairs = 0;
    for await (const e of db.scan({ prefix: utf8('a') })) {
      const n = fromUtf8(e.key).slice(1);
      const b = await db.get(utf8(`b${n}`));
      expect(b && fromUtf8(b), `commit ${n} is whole`).toBe(fromUtf8(e.value));
      pairs++;
    }
    for await (const e of db.scan({ prefix: utf8('b') })) {
      expect(await db.get(utf8(`a${fromUtf8(e.key).slice(1)}`))).toBeDefined();
    }
    expect(pairs).toBeGreaterThanOrEqual(acked.size);
    // The killed writers left temp files (their spare for the next WAL put, maybe a half-written
    // one); the open listed the WAL directory, which sweeps the temp files of dead processes. Only
    // this process's own spare may be there.
    const temps = (await readdir(join(root, 'kv@', 'wal@'))).filter((name) => name.startsWith('.tmp-'));
    expect(temps.filter((name) => !name.startsWith(`.tmp-${process.pid}-`))).toEqual([]);
    await db.close();
  }, 120_000);
});
