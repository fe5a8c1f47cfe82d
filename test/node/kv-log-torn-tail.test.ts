/**
 * Torn tails of the append-log WAL (docs/rfcs/0002-wal-append-log.md, "Torn tails"): a writer
 * that died mid-append leaves its last segment cut anywhere. For every byte offset inside its
 * last records, a reopen must apply exactly the commits whose records are whole before the cut,
 * never one after it, and record that end so every later open agrees. A damaged record followed by
 * a whole one cannot be a torn tail (a crash cuts only the last record): CORRUPT_DATA, with no end
 * recorded; so is a damaged record in a log whose end was recorded (a clean close).
 */
import { cp, mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { recordEnds } from '../core/kv/log-record-ends.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-torn-'));
  roots.push(root);
  return root;
}

const COMMITS = 12;
const open = (root: string): Promise<KvDb> => KvDb.open(new FileSystemObjectStore({ root, writerLock: false }), { memtableBytes: 1 << 20 });

/** The one log segment file of the writer under `root` (`kv@/log@/<epoch>-<segment>`). */
async function segmentFile(root: string): Promise<string> {
  const dir = join(root, 'kv@', 'log@');
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.'));
  expect(names).toHaveLength(1);
  return join(dir, names[0]);
}

/** A writer that commits k0..k(COMMITS-1), one record each, and "dies" (never closes). */
async function crashedWriter(): Promise<{ root: string; file: string; bytes: Uint8Array; ends: number[] }> {
  const root = await tempRoot();
  const db = await open(root);
  for (let i = 0; i < COMMITS; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(`v${i}-${'x'.repeat(i)}`) }]);
  const file = await segmentFile(root);
  const bytes = new Uint8Array(await readFile(file));
  const ends = recordEnds(bytes);
  expect(ends).toHaveLength(COMMITS + 1);
  expect(ends.at(-1)).toBe(bytes.length);
  return { root, file, bytes, ends };
}

async function presentKeys(db: KvDb): Promise<number[]> {
  const present: number[] = [];
  for (let i = 0; i < COMMITS; i++) {
    const v = await db.get(utf8(`k${i}`));
    if (v !== undefined) {
      expect(fromUtf8(v)).toBe(`v${i}-${'x'.repeat(i)}`);
      present.push(i);
    }
  }
  return present;
}

describe('append-log WAL: torn tails', () => {
  it('a cut at every byte offset of the last three records replays exactly the whole records before it, and every later open agrees', async () => {
    const { root, file, bytes, ends } = await crashedWriter();
    const from = ends[ends.length - 4];
    let checked = 0;
    const checkCut = async (cut: number): Promise<void> => {
      const copy = await tempRoot();
      await cp(root, copy, { recursive: true });
      await truncate(join(copy, file.slice(root.length)), cut);
      const whole = ends.slice(1).filter((end) => end <= cut).length;
      const expected = Array.from({ length: whole }, (_, i) => i);
      const db = await open(copy);
      expect(await presentKeys(db), `cut at ${cut} of ${bytes.length}`).toEqual(expected);
      // The reopened writer appends after the recorded end of the cut log, in a log of its own.
      await db.write([{ type: 'put', key: utf8('after'), value: utf8('1') }]);
      await db.close();
      const again = await open(copy);
      expect(await presentKeys(again), `cut at ${cut}, second reopen`).toEqual(expected);
      expect(await again.get(utf8('after'))).toBeDefined();
      await again.close();
      await rm(copy, { recursive: true, force: true });
      checked++;
    };
    // Eight cuts at a time, each on its own copy: the time goes to waiting on fsync, not to CPU.
    const cuts = Array.from({ length: bytes.length - from + 1 }, (_, i) => from + i);
    for (let i = 0; i < cuts.length; i += 8) await Promise.all(cuts.slice(i, i + 8).map(checkCut));
    expect(checked).toBe(bytes.length - from + 1);
  }, 120_000);

  it('a flipped byte in any field of a record with whole records after it is CORRUPT_DATA naming the segment and offset, and no end is recorded', async () => {
    const { root, file, bytes, ends } = await crashedWriter();
    // Record index 8 holds commit 7; records 9.. stay whole. Fields: length (4 bytes), checksum (4), body.
    const start = ends[7];
    const bodyLength = ends[8] - start - 8;
    const offsets = [0, 1, 2, 3, 4, 5, 6, 7, 8, 8 + Math.floor(bodyLength / 2), 8 + bodyLength - 1].map((o) => start + o);
    const masks = [0x01, 0x80, 0xff];
    let checked = 0;
    for (const at of offsets) {
      for (const mask of masks) {
        const copy = await tempRoot();
        await cp(root, copy, { recursive: true });
        const damaged = bytes.slice();
        damaged[at] ^= mask;
        await writeFile(join(copy, file.slice(root.length)), damaged);
        const error = await open(copy).then(
          (db) => db.close().then(() => undefined),
          (e: unknown) => e,
        );
        const where = `byte ${at - start} of the record, mask ${mask}`;
        expect(isTaqubaError(error, 'CORRUPT_DATA'), `${where}: ${String(error)}`).toBe(true);
        expect((error as Error).message, where).toContain('kv/log/');
        expect((error as Error).message, where).toContain(`offset ${start}`);
        // Nothing was recorded as the log's new end: the damage is still reported next time.
        expect(await readdir(join(copy, 'kv@', 'log-end@')).catch(() => []), where).toEqual([]);
        await rm(copy, { recursive: true, force: true });
        checked++;
      }
    }
    expect(checked).toBe(offsets.length * masks.length);
  }, 120_000);

  it('a tail of zeros (a machine crash kept the file length, not the unsynced bytes) is a torn tail, at any length', async () => {
    const { root, file, bytes, ends } = await crashedWriter();
    for (const zeros of [1, 7, 8, 9, 40, bytes.length - ends.at(-2)!]) {
      const copy = await tempRoot();
      await cp(root, copy, { recursive: true });
      const damaged = new Uint8Array(ends.at(-2)! + zeros);
      damaged.set(bytes.subarray(0, ends.at(-2)!));
      await writeFile(join(copy, file.slice(root.length)), damaged);
      const db = await open(copy);
      expect(await presentKeys(db), `${zeros} zero bytes`).toEqual(Array.from({ length: COMMITS - 1 }, (_, i) => i));
      await db.close();
    }
  });

  it('a flipped byte in the last record is a torn tail: the records before it replay', async () => {
    const { root, file, bytes, ends } = await crashedWriter();
    const damaged = bytes.slice();
    damaged[ends.at(-2)! + 10] ^= 0xff;
    await writeFile(file, damaged);
    const db = await open(root);
    expect(await presentKeys(db)).toEqual(Array.from({ length: COMMITS - 1 }, (_, i) => i));
    await db.close();
  });

  it('a damaged record in a log whose end was recorded at a clean close is CORRUPT_DATA naming the segment', async () => {
    const root = await tempRoot();
    const db = await open(root);
    for (let i = 0; i < 4; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8(`v${i}`) }]);
    await db.close();
    const file = await segmentFile(root);
    const bytes = new Uint8Array(await readFile(file));
    const ends = recordEnds(bytes);
    bytes[ends[2] + 9] ^= 0xff;
    await writeFile(file, bytes);
    const error = await open(root).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTaqubaError(error, 'CORRUPT_DATA'), String(error)).toBe(true);
    expect((error as Error).message).toContain('kv/log/');
  });
});
