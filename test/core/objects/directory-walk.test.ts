/**
 * The directory walk behind the filesystem and OPFS listings, on a fake platform whose hooks
 * change the tree between a directory read and the reads of its objects (issue 24: a listing
 * missed the newest manifest when it was created after the read and its predecessor deleted
 * before the predecessor's stat).
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { segmentCodec } from '../../../src/core/objects/directory-layout.js';
import { MAX_CHURN_REREADS, walkDirectory, type DirectoryWalkPlatform } from '../../../src/core/objects/directory-walk.js';
import type { ObjectInfo } from '../../../src/core/objects/object-store.js';

const CODEC = segmentCodec(() => true);

/** A tree of directories (names ending in '@') and files, keyed by path ('' the root, 'a@/' below it). */
class FakeTree {
  readonly dirs = new Map<string, Set<string>>([['', new Set()]]);
  reads = new Map<string, number>();
  /** Runs before each object read, with the file's key. */
  beforeObject: (key: string) => void = () => {};

  /** Creates the file for `key` (and its directories). */
  create(key: string): void {
    const segments = key.split('/');
    let dir = '';
    for (const segment of segments.slice(0, -1)) {
      this.dirs.get(dir)!.add(`${segment}@`);
      dir += `${segment}@/`;
      if (!this.dirs.has(dir)) this.dirs.set(dir, new Set());
    }
    this.dirs.get(dir)!.add(segments[segments.length - 1]);
  }

  delete(key: string): void {
    const segments = key.split('/');
    const dir = segments.slice(0, -1).map((s) => `${s}@/`).join('');
    this.dirs.get(dir)?.delete(segments[segments.length - 1]);
  }

  readonly platform: DirectoryWalkPlatform<string, string> = {
    entries: async (dir) => {
      this.reads.set(dir, (this.reads.get(dir) ?? 0) + 1);
      return [...(this.dirs.get(dir) ?? [])];
    },
    name: (entry) => entry,
    isDirectory: (entry) => entry.endsWith('@'),
    subdirectory: (dir, entry) => `${dir}${entry}/`,
    object: async (dir, entry, key) => {
      this.beforeObject(key);
      return this.dirs.get(dir)?.has(entry) ? { key, size: 0, version: 'v' } : undefined;
    },
  };

  async list(prefix = ''): Promise<string[]> {
    const cut = prefix.lastIndexOf('/') + 1;
    const dirKey = prefix.slice(0, cut);
    const dir = dirKey.split('/').slice(0, -1).map((s) => `${s}@/`).join('');
    const keys: string[] = [];
    for await (const info of walkDirectory(this.platform, CODEC, dir, dirKey, prefix.slice(cut), undefined) as AsyncIterable<ObjectInfo>) keys.push(info.key);
    return keys;
  }
}

describe('walkDirectory', () => {
  it('returns the successor of an entry deleted between the directory read and its object read', async () => {
    const tree = new FakeTree();
    tree.create('chain/0001');
    tree.beforeObject = (key) => {
      if (key !== 'chain/0001') return;
      tree.create('chain/0002');
      tree.delete('chain/0001');
    };
    expect(await tree.list('chain/')).toEqual(['chain/0002']);
  });

  it('follows a chain whose successors vanish in turn, yielding in order and never a key twice', async () => {
    const tree = new FakeTree();
    for (const key of ['c/1', 'c/2', 'c/3']) tree.create(key);
    // c/2 goes once c/4 exists; c/4 goes once c/5 exists; c/0 appears behind the walk.
    tree.beforeObject = (key) => {
      if (key === 'c/2') {
        tree.create('c/4');
        tree.delete('c/2');
        tree.create('c/0');
      } else if (key === 'c/4') {
        tree.create('c/5');
        tree.delete('c/4');
      }
    };
    expect(await tree.list('c/')).toEqual(['c/1', 'c/3', 'c/5']);
  });

  it('reads a parent again when an entry vanished below it, for a successor created in the parent', async () => {
    const tree = new FakeTree();
    tree.create('a/z');
    tree.beforeObject = (key) => {
      if (key !== 'a/z') return;
      tree.create('b');
      tree.delete('a/z');
    };
    expect(await tree.list('')).toEqual(['b']);
  });

  it('reads each directory once when nothing vanishes', async () => {
    const tree = new FakeTree();
    for (const key of ['a/1', 'a/2', 'b/c/3', 'd']) tree.create(key);
    tree.beforeObject = (key) => {
      if (key === 'a/1') tree.create('a/0'); // appears behind the walk: no re-read for it
    };
    expect(await tree.list('')).toEqual(['a/1', 'a/2', 'b/c/3', 'd']);
    expect(Object.fromEntries(tree.reads)).toEqual({ '': 1, 'a@/': 1, 'b@/': 1, 'b@/c@/': 1 });
  });

  it('returns keys present for the whole walk while others vanish around them', async () => {
    const tree = new FakeTree();
    const stable = ['s/a', 's/c', 's/e', 's/g'];
    for (const key of [...stable, 's/b', 's/d', 's/f']) tree.create(key);
    tree.beforeObject = (key) => {
      if (key === 's/a') tree.delete('s/b');
      if (key === 's/c') tree.delete('s/d');
      if (key === 's/e') tree.delete('s/f');
    };
    expect(await tree.list('s/')).toEqual(stable);
  });

  it('survives deletions of every entry it first read (garbage collection racing a listing)', async () => {
    const tree = new FakeTree();
    const n = 3 * MAX_CHURN_REREADS;
    const key = (i: number): string => `w/${String(i).padStart(4, '0')}`;
    for (let i = 0; i < n; i++) tree.create(key(i));
    // Every even entry is gone when the walk reaches it: a re-read before each odd one.
    tree.beforeObject = (k) => {
      const i = Number(k.slice(2));
      if (i % 2 === 0) tree.delete(k);
    };
    const listed = await tree.list('w/');
    expect(listed).toEqual(Array.from({ length: n }, (_, i) => key(i)).filter((_, i) => i % 2 === 1));
  });

  it('gives up with STORE_UNAVAILABLE naming the directory when successors keep vanishing', async () => {
    const tree = new FakeTree();
    tree.create('churn/0');
    let next = 1;
    tree.beforeObject = (key) => {
      tree.create(`churn/${next++}`);
      tree.delete(key);
    };
    const error = await tree.list('churn/').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTaqubaError(error, 'STORE_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('directory="churn/"');
    // One re-read allowed for the entry first read, then MAX_CHURN_REREADS for those that appeared.
    expect(tree.reads.get('churn@/')).toBe(1 + 1 + MAX_CHURN_REREADS);
  });
});
