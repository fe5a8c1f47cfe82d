/**
 * Child process for the SIGSTOP fencing test: prints `ready` once loaded, and on a `go` line on
 * stdin opens the filesystem store at `root` (with the store's writer lock, or with it turned
 * off), then commits `<name>-<n>` keys from 4 concurrent loops and prints `ack <key>` after each
 * durable commit resolves. On the first refused write it prints `FENCED` (or `error <code>
 * <message>`) and exits.
 *
 * The parent starts it ahead of time and sends `go` at the moment the writer is due (after the
 * writer before it was stopped), so the process start is off the scenario's path. With the lock,
 * an open refused with LOCKED is tried again every 50 ms until `lockWaitMs` passed (the stopped
 * holder's lock goes stale `staleMs` after its last refresh): each try is a new store and a new
 * KvDb.open, as a restarted process would make; after `lockWaitMs` the LOCKED error is printed.
 *
 * argv: root name lock|nolock staleMs [log|objects (the WAL path; default log)] [lockWaitMs (default 0)]
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';

const [root, name, lockMode, staleArg, walArg, lockWaitArg] = process.argv.slice(2);
const say = (line: string): void => {
  writeSync(1, `${line}\n`);
};
const describe = (e: unknown): string => `${isTaqubaError(e) ? e.code : 'UNKNOWN'} ${String((e as Error)?.message ?? e).replace(/\n/g, ' ')}`;

say('ready');
const input = createInterface({ input: process.stdin });
for await (const line of input) if (line === 'go') break;
input.close();

// The writer lock as the store takes it by default; when it is lost the writer keeps going, so
// the engine's fencing is what must stop it.
const writerLock = lockMode === 'lock' ? { staleMs: Number(staleArg), onCompromised: () => say('lock-compromised') } : false;
const lockDeadline = Date.now() + Number(lockWaitArg ?? 0);

let db: KvDb;
for (let tries = 1; ; tries++) {
  try {
    db = await KvDb.open(new FileSystemObjectStore({ root, writerLock, appendLogs: walArg !== 'objects' }), { memtableBytes: 1024, flushMaxBytes: 1024, maxRuns: 2, blockBytes: 256 });
    say(`open ${tries}`);
    break;
  } catch (e) {
    if (isTaqubaError(e, 'LOCKED') && Date.now() < lockDeadline) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    say(`error ${describe(e)}`);
    process.exit(0);
  }
}

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
