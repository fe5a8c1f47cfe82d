import { describe, expect, it } from 'vitest';
import { fromUtf8, toBinaryString, utf8 } from '../../../src/core/bytes.js';
import type { VersionedEntry } from '../../../src/core/kv/entry.js';
import { Memtable } from '../../../src/core/kv/memtable.js';

const put = (key: string, seq: number, value = `v${seq}`): VersionedEntry => ({ key: utf8(key), seq, kind: 'put', value: utf8(value) });
const del = (key: string, seq: number): VersionedEntry => ({ key: utf8(key), seq, kind: 'delete', value: new Uint8Array(0) });
const id = (key: string): string => toBinaryString(utf8(key));

function seekAll(m: Memtable): string[] {
  const out: string[] = [];
  for (let at = m.seek(undefined, false); at; at = m.seek(at[0], true)) out.push(fromUtf8(at[1].key));
  return out;
}

describe('Memtable', () => {
  it('keeps one slot per key: a write to an existing key adds a version in place, newest first', () => {
    const m = new Memtable(undefined);
    m.add(put('b', 1), 0);
    m.add(put('a', 2), 0);
    m.add(del('b', 3), 0); // floor 0: an open snapshot still needs the older versions
    m.add(put('b', 4), 0);
    expect(m.size).toBe(2);
    expect(m.versions(id('b'))!.map((v) => v.seq)).toEqual([4, 3, 1]);
    expect(m.versions(id('b'))![1].kind).toBe('delete');
    expect(m.versions(id('a'))!.map((v) => v.seq)).toEqual([2]);
    expect(m.versions(id('c'))).toBeUndefined();
    expect(seekAll(m)).toEqual(['a', 'b']);
    expect([...m.newestVersions()].map((e) => [fromUtf8(e.key), e.seq])).toEqual([['a', 2], ['b', 4]]);
  });

  it('prunes versions below the oldest open snapshot when a key is written again', () => {
    const m = new Memtable(undefined);
    m.add(put('k', 1), 1);
    m.add(put('k', 2), 1);
    m.add(put('k', 3), 1);
    // Snapshot 1 still needs seq 1; seq 2 and 3 are newer.
    expect(m.versions(id('k'))!.map((v) => v.seq)).toEqual([3, 2, 1]);
    const before = m.bytes;
    m.add(put('k', 4), 3);
    // Only seq 3 (the newest at or below the floor) and 4 remain; the dropped ones are uncharged.
    expect(m.versions(id('k'))!.map((v) => v.seq)).toEqual([4, 3]);
    expect(m.bytes).toBeLessThan(before + 2 + 48);
    expect(m.size).toBe(1);
  });

  it('charges a new key more than a new version of an existing one (its key)', () => {
    const m = new Memtable(undefined);
    m.add(put('key', 1, 'x'), 0);
    const first = m.bytes;
    m.add(put('key', 2, 'x'), 0);
    const second = m.bytes - first;
    expect(first).toBeGreaterThan(second);
    expect(second).toBeGreaterThan(0);
  });

  it('many keys, written twice each in scattered order: sizes, lookups and order agree', () => {
    const m = new Memtable(undefined);
    const n = 3000;
    const key = (i: number): string => `k${String((i * 7919) % n).padStart(5, '0')}`;
    for (let i = 0; i < n; i++) m.add(put(key(i), i + 1), i + 1);
    for (let i = 0; i < n; i++) m.add(del(key(i), n + i + 1), n + i + 1);
    expect(m.size).toBe(n);
    for (let i = 0; i < n; i += 97) {
      const v = m.versions(id(key(i)))!;
      expect(v).toHaveLength(1); // the floor moved with every write: only the newest is kept
      expect(v[0].kind).toBe('delete');
    }
    const sorted = seekAll(m);
    expect(sorted).toHaveLength(n);
    expect([...sorted].sort()).toEqual(sorted);
  });
});
