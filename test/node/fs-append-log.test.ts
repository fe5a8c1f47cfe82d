/**
 * The filesystem store's append logs (core/objects/append-log.ts) and how the engine picks its
 * WAL path (`wal` option, `appendLogs` store option), with their error paths.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/core/bytes.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { CountingObjectStore } from '../../src/testing/counting-store.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import { FileSystemObjectStore } from '../../src/node/index.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

async function fsStore(options: { appendLogs?: boolean } = {}): Promise<FileSystemObjectStore> {
  const root = await mkdtemp(join(tmpdir(), 'taquba-applog-'));
  roots.push(root);
  return new FileSystemObjectStore({ root, writerLock: false, ...options });
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return isTaqubaError(e) ? e.code : `non-library error: ${String(e)}`;
  }
  return 'no error';
}

async function keys(store: FileSystemObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const info of store.list(prefix)) out.push(info.key);
  return out;
}

describe('filesystem append logs', () => {
  it('creates a log create-only, appends durably and reads back as an object', async () => {
    const store = await fsStore();
    const logs = store.appendLogs!;
    const log = await logs.createLog('a/log/1');
    expect(log.size).toBe(0);
    expect((await store.get('a/log/1'))!.data).toEqual(new Uint8Array(0));
    await log.append(utf8('hello '));
    await log.append(utf8('world'));
    expect(log.size).toBe(11);
    expect(new TextDecoder().decode((await store.get('a/log/1'))!.data)).toBe('hello world');
    expect(await keys(store, 'a/')).toEqual(['a/log/1']);
    expect(await logs.exists('a/log/1')).toBe(true);
    expect(await logs.exists('a/log/2')).toBe(false);
    expect(await codeOf(logs.createLog('a/log/1'))).toBe('PRECONDITION_FAILED');
    await store.put('a/plain', utf8('x'));
    expect(await codeOf(logs.createLog('a/plain'))).toBe('PRECONDITION_FAILED');
    await log.close();
    await log.close(); // twice is fine
    expect(await codeOf(log.append(utf8('late')))).toBe('STORE_UNAVAILABLE');
    expect(await codeOf(logs.createLog('../escape'))).toBe('INVALID_ARGUMENT');
  });

  it('exists answers each time from the disk, for a key asked about again (a seal created between two calls is seen), and refuses bad keys', async () => {
    const store = await fsStore();
    const logs = store.appendLogs!;
    const seal = 'db/wal/log-seal/00000000000000000007';
    expect(await logs.exists(seal)).toBe(false);
    expect(await logs.exists(seal)).toBe(false);
    await store.put(seal, new Uint8Array(0), { ifNoneMatch: '*' });
    expect(await logs.exists(seal)).toBe(true);
    expect(await logs.exists('db/wal/log-seal/00000000000000000008')).toBe(false);
    expect(await logs.exists(seal)).toBe(true);
    await store.delete(seal);
    expect(await logs.exists(seal)).toBe(false);
    expect(await codeOf(logs.exists('db/../escape'))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(logs.exists(''))).toBe('INVALID_ARGUMENT');
    expect(await logs.exists(seal)).toBe(false);
  });

  it('is absent with appendLogs: false, and a non-boolean appendLogs is INVALID_CONFIG', async () => {
    expect((await fsStore({ appendLogs: false })).appendLogs).toBeUndefined();
    expect(await codeOf(() => new FileSystemObjectStore({ root: '/tmp/x', appendLogs: 'yes' as unknown as boolean }))).toBe('INVALID_CONFIG');
  });

  // Issue 24: a string was appended as text, an ArrayBuffer as 0 bytes, a Uint16Array as half of it.
  const notBytes: [string, unknown][] = [
    ['string', 'text'],
    ['ArrayBuffer', new ArrayBuffer(4)],
    ['Uint16Array', new Uint16Array([1, 2])],
    ['DataView', new DataView(new ArrayBuffer(4))],
    ['Array', [1, 2]],
    ['number', 7],
    ['null', null],
    ['undefined', undefined],
  ];

  it('refuses to append data that is not a Uint8Array with INVALID_ARGUMENT, writing nothing', async () => {
    const store = await fsStore();
    const log = await store.appendLogs!.createLog('bad/log');
    await log.append(utf8('ok'));
    for (const [got, data] of notBytes) {
      const error = await log.append(data as Uint8Array).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isTaqubaError(error, 'INVALID_ARGUMENT'), `append of ${got}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toBe(`append data must be a Uint8Array. key=bad/log got=${got}`);
    }
    expect(log.size).toBe(2);
    expect(new TextDecoder().decode((await store.get('bad/log'))!.data)).toBe('ok');
    await log.append(utf8('!')); // the log is still usable
    expect(new TextDecoder().decode((await store.get('bad/log'))!.data)).toBe('ok!');
    await log.close();
    expect(await codeOf(log.append('late' as unknown as Uint8Array))).toBe('INVALID_ARGUMENT');
  });

  it('CountingObjectStore refuses bad append data the same way, counting nothing', async () => {
    const store = new CountingObjectStore(await fsStore());
    const log = await store.appendLogs!.createLog('bad/counted');
    for (const [got, data] of notBytes) {
      const error = await log.append(data as Uint8Array).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isTaqubaError(error, 'INVALID_ARGUMENT'), `append of ${got}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toBe(`append data must be a Uint8Array. key=bad/counted got=${got}`);
    }
    expect(store.snapshot().append).toEqual({ calls: 0, failures: 0, bytes: 0 });
    expect((await store.get('bad/counted'))!.data).toEqual(new Uint8Array(0));
    await log.close();
  });

  it('syncs a log by key (what another process wrote), an absent key included; the counting wrapper forwards it', async () => {
    const store = await fsStore();
    const log = await store.appendLogs!.createLog('s/log');
    await log.append(utf8('abc'));
    await log.close();
    await store.appendLogs!.sync!('s/log');
    await store.appendLogs!.sync!('s/absent');
    expect(new TextDecoder().decode((await store.get('s/log'))!.data)).toBe('abc');
    await new CountingObjectStore(store).appendLogs!.sync!('s/log');
    expect(await codeOf(store.appendLogs!.sync!('bad//key'))).toBe('INVALID_ARGUMENT');
  });

  it('CountingObjectStore forwards append logs and counts each append', async () => {
    const store = new CountingObjectStore(await fsStore());
    expect(new CountingObjectStore(new MemoryObjectStore()).appendLogs).toBeUndefined();
    const log = await store.appendLogs!.createLog('c/log');
    await log.append(utf8('12345'));
    await log.append(utf8('678'));
    expect(log.size).toBe(8);
    expect(store.snapshot().append).toEqual({ calls: 2, failures: 0, bytes: 8 });
    expect(store.snapshot().put.calls).toBe(1);
    await log.close();
  });
});

describe('the engine picks its WAL path', () => {
  it("uses a log by default on the filesystem, WAL objects with wal: 'objects' or without append logs", async () => {
    for (const [options, storeOptions, expectLog] of [
      [{}, {}, true],
      [{ wal: 'log' as const }, {}, true],
      [{ wal: 'objects' as const }, {}, false],
      [{}, { appendLogs: false }, false],
    ] as const) {
      const store = await fsStore(storeOptions);
      const db = await KvDb.open(store, options);
      for (let i = 0; i < 5; i++) await db.write([{ type: 'put', key: utf8(`k${i}`), value: utf8('v'.repeat(40)) }]);
      const logKeys = await keys(store, 'kv/log/');
      const walObjects: string[] = [];
      for (const key of await keys(store, 'kv/wal/')) if ((await store.get(key))!.data.length > 40) walObjects.push(key); // more than an empty fence
      expect(logKeys.length > 0, `log segments with ${JSON.stringify([options, storeOptions])}`).toBe(expectLog);
      expect(walObjects.length > 0, `WAL objects with commits with ${JSON.stringify([options, storeOptions])}`).toBe(!expectLog);
      await db.close();
      // Either way, a reopen (on the other path too) sees every commit.
      const other = await KvDb.open(store, { wal: expectLog ? 'objects' : 'auto' });
      for (let i = 0; i < 5; i++) expect(await other.get(utf8(`k${i}`))).toBeDefined();
      await other.close();
    }
  });

  it("rejects wal: 'log' on a store without append logs and unknown wal values with INVALID_CONFIG", async () => {
    expect(await codeOf(KvDb.open(new MemoryObjectStore(), { wal: 'log' }))).toBe('INVALID_CONFIG');
    expect(await codeOf(KvDb.open(new MemoryObjectStore(), { wal: 'disk' as 'log' }))).toBe('INVALID_CONFIG');
    const error = await KvDb.open(new MemoryObjectStore(), { wal: 'disk' as 'log' }).catch((e: Error) => e);
    expect((error as Error).message).toContain('wal must be one of auto, log, objects');
  });

  it('replays across WAL paths in epoch order: objects, then a log, then objects again', async () => {
    const store = await fsStore();
    const paths = ['objects', 'log', 'objects', 'log'] as const;
    for (let round = 0; round < paths.length; round++) {
      const db = await KvDb.open(store, { wal: paths[round], mergeOperator: (_k, existing, operand) => utf8(`${existing ? new TextDecoder().decode(existing) : ''}${new TextDecoder().decode(operand)}`) });
      await db.write([{ type: 'merge', key: utf8('chain'), value: utf8(String(round)) }]);
      // Left open: the next writer fences this one and replays its WAL, whichever path it used.
    }
    const db = await KvDb.open(store, { mergeOperator: (_k, existing, operand) => utf8(`${existing ? new TextDecoder().decode(existing) : ''}${new TextDecoder().decode(operand)}`) });
    expect(new TextDecoder().decode((await db.get(utf8('chain')))!)).toBe('0123');
    await db.close();
  });
});
