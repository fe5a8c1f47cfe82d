/**
 * Runs examples/fanout-jobs.ts as a real process (bundled: test/support/node-script.ts) and checks what it prints:
 * one typed job per URL of its local server, the joined aggregate, and a retried step that finds
 * the aggregate in its memo instead of fanning out again (the server answers three requests).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeScript } from '../support/node-script.js';

const example = fileURLToPath(new URL('../../examples/fanout-jobs.ts', import.meta.url));

function runExample(): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(example)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ lines: stdout.split('\n').filter((l) => l !== ''), code, stderr });
    });
  });
}

describe('fanout_jobs example', () => {
  it('fans out one job per URL, joins the typed results, and a retry is served from the memo', async () => {
    const run = await runExample();
    expect(run.code, run.stderr).toBe(0);
    const base = /^\[step 0\] fetched (http:\/\/127\.0\.0\.1:\d+)\/alpha: 2100 bytes$/.exec(run.lines[0] ?? '')?.[1];
    expect(base, run.lines.join('\n')).toBeDefined();
    const id = /^=== run ([0-9A-Z]{26}) succeeded \(final_step=1\) ===$/.exec(run.lines[5] ?? '')?.[1];
    expect(id).toBeDefined();
    expect(run.lines).toEqual([
      `[step 0] fetched ${base}/alpha: 2100 bytes`,
      `[step 0] fetched ${base}/beta-long: 3300 bytes`,
      `[step 0] fetched ${base}/gamma: 2100 bytes`,
      '[step 0] simulated failure after the join (attempt 1); the step is retried',
      '[step 0] memo hit; fan-out not re-submitted',
      `=== run ${id} succeeded (final_step=1) ===`,
      'fetch report',
      '------------',
      `${base}/alpha: 2100 bytes`,
      `${base}/beta-long: 3300 bytes`,
      `${base}/gamma: 2100 bytes`,
      'total: 7500 bytes',
      'server answered 3 requests',
    ]);
  }, 60_000);
});
