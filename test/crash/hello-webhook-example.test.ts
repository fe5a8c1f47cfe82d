/**
 * Runs examples/hello-webhook.ts as a real process: deliveries fail while the receiver is down,
 * are retried, and once it is up each of the three arrives signed, verified, with one delivery id
 * per run (the run without a callback_url gets none).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeScript } from '../support/node-script.js';

const script = fileURLToPath(new URL('../../examples/hello-webhook.ts', import.meta.url));

function run(): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(script)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ lines: out.split('\n').filter((l) => l.length > 0), code, stderr });
    });
  });
}

describe('hello_webhook example', () => {
  it('retries while the receiver is down, then delivers three verified callbacks', async () => {
    const { lines, code, stderr } = await run();
    expect(code, stderr).toBe(0);
    expect(lines[0]).toMatch(/^receiver down; callbacks go to http:\/\/127\.0\.0\.1:\d+\/hook$/);
    expect(lines.filter((l) => / with callback_url$/.test(l))).toHaveLength(3);
    expect(lines.filter((l) => / without callback_url \(no webhook\)$/.test(l))).toHaveLength(1);

    const up = lines.findIndex((l) => l.startsWith('receiver up on '));
    expect(up).toBeGreaterThan(0);
    const failures = lines.slice(0, up).filter((l) => /^delivery \S+ attempt \d+ failed: webhook delivery failed: .*ECONNREFUSED/.test(l));
    expect(failures.length).toBeGreaterThanOrEqual(3);

    const deliveries = lines.filter((l) => l.startsWith('> POST /hook verified '));
    expect(deliveries.length).toBeGreaterThanOrEqual(3);
    const ids = new Set(deliveries.map((l) => /webhook-id=(\S+)/.exec(l)?.[1]));
    expect(ids.size).toBe(3);
    // The delivery ids of the failed attempts are the ids that finally arrived.
    expect(new Set(failures.map((l) => /^delivery (\S+)/.exec(l)?.[1]))).toEqual(ids);
    expect(deliveries.some((l) => /workflow\.run\.succeeded .* output="hello, alice"$/.test(l))).toBe(true);
    expect(deliveries.some((l) => /workflow\.run\.succeeded .* output="hello, bob"$/.test(l))).toBe(true);
    expect(deliveries.some((l) => /workflow\.run\.failed .* error="no greeting for mallory"$/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('Final stats: done=3 dead=0 received=3');
  }, 60_000);
});
