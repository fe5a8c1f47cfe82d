/**
 * Torn tails of the append-log WAL on OPFS (docs/rfcs/0002-wal-append-log.md, "Torn tails"), the
 * browser side of test/node/kv-log-torn-tail.test.ts: a writer's worker is terminated while its
 * log is open (a tab crash), its last segment is then cut inside its last record (at a record
 * boundary, in the length prefix, in the checksum, in the body, one byte short), and a writer in
 * another worker reopens: exactly the commits whose records are whole before the cut are there,
 * it appends after them, and a second reopen agrees.
 */
import { afterAll, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { OPFS_HEADER_BYTES } from '../../../src/stores/opfs/index.js';
import { OpfsWorkerClient } from './opfs-worker-client.js';
import { recordEnds } from '../../core/kv/log-record-ends.js';

const COMMITS = 6;
const reader = new OpfsWorkerClient();
afterAll(() => reader.terminate());

async function presentKeys(db: KvDb): Promise<number[]> {
  const present: number[] = [];
  for (let i = 0; i < COMMITS; i++) {
    const v = await db.get(utf8(`k${i}`));
    if (v !== undefined) {
      expect(fromUtf8(v)).toBe(`v${i}`);
      present.push(i);
    }
  }
  return present;
}

/** Retries `fn` while the dead worker's access handle may still hold the file. */
async function whenReleased<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const CUTS = ['record boundary', 'length prefix', 'checksum', 'body', 'one byte short'] as const;

it.each(CUTS)('a log cut in its last record (%s) replays exactly the whole records before the cut, after a crashed tab', async (where) => {
  const directory = `taquba-test/torn-${Date.now().toString(36)}-${CUTS.indexOf(where)}`;
  const dirNames = directory.split('/');
  // The writer's worker dies with its log open, like a crashed tab.
  const crashed = new OpfsWorkerClient();
  const writer = await KvDb.open(await crashed.open(directory), { memtableBytes: 1 << 20 });
  for (let i = 0; i < COMMITS; i++) await writer.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(`v${i}`) }]);
  crashed.terminate();
  try {
    const logs = (await reader.call('listRaw', dirNames)).filter((p) => /^kv@\/log@\/[^./][^/]*$/.test(p));
    expect(logs).toHaveLength(1);
    const names = [...dirNames, ...logs[0]!.split('/')];
    const file = await reader.call('readRaw', names);
    const ends = recordEnds(file.subarray(OPFS_HEADER_BYTES));
    expect(ends).toHaveLength(COMMITS + 1); // the segment's header record, then one per commit
    const lastStart = ends.at(-2)!;
    const cut = { 'record boundary': lastStart, 'length prefix': lastStart + 2, checksum: lastStart + 6, body: lastStart + 10, 'one byte short': ends.at(-1)! - 1 }[where];
    await whenReleased(() => reader.call('truncateRaw', names, OPFS_HEADER_BYTES + cut));
    const whole = Array.from({ length: COMMITS - 1 }, (_, i) => i);

    const db = await whenReleased(async () => KvDb.open(await reader.open(directory), { memtableBytes: 1 << 20 }));
    expect(await presentKeys(db), `cut at ${cut} (${where})`).toEqual(whole);
    await db.write([{ type: 'put', key: utf8('after'), value: utf8('1') }]);
    await db.close();
    const again = await KvDb.open(await reader.open(directory), { memtableBytes: 1 << 20 });
    expect(await presentKeys(again), 'second reopen').toEqual(whole);
    expect(await again.get(utf8('after'))).toBeDefined();
    await again.close();
  } finally {
    await reader.call('deleteDirectory', directory).catch(() => undefined);
  }
});
