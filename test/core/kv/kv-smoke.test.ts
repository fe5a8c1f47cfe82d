import { describe, expect, it } from 'vitest';
import { KvDb } from '../../../src/core/kv/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';

describe('kv smoke', () => {
  it('writes, reads, scans, reopens', async () => {
    const store = new MemoryObjectStore();
    const db = await KvDb.open(store, { memtableBytes: 1024 });
    for (let i = 0; i < 200; i++) await db.transaction((t) => t.put(utf8(`k${String(i).padStart(4, '0')}`), utf8(`v${i}`)));
    expect(fromUtf8((await db.get(utf8('k0007')))!)).toBe('v7');
    const keys: string[] = [];
    for await (const e of db.scan({ prefix: utf8('k00'), limit: 5 })) keys.push(fromUtf8(e.key));
    expect(keys).toEqual(['k0000', 'k0001', 'k0002', 'k0003', 'k0004']);
    await db.close();
    const db2 = await KvDb.open(store, { memtableBytes: 1024 });
    expect(fromUtf8((await db2.get(utf8('k0199')))!)).toBe('v199');
    let n = 0;
    for await (const _ of db2.scan()) n++;
    expect(n).toBe(200);
    await db2.close();
  });
});
