/**
 * The KV engine on S3: the shared engine suite, plus what only a network store does to it (two
 * processes on one prefix, lost answers, throttling, a connection dropped mid-flush).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { describeKvEngineSuite } from '../../core/kv/kv-engine.suite.js';
import { S3_EXTERNAL, openS3Target, type S3Target } from '../../setup/s3-target.js';
import { waitFor } from '../../support/wait.js';

let target: S3Target;
beforeAll(async () => {
  target = await openS3Target();
});
afterAll(async () => {
  await target?.close();
});

// Every test gets a store on a fresh prefix of the one bucket.
describeKvEngineSuite('s3', async () => ({ store: target.newStore() }), { modelSteps: 300 });

const k = utf8;
const text = (v: Uint8Array | undefined): string | undefined => (v === undefined ? undefined : fromUtf8(v));
const code = (e: unknown): string => (isTaqubaError(e) ? e.code : String(e));

describe('kv engine on s3: two processes on one prefix', () => {
  /**
   * Writer A commits in a loop (pausing `pauseMs` between commits) until it is fenced; writer B
   * opens on the same prefix through its own client, as another process would, and commits too.
   * Every write either acknowledged must survive, and A must end FENCED.
   */
  async function twoWriters(pauseMs: number): Promise<void> {
    const prefix = target.newStore().prefix;
    const a = await KvDb.open(target.newStore({ prefix }));
    const acked: string[] = [];
    let fencedA: unknown;
    let stop = false;
    const writerA = (async () => {
      for (let i = 0; fencedA === undefined && !stop; i++) {
        await a.write([{ type: 'put', key: k(`a${i}`), value: k('A') }]).then(
          () => acked.push(`a${i}`),
          (e: unknown) => (fencedA = e),
        );
        // Real time is the subject: A commits at a steady pace (pauseMs apart) while B opens.
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
    await waitFor(() => acked.length >= 5 || fencedA !== undefined, 'writer A acknowledging 5 commits');
    expect(fencedA, 'writer A failed before B opened').toBeUndefined();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const opening = KvDb.open(target.newStore({ prefix }));
    // A bound, not a wait: the newer writer must open within 5 s while A keeps committing.
    const opened = await Promise.race([opening, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 5000)))]);
    clearTimeout(timer);
    stop = true;
    await writerA;
    if (opened === undefined) await (await opening).close(); // it finishes once A stops
    expect(opened, 'the newer writer opened within 5 s').toBeDefined();
    const b = opened!;
    for (let i = 0; i < 10; i++) {
      await b.write([{ type: 'put', key: k(`b${i}`), value: k('B') }]);
      acked.push(`b${i}`);
    }
    expect(code(fencedA ?? (await a.write([{ type: 'put', key: k('late'), value: k('A') }]).catch((e: unknown) => e)))).toBe('FENCED');
    await b.close();
    await a.close().catch(() => undefined);
    const check = await KvDb.open(target.newStore({ prefix }));
    for (const key of acked) expect(text(await check.get(k(key))), key).toBe(key[0].toUpperCase());
    expect(await check.get(k('late'))).toBeUndefined();
    await check.close();
  }

  it('the older writer, committing steadily, is fenced; every acknowledged write of both survives', () => twoWriters(20));

  it('a newer writer opens while the older one commits back to back', () => twoWriters(0));
});

