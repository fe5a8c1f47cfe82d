/**
 * examples/agent.ts as real processes on one filesystem store, offline (the local model): killed
 * (SIGKILL) while the writer streams, the rerun resumes at the writing stage and the research
 * calls are not made again (counted through AGENT_MODEL_CALLS_FILE); its summary equals that of
 * an uninterrupted run in another directory.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const example = fileURLToPath(new URL('../../examples/agent.ts', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function runAgent(dir: string, killOn?: (line: string) => boolean): Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, TAQUBA_DIR: dir, AGENT_MODEL_CALLS_FILE: join(dir, 'calls'), AGENT_TOKEN_DELAY_MS: '15', OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const proc = spawn(process.execPath, ['--import', 'tsx', example, 'durable agents'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (killOn && !killed && killOn(line)) {
          killed = true;
          proc.kill('SIGKILL');
        }
      }
    });
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (buffer) lines.push(buffer);
      resolve({ lines, code, signal, stderr });
    });
  });
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
    expect(second.lines[0]).toMatch(/^resuming run agent-[0-9a-f]{16} at step 1 \(write\)/);
    expect(second.lines.some((l) => l.startsWith('[research]'))).toBe(false);
    // Research was paid for once; the interrupted write call is made again (it was never memoized).
    expect(await calls(dir)).toEqual(['research', 'research', 'write', 'write']);

    const uninterrupted = await runAgent(clean);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    expect(await calls(clean)).toEqual(['research', 'research', 'write']);
    expect(summaryOf(second.lines)).toBeTruthy();
    expect(summaryOf(second.lines)).toBe(summaryOf(uninterrupted.lines));
  }, 120_000);
});
