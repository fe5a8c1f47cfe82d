/** Child process: takes the store lock, reports, and holds it until killed (or exits on demand). */
import { writeSync } from 'node:fs';
import { acquireProcessLock } from '../../src/node/process-lock.js';

const [root, staleMs] = process.argv.slice(2);
try {
  await acquireProcessLock(root, { staleMs: Number(staleMs) });
  writeSync(1, 'locked\n');
  setInterval(() => undefined, 1000);
} catch (e) {
  writeSync(1, `error ${(e as { code?: string }).code}\n`);
  process.exit(0);
}
