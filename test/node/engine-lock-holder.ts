/** Child process: opens the engine at `path` on the filesystem store (default writer lock), writes one key, reports; `hold` keeps it open until killed. */
import { writeSync } from 'node:fs';
import { utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const [root, path, mode] = process.argv.slice(2);
try {
  const db = await KvDb.open(new FileSystemObjectStore({ root }), { path });
  await db.write([{ type: 'put', key: utf8('from-child'), value: utf8('yes') }]);
  writeSync(1, 'opened\n');
  if (mode === 'hold') setInterval(() => undefined, 1000);
  else await db.close();
} catch (e) {
  writeSync(1, `error ${isTaqubaError(e) ? e.code : 'UNKNOWN'} ${(e as Error).message}\n`);
}
