/**
 * Child process for the SIGSTOP fencing test: opens the filesystem store at `root` (with the
 * store's writer lock, or with it turned off), then commits `<name>-<n>` keys from 4 concurrent loops and
 * prints `ack <key>` after each durable commit resolves. On the first refused write it prints
 * `FENCED` (or `error <code> <message>`) and exits.
 *
 * argv: root name lock|nolock staleMs [log|objects (the WAL path; default log)]
 */
import { writeSync } from 'node:fs';
import { utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';

const [root, name, lockMode, staleArg, walArg] = process.argv.slice(2);
const say = (line: string): void => {
  writeSync(1, `${line}\n`);
};
const describe = (e: unknown): string => `${isTaqubaError(e) ? e.code : 'UNKNOWN'} ${String((e as Error)?.message ?? e).replace(/\n/g, ' ')}`;

// The writer lock as the store takes it by default; when it is lost the writer keeps going, so
// the engine's fencing is what must stop it.
const writerLock = lockMode === 'lock' ? { staleMs: Number(staleArg), onCompromised: () => say('lock-compromised') } : false;

let db: KvDb;
try {
  db = await KvDb.open(new FileSystemObjectStore({ root, writerLock, appendLogs: walArg !== 'objects' }), { memtableBytes: 1024, flushMaxBytes: 1024, maxRuns: 2, blockBytes: 256 });
} catch (e) {
  say(`error ${describe(e)}`);
  process.exit(0);
}
say('open');

let next = 0;
async function loop(): Promise<void> {
  for (;;) {
    const key = `${name}-${String(next++).padStart(6, '0')}`;
    try {
      await db.write([{ type: 'put', key: utf8(key), value: utf8(key) }]);
    } catch (e) {
      say(isTaqubaError(e, 'FENCED') ? 'FENCED' : `error ${describe(e)}`);
      process.exit(0);
    }
    say(`ack ${key}`);
  }
}
await Promise.all(Array.from({ length: 4 }, loop));
