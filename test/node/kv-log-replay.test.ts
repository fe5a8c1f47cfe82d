/**
 * Replay of the append-log WAL at open (docs/rfcs/0002-wal-append-log.md, open step 3): a
 * memtable frozen partway through a segment must not let a flush retire that segment, whatever
 * memtable size the opener has against the writer that wrote the log, and whether it then
 * crashes or closes cleanly. And a segment replay needs that is missing is CORRUPT_DATA.
 */
import { mkdtemp, readdir, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-replay-'));
  roots.push(root);
  return root;
}

const KEYS = 60;
const WRITER_MEMTABLE = 64 << 10;
const value = (i: number): string => `value-${i}-${'v'.repeat(40)}`;
const open = (root: string, memtableBytes: number): Promise<KvDb> => KvDb.open(new FileSystemObjectStore({ root, writerLock: false }), { memtableBytes });

/** A writer that commits KEYS keys, one durable commit each, into one log segment, and dies (never closes). */
async function crashedWriter(root: string, holdSnapshot: boolean): Promise<void> {
  const db = await open(root, WRITER_MEMTABLE);
  // A snapshot held across the commits keeps every version in the memtable (as a long read does).
  const snapshot = holdSnapshot ? db.begin() : undefined;
  for (let i = 0; i < KEYS; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(value(i)) }]);
  // Overwrites, so a held snapshot makes a difference to the memtable's size.
  for (let i = 0; i < KEYS; i += 3) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(`${value(i)}!`) }]);
  snapshot?.rollback(); // in a crash nothing is released; the memtable above is what counts
}

async function missingKeys(db: KvDb): Promise<string[]> {
  const missing: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const v = await db.get(utf8(`k${i}`));
    const expected = i % 3 === 0 ? `${value(i)}!` : value(i);
    if (v === undefined || fromUtf8(v) !== expected) missing.push(`k${i}`);
  }
  return missing;
}

const sizes = [
  ['smaller', 1024],
  ['equal', WRITER_MEMTABLE],
  ['larger', 1 << 20],
] as const;

describe('append-log replay: the replay point never passes what a memtable holds', () => {
  for (const [name, memtableBytes] of sizes) {
    for (const holdSnapshot of [false, true]) {
      for (const ending of ['crash', 'close'] as const) {
        it(`an opener with a ${name} memtable (writer ${holdSnapshot ? 'held a snapshot' : 'held none'}) that then ${ending === 'crash' ? 'crashes after its flushes' : 'closes cleanly'} loses nothing`, async () => {
          const root = await tempRoot();
          await crashedWriter(root, holdSnapshot);
          const second = await open(root, memtableBytes);
          expect(await missingKeys(second)).toEqual([]);
          // The flushes of memtables frozen during replay land (and retire segments) before the end.
          await second.whenIdle();
          if (ending === 'close') await second.close();
          // A crash: the instance is abandoned; the next open fences it.
          const third = await open(root, WRITER_MEMTABLE);
          expect(await missingKeys(third)).toEqual([]);
          await third.close();
          if (ending === 'crash') await second.close().catch(() => undefined);
        });
      }
    }
  }
});

/** The log segment files under `root`, by name (`<epoch>-<segment>`). */
async function segments(root: string): Promise<string[]> {
  return (await readdir(join(root, 'kv@', 'log@'))).filter((n) => !n.startsWith('.')).sort();
}

describe('append-log replay: missing segments are CORRUPT_DATA', () => {
  /**
   * A writer whose log spans several segments: a small memtable rolls a segment per freeze, and
   * its flushes are held (fault point), so every segment stays needed. Then it dies, or (flushes
   * released) closes cleanly, which leaves the last segment needed and its end recorded.
   */
  async function multiSegmentWriter(root: string, close: boolean): Promise<string[]> {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const db = await KvDb.open(new FileSystemObjectStore({ root, writerLock: false }), {
      memtableBytes: 1024,
      maxFrozenMemtables: 64,
      faults: (point) => (point === 'flush:sst-put' ? held : undefined),
    });
    for (let i = 0; i < 80; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(value(i)) }]);
    if (close) {
      release();
      await db.close();
    }
    const names = await segments(root);
    expect(names.length).toBeGreaterThanOrEqual(close ? 1 : 3);
    return names;
  }

  it.each([
    ['the first segment of a crashed writer', false, 0],
    ['a middle segment of a crashed writer', false, 1],
    ['the segment the recorded end of a cleanly closed writer names', true, -1],
  ] as const)('deleting %s: the next open is CORRUPT_DATA naming it', async (_name, close, index) => {
    const root = await tempRoot();
    const names = await multiSegmentWriter(root, close);
    const victim = names.at(index)!;
    await unlink(join(root, 'kv@', 'log@', victim));
    const error = await open(root, 1 << 20).then(
      (db) => db.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(isTaqubaError(error, 'CORRUPT_DATA'), String(error)).toBe(true);
    expect((error as Error).message).toContain(`kv/log/${victim}`);
  });
});
