/**
 * examples/agent.ts as real processes on one filesystem store, offline (the local model): killed
 * (SIGKILL) while the writer streams, the rerun resumes at the writing stage and the research
 * calls are not made again (counted through AGENT_MODEL_CALLS_FILE); its summary equals that of
 * an uninterrupted run in another directory.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun } from '../support/run-script.js';

const example = fileURLToPath(new URL('../../examples/agent.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function runAgent(dir: string, killOn?: (line: string) => boolean): Promise<ScriptRun> {
  const env = { TAQUBA_DIR: dir, AGENT_MODEL_CALLS_FILE: join(dir, 'calls'), AGENT_TOKEN_DELAY_MS: '15', OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
  return runScript(example, ['durable agents'], { env, signal: killOn && { on: killOn, with: 'SIGKILL' }, timeoutMs: 60_000 });
}

const calls = async (dir: string) => (await readFile(join(dir, 'calls'), 'utf8')).trim().split('\n');
const summaryOf = (lines: string[]) => lines[lines.findIndex((l) => l.startsWith('=== summary')) + 1];

describe('examples/agent.ts', () => {
  it('killed while writing, it resumes at the writing stage without calling the model for research again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'taquba-agent-'));
    const clean = await mkdtemp(join(tmpdir(), 'taquba-agent-clean-'));
    dirs.push(dir, clean);

    const first = await runAgent(dir, (l) => l.startsWith('[write] calling'));
    expect(first.signal).toBe('SIGKILL');
    expect(first.lines).toContain('[research] done: 2 findings committed');
    expect(first.lines.some((l) => l.startsWith('=== summary'))).toBe(false);
    expect(await calls(dir)).toEqual(['research', 'research', 'write']);

    const second = await runAgent(dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.lines[0]).toMatch(/^resuming run agent-[0-9a-f]{16} /);
    // The research answers come from the run's history: no research call is made again.
    expect(second.lines.some((l) => l.startsWith('[research] calling'))).toBe(false);
    // Research was paid for once; the interrupted write call is made again (it was never memoized).
    expect(await calls(dir)).toEqual(['research', 'research', 'write', 'write']);

    const uninterrupted = await runAgent(clean);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    expect(await calls(clean)).toEqual(['research', 'research', 'write']);
    expect(summaryOf(second.lines)).toBeTruthy();
    expect(summaryOf(second.lines)).toBe(summaryOf(uninterrupted.lines));
  }, 120_000);
});
