/**
 * Child process for the temp-file sweep test: puts large memo-like objects (new nested
 * directories, plain puts, as the workflow memo does) and small create-only ones (which keep a
 * spare temp file) in a loop, printing `ack <key>` after each put resolves. The parent kills it
 * with SIGKILL while a put's temp file is being written.
 */
import { writeSync } from 'node:fs';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const [root] = process.argv.slice(2);
const store = new FileSystemObjectStore({ root });
const big = new Uint8Array(8 * 1024 * 1024).fill(7);
const small = new Uint8Array(16).fill(1);
writeSync(1, 'open\n');
for (let i = 0; ; i++) {
  const wal = `app/wal/${String(i).padStart(8, '0')}`;
  await store.put(wal, small, { ifNoneMatch: '*' });
  writeSync(1, `ack ${wal}\n`);
  const memo = `wf-memo/memos/run-${i}/0/${'ab'.repeat(32)}`;
  await store.put(memo, big);
  writeSync(1, `ack ${memo}\n`);
}
