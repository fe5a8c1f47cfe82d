/**
 * The CPU profile of a benchmark's worker phases alone, shared by profile-chain.ts and
 * profile-fn.ts: `windows` windows run one after another, and sampling starts at the first
 * window's work (after its submissions) and stops after the last, so start-up, submission and
 * warm-up stay out of the profile.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * Runs `runWindow` `windows` times (it calls `onWorkStart` just before its worker starts and
 * resolves with its rate), logs each rate in `unit`, and writes the profile to `out`.
 */
export async function profileWindows(out: string, windows: number, unit: string, runWindow: (tag: string, onWorkStart: () => void) => Promise<number>): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  let profiling = false;
  const start = (): void => {
    if (!profiling) void session.post('Profiler.start');
    profiling = true;
  };
  for (let w = 0; w < windows; w++) console.log(`window ${w}: ${(await runWindow(`run${w}`, start)).toFixed(0)} ${unit}`);
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
  console.log(`profile written to ${out}`);
}
