/**
 * examples/bulk.ts as real processes without a terminal (plain progress lines): interrupted with
 * SIGINT part-way and run again, it finishes the same batch; the summaries file holds every
 * document exactly once, and the counts and cost equal those of an uninterrupted run.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun } from '../support/run-script.js';

const example = fileURLToPath(new URL('../../examples/bulk.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const ARGS = ['--docs', '30', '--fail-every', '13', '--max-failure-fraction', '0.1', '--concurrency', '4'];

function runBulk(dir: string, tokenDelayMs: number, interruptOn?: (line: string) => boolean): Promise<ScriptRun> {
  const env = { TAQUBA_DIR: dir, BULK_TOKEN_DELAY_MS: String(tokenDelayMs), OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
  return runScript(example, ARGS, { env, signal: interruptOn && { on: interruptOn, with: 'SIGINT' } });
}

const done = (line: string): number => Number(/^progress (\d+)\//.exec(line)?.[1] ?? -1);

describe('examples/bulk.ts', () => {
  it('prints plain progress without a terminal, resumes after Ctrl-C, and writes every summary once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'taquba-bulk-example-'));
    const clean = await mkdtemp(join(tmpdir(), 'taquba-bulk-example-clean-'));
    dirs.push(dir, clean);

    const first = await runBulk(dir, 25, (l) => done(l) >= 6);
    expect(first.code, first.stderr).toBe(130);
    expect(first.lines.some((l) => l.startsWith('interrupted at '))).toBe(true);
    expect(first.lines.some((l) => l.startsWith('30 documents:'))).toBe(false);

    const second = await runBulk(dir, 0);
    expect(second.code, second.stderr).toBe(0);
    expect(second.lines[0]).toMatch(/^batch docs-30-every-13: 30 documents, model simulated, resuming with \d+ already done$/);
    expect(second.lines.filter((l) => l.startsWith('progress ')).length).toBeGreaterThan(0);
    expect(second.lines).toContain('30 documents: 28 succeeded, 2 failed, 0 cancelled');
    expect(second.lines).toContain('failed: doc-0012, doc-0025');

    const out = (await readFile(join(dir, 'summaries.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { key: string; status: string });
    expect(out).toHaveLength(30);
    expect(new Set(out.map((o) => o.key)).size).toBe(30);

    const uninterrupted = await runBulk(clean, 0);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    const tail = (lines: string[]) => lines.filter((l) => /^(\d+ documents|failed|cost )/.test(l));
    expect(tail(second.lines)).toEqual(tail(uninterrupted.lines));
    expect(tail(uninterrupted.lines).some((l) => l.startsWith('cost total: chars='))).toBe(true);
  }, 180_000);
});
