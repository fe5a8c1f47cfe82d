/**
 * The browser profile of the `browser-persistent` project: a directory of its own per vitest
 * run (two runs at once cannot share a Chromium profile), so IndexedDB and OPFS live on disk and
 * survive reloads, as they do for a real user. Also the project's global setup: it removes the
 * profile after the run, and at the start of a run the profiles of runs that are gone (what a
 * crashed run left, or the few KB Chromium writes while closing after the teardown).
 */
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'taquba-vitest-profile-';

export const PERSISTENT_PROFILE_DIR = join(tmpdir(), `${PREFIX}${process.pid}`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export default async function setup(): Promise<() => Promise<void>> {
  for (const entry of readdirSync(tmpdir())) {
    const pid = entry.startsWith(PREFIX) ? Number(entry.slice(PREFIX.length)) : NaN;
    if (Number.isSafeInteger(pid) && pid !== process.pid && !alive(pid)) await rm(join(tmpdir(), entry), { recursive: true, force: true });
  }
  return async () => {
    await rm(PERSISTENT_PROFILE_DIR, { recursive: true, force: true }).catch(() => undefined);
  };
}
