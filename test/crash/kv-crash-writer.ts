/**
 * Child process for the crash test: commits pairs of keys from 8 concurrent loops and prints
 * `ack <n>` on stdout after each durable commit resolves. The parent kills it at a random moment.
 * Arguments: root, first commit number, and `log` or `objects` (the WAL path).
 */
import { writeSync } from 'node:fs';
import { utf8 } from '../../src/core/bytes.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const [root, startArg, walArg] = process.argv.slice(2);
let next = Number(startArg);
// `objects`: the store offers no append logs, so the WAL is one object per group commit.
const db = await KvDb.open(new FileSystemObjectStore({ root, appendLogs: walArg !== 'objects' }), { memtableBytes: 8 * 1024, blockBytes: 512, maxRuns: 2 });
writeSync(1, 'open\n');

async function loop(): Promise<void> {
  for (;;) {
    const n = next++;
    const value = utf8(`round-${n}-${'p'.repeat(n % 50)}`);
    await db.write([
      { type: 'put', key: utf8(`a${n}`), value },
      { type: 'put', key: utf8(`b${n}`), value },
    ]);
    writeSync(1, `ack ${n}\n`);
  }
}
await Promise.all(Array.from({ length: 8 }, loop));
