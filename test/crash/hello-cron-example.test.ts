/**
 * Runs examples/hello-cron.ts as a real process: ten simulated minutes of a minutely schedule, one
 * job per minute received by the queue worker, then the scheduler and the worker stop.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runScript } from '../support/run-script.js';

const script = fileURLToPath(new URL('../../examples/hello-cron.ts', import.meta.url));

describe('hello_cron example', () => {
  it('prints one job per minute for ten minutes, then stops', async () => {
    const { lines, code, stderr } = await runScript(script, [], { timeoutMs: 60_000 });
    expect(code, stderr).toBe(0);
    expect(lines[0]).toBe("schedule minutely-task (* * * * *, UTC) -> queue 'tasks', first firing 2025-01-01T00:01:00.000Z");
    const minutes = Array.from({ length: 10 }, (_, i) => `[00:${String(i + 1).padStart(2, '0')}:00 UTC] received cron job from queue 'tasks': hello from cron`);
    expect(lines.slice(1, 11)).toEqual(minutes);
    expect(lines.slice(11)).toEqual(['stopped after 10 jobs']);
  }, 60_000);
});
