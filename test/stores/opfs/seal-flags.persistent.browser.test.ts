/**
 * Seal flags on OPFS on disk (persistent profile): the `browser` project's OPFS suites run in an
 * incognito context, where Chromium keeps OPFS in memory behind another file delegate. Here a
 * writer in one dedicated worker holds its epoch's flag open while a newer writer in a second
 * worker opens the same directory and raises it; the older writer's next commit is FENCED, and
 * everything it acknowledged before is there for the newer one.
 *
 * Runs in the `browser-persistent` project; the `browser` project skips it.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { OpfsWorkerClient } from './opfs-worker-client.js';

declare module 'vitest' {
  interface ProvidedContext {
    persistentProfile?: boolean;
  }
}

const first = new OpfsWorkerClient();
const second = new OpfsWorkerClient();
const directory = `taquba-test/seal-flags-${Date.now().toString(36)}`;

afterAll(async () => {
  await first.call('deleteDirectory', directory).catch(() => undefined);
  first.terminate();
  second.terminate();
});

describe.skipIf(!inject('persistentProfile'))('seal flags on OPFS on disk (persistent profile)', () => {
  it('a newer writer in another worker raises the older one’s flag while it is held: the older is FENCED, nothing it acknowledged is lost', async () => {
    const older = await KvDb.open(await first.open(directory));
    for (let i = 0; i < 20; i++) await older.transaction((t) => t.put(utf8(`k${i}`), utf8(`older-${i}`)));

    const otherStore = await second.open(directory);
    const newer = await KvDb.open(otherStore);
    // The older writer's epoch flag was raised on disk while its worker held it open.
    const flags: string[] = [];
    for await (const info of otherStore.list('kv/log-flag/')) flags.push(info.key);
    const raised = await Promise.all(flags.map(async (key) => (await otherStore.get(key))!.data));
    expect(raised.map((bytes) => Array.from(bytes))).toEqual([[1], []]);

    const late = await older.transaction((t) => t.put(utf8('late'), utf8('never'))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTaqubaError(late, 'FENCED'), String(late)).toBe(true);
    for (let i = 0; i < 20; i++) expect(fromUtf8((await newer.get(utf8(`k${i}`)))!)).toBe(`older-${i}`);
    expect(await newer.get(utf8('late'))).toBeUndefined();
    await older.close().catch(() => undefined);
    await newer.close();
  });
});