describe.skipIf(S3_EXTERNAL)('kv engine on s3: injected network faults', () => {
  it('a WAL put whose answer is lost is retried, recognised as landed, and acknowledged once', async () => {
    const store = target.newStore({ requestTimeoutMs: 500 });
    const db = await KvDb.open(store);
    const drop = target.server!.injectFault({ type: 'drop', when: 'after', method: 'PUT', keyPrefix: `${store.prefix}kv/wal/` });
    await db.write([{ type: 'put', key: k('x'), value: k('1') }]);
    expect(drop.fired).toBe(1);
    await db.write([{ type: 'put', key: k('y'), value: k('2') }]);
    await db.close();
    const reopened = await KvDb.open(store);
    expect([text(await reopened.get(k('x'))), text(await reopened.get(k('y')))]).toEqual(['1', '2']);
    await reopened.close();
  });

  it('throttling and hangs sprinkled over a workload are retried transparently', async () => {
    const store = target.newStore({ requestTimeoutMs: 300 });
    const db = await KvDb.open(store, { memtableBytes: 1024, blockBytes: 256 });
    const server = target.server!;
    const slow = server.injectFault({ type: 'status', status: 503, every: 3, count: 40, keyPrefix: store.prefix });
    const hang = server.injectFault({ type: 'hang', every: 25, count: 3, keyPrefix: store.prefix });
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 15; i++) await db.write([{ type: 'put', key: k(`w${w}-${i}`), value: k('v'.repeat(60)) }]);
      }),
    );
    expect(slow.fired).toBeGreaterThan(10);
    expect(hang.fired).toBeGreaterThan(0);
    slow.remove();
    hang.remove();
    await db.close();
    const reopened = await KvDb.open(store);
    let n = 0;
    for await (const _ of reopened.scan({ prefix: k('w') })) n++;
    expect(n).toBe(60);
    await reopened.close();
  });

  it('a connection dropped during a WAL flush fails the engine closed; reopening recovers every acknowledged write', async () => {
    const store = target.newStore({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const db = await KvDb.open(store);
    for (let i = 0; i < 10; i++) await db.write([{ type: 'put', key: k(`acked${i}`), value: k('1') }]);
    const drop = target.server!.injectFault({ type: 'drop', count: Infinity, method: 'PUT', keyPrefix: `${store.prefix}kv/wal/` });
    // A group of concurrent commits shares the WAL put that never lands: all of them reject.
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => db.write([{ type: 'put', key: k(`lost${i}`), value: k('1') }])));
    drop.remove();
    expect(results.map((r) => (r.status === 'rejected' ? code(r.reason) : 'ok'))).toEqual(Array(8).fill('STORE_UNAVAILABLE'));
    expect(code(await db.get(k('acked0')).catch((e: unknown) => e))).toBe('CLOSED');
    await db.close().catch(() => undefined);
    const reopened = await KvDb.open(store);
    for (let i = 0; i < 10; i++) expect(text(await reopened.get(k(`acked${i}`)))).toBe('1');
    for (let i = 0; i < 8; i++) expect(await reopened.get(k(`lost${i}`))).toBeUndefined();
    await reopened.write([{ type: 'put', key: k('after'), value: k('1') }]);
    await reopened.close();
  });

  it('a connection dropped during a memtable flush fails the engine closed; reopening recovers every acknowledged write', async () => {
    const store = target.newStore({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const opts = { memtableBytes: 1024, blockBytes: 256 };
    const db = await KvDb.open(store, opts);
    const drop = target.server!.injectFault({ type: 'drop', count: Infinity, method: 'PUT', keyPrefix: `${store.prefix}kv/sst/` });
    const acked: number[] = [];
    let failure: unknown;
    for (let i = 0; i < 400 && failure === undefined; i++) {
      await db.write([{ type: 'put', key: k(`f${String(i).padStart(4, '0')}`), value: k('w'.repeat(30)) }]).then(
        () => acked.push(i),
        (e: unknown) => (failure = e),
      );
    }
    drop.remove();
    expect(drop.fired).toBeGreaterThan(0);
    expect(['STORE_UNAVAILABLE', 'CLOSED']).toContain(code(failure));
    await db.close().catch(() => undefined);
    const reopened = await KvDb.open(store, opts);
    for (const i of acked) expect(text(await reopened.get(k(`f${String(i).padStart(4, '0')}`)))).toBe('w'.repeat(30));
    await reopened.close();
  });
});
