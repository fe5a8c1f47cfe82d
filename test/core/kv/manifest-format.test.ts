/**
 * Manifests are format 2 since writers may watch seal flags (RFC 0002, "Seal flags"): a library
 * that knows only format 1 must refuse such a store, and this one still opens format 1 stores.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { crc32c } from '../../../src/core/checksum.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb } from '../../../src/core/kv/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';

/** Offset of the format version: after the u32 magic. */
const VERSION_AT = 4;

async function storeWithOneKey(): Promise<{ store: MemoryObjectStore; newest: string }> {
  const store = new MemoryObjectStore();
  const db = await KvDb.open(store);
  await db.transaction((t) => t.put(utf8('k'), utf8('v')));
  await db.close();
  const keys: string[] = [];
  for await (const info of store.list('kv/manifest/')) keys.push(info.key);
  return { store, newest: keys.at(-1)! };
}

/** Rewrites the manifest at `key` with another format version, its checksum made right again. */
async function rewriteVersion(store: MemoryObjectStore, key: string, version: number): Promise<void> {
  const bytes = (await store.get(key))!.data.slice();
  bytes[VERSION_AT] = version;
  new DataView(bytes.buffer).setUint32(bytes.length - 4, crc32c(bytes, 0, bytes.length - 4));
  await store.put(key, bytes);
}

describe('manifest format', () => {
  it('writes format 2', async () => {
    const { store, newest } = await storeWithOneKey();
    expect((await store.get(newest))!.data[VERSION_AT]).toBe(2);
  });

  it('opens a store whose newest manifest is format 1 (written before seal flags), and writes format 2 from then on', async () => {
    const { store, newest } = await storeWithOneKey();
    await rewriteVersion(store, newest, 1);
    const db = await KvDb.open(store);
    expect(fromUtf8((await db.get(utf8('k')))!)).toBe('v');
    await db.close();
    const keys: string[] = [];
    for await (const info of store.list('kv/manifest/')) keys.push(info.key);
    expect((await store.get(keys.at(-1)!))!.data[VERSION_AT]).toBe(2);
  });

  it('refuses a newer format with CORRUPT_DATA naming the manifest and the version', async () => {
    const { store, newest } = await storeWithOneKey();
    await rewriteVersion(store, newest, 3);
    const error = await KvDb.open(store).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTaqubaError(error, 'CORRUPT_DATA')).toBe(true);
    expect((error as Error).message).toContain(newest);
    expect((error as Error).message).toContain('unknown format version 3');
  });
});
