import { spawn, spawnSync } from 'node:child_process';
import { promises as fsp, unlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isTaqubaError } from '../../src/core/errors.js';
import { TEMP_DIRECTORY, TEMP_PREFIX } from '../../src/node/temp-files.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { toStoreError } from '../../src/node/fs-store.js';
import { describeObjectStoreConformance, rejectionCode } from '../core/objects/object-store.conformance.js';
import { nodeScript } from '../support/node-script.js';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

async function tempRoot(): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), 'taquba-fs-store-'));
}

async function keys(store: FileSystemObjectStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const info of store.list(prefix)) out.push(info.key);
  return out;
}

/** Every file path under `dir`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describeObjectStoreConformance('FileSystemObjectStore', async () => {
  const root = await tempRoot();
  return {
    // A root that does not exist yet: the first put must create it.
    store: new FileSystemObjectStore({ root: path.join(root, 'store') }),
    cleanup: () => fsp.rm(root, { recursive: true, force: true }),
  };
});

describe('FileSystemObjectStore', () => {
  let root: string;
  let store: FileSystemObjectStore;

  beforeEach(async () => {
    root = await tempRoot();
    store = new FileSystemObjectStore({ root });
  });
  afterEach(async () => {
    await fsp.rm(root, { recursive: true, force: true });
  });

  it('lays keys out as encoded directories and files under the root', async () => {
    await store.put('db/wal/00000001.wal', text('w'));
    await store.put('db/Manifest', text('m'));
    await store.put('db', text('top'));
    expect(await filesUnder(root)).toEqual([path.join('db'), path.join('db@', '%4danifest'), path.join('db@', 'wal@', '00000001.wal')].sort());
  });

  it('reads a file truncated on disk back as the truncated bytes (checksums above catch it)', async () => {
    await store.put('t/obj', text('0123456789'));
    await fsp.truncate(path.join(root, 't@', 'obj'), 4);
    expect(fromText((await store.get('t/obj'))!.data)).toBe('0123');
    expect(fromText((await store.get('t/obj', { range: { offset: 2, length: 8 } }))!.data)).toBe('23');
    expect(await keys(store)).toEqual(['t/obj']);
  });

  it('never lists temp files, foreign names, symlinks or unencoded directories', async () => {
    await store.put('l/a', text('a'));
    const dir = path.join(root, 'l@');
    await fsp.writeFile(path.join(dir, '.tmp-123-0-abcd'), 'partial');
    await fsp.writeFile(path.join(dir, 'UPPER'), 'not written by the store');
    await fsp.writeFile(path.join(dir, '%61'), 'non-canonical encoding of a');
    await fsp.mkdir(path.join(dir, 'plain-dir'));
    await fsp.writeFile(path.join(dir, 'plain-dir', 'x'), 'x');
    await fsp.symlink(path.join(dir, 'a'), path.join(dir, 'link'));
    expect(await keys(store)).toEqual(['l/a']);
  });

  it('a listing deletes the temp files of dead processes, never those of a live one', async () => {
    await store.put('s/a', text('a'));
    const dir = path.join(root, 's@');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    await fsp.writeFile(path.join(dir, `.tmp-${dead}-0-dead`), 'partial');
    await fsp.writeFile(path.join(dir, `.tmp-${process.pid}-9-live`), 'in flight');
    await fsp.writeFile(path.join(dir, '.tmp-notapid'), 'foreign');
    expect(await keys(store)).toEqual(['s/a']);
    expect((await fsp.readdir(dir)).sort()).toEqual([`.tmp-${process.pid}-9-live`, '.tmp-notapid', 'a']);
  });

  it('leaves no temp file behind after puts, failed preconditions and deletes', async () => {
    await store.put('c/x', text('1'), { ifNoneMatch: '*' });
    await rejectionCode(store.put('c/x', text('2'), { ifNoneMatch: '*' }));
    const { version } = await store.put('c/x', text('3'));
    await rejectionCode(store.put('c/x', text('4'), { ifMatch: 'stale' }));
    await store.put('c/x', text('5'), { ifMatch: version });
    await store.put('c/y', text('6'));
    await store.delete('c/y');
    expect(await filesUnder(root)).toEqual([path.join('c@', 'x')]);
    expect(await keys(store)).toEqual(['c/x']);
    expect(await store.get('c/x')).toMatchObject({ data: text('5') });
  });

  it('a root removed under the store: the next put recreates the directories', async () => {
    await store.put('w/1', text('1'), { ifNoneMatch: '*' });
    await store.put('w/2', text('2'), { ifNoneMatch: '*' });
    await fsp.rm(root, { recursive: true, force: true });
    await store.put('w/3', text('3'), { ifNoneMatch: '*' });
    expect(await keys(store)).toEqual(['w/3']);
    expect(await store.get('w/3')).toMatchObject({ data: text('3') });
  });

  it('leaves no temp file in any key directory, whatever directories the puts go to', async () => {
    await store.put('plain/a', text('a'));
    await store.put('plain/b', text('b'));
    for (let d = 0; d < 8; d++) {
      await store.put(`d${d}/a`, text('a'), { ifNoneMatch: '*' });
      await store.put(`d${d}/b`, text('b'), { ifNoneMatch: '*' });
    }
    expect((await filesUnder(root)).filter((f) => path.basename(f).startsWith(TEMP_PREFIX))).toEqual([]);
    expect((await keys(store)).length).toBe(18);
  });

  it('never touches a path outside the root', async () => {
    const outside = path.join(path.dirname(root), `${path.basename(root)}-sibling`);
    for (const key of ['../escape', `..${path.sep}escape`, '/etc/passwd', 'a/../../escape', '..']) {
      expect(await rejectionCode(store.put(key, text('x')))).toBe('INVALID_ARGUMENT');
    }
    // Encoded names never contain a separator or start with '.', so odd keys stay inside.
    await store.put('..%2f..%2fescape/…/x', text('inside'));
    await store.put('.hidden', text('inside'));
    await expect(fsp.stat(outside)).rejects.toThrow();
    expect(await keys(store)).toEqual(['..%2f..%2fescape/…/x', '.hidden']);
    for (const file of await filesUnder(root)) expect(path.resolve(root, file).startsWith(root + path.sep)).toBe(true);
  });

  it('rejects a key segment too long for the filesystem with INVALID_ARGUMENT', async () => {
    expect(await rejectionCode(store.put(`long/${'x'.repeat(300)}`, text('x')))).toBe('INVALID_ARGUMENT');
    expect(await rejectionCode(store.get(`${'é'.repeat(100)}`))).toBe('INVALID_ARGUMENT');
  });

  it('maps ENOTDIR (a file where the root should be) to STORE_UNAVAILABLE with the errno and cause', async () => {
    const fileRoot = path.join(root, 'not-a-dir');
    await fsp.writeFile(fileRoot, 'x');
    const broken = new FileSystemObjectStore({ root: fileRoot });
    try {
      await broken.put('db/manifest', text('x'));
      expect.unreachable();
    } catch (e) {
      expect(isTaqubaError(e, 'STORE_UNAVAILABLE')).toBe(true);
      expect((e as Error).message).toBe('put failed. key=db/manifest errno=ENOTDIR');
      expect((e as { details: unknown }).details).toEqual({ op: 'put', errno: 'ENOTDIR' });
      expect(((e as Error).cause as { code: string }).code).toBe('ENOTDIR');
    }
    expect(await rejectionCode(broken.get('db/manifest'))).toBe('STORE_UNAVAILABLE');
  });

  it('maps a file standing where a key directory should be to STORE_UNAVAILABLE', async () => {
    await fsp.writeFile(path.join(root, 'a@'), 'tampered');
    expect(await rejectionCode(store.put('a/b', text('x')))).toBe('STORE_UNAVAILABLE');
    expect(await rejectionCode(store.get('a/b'))).toBe('STORE_UNAVAILABLE');
  });

  it('maps quota, space and permission errnos to STORE_PERMISSION and others to STORE_UNAVAILABLE', () => {
    for (const errno of ['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']) {
      const cause = Object.assign(new Error('boom'), { code: errno });
      const e = toStoreError('put', 'key=k', cause);
      expect(isTaqubaError(e, 'STORE_PERMISSION')).toBe(true);
      expect(e.message).toBe(`put failed. key=k errno=${errno}`);
      expect(e.cause).toBe(cause);
    }
    for (const errno of ['EIO', 'EMFILE', undefined]) {
      expect(isTaqubaError(toStoreError('get', 'key=k', Object.assign(new Error('boom'), { code: errno })), 'STORE_UNAVAILABLE')).toBe(true);
    }
  });

  it('creates the root and nested directories on the first put', async () => {
    const nested = new FileSystemObjectStore({ root: path.join(root, 'x', 'y') });
    expect(await nested.get('a/b')).toBeUndefined();
    expect(await keys(nested)).toEqual([]);
    await nested.put('a/b/c', text('deep'));
    expect(fromText((await nested.get('a/b/c'))!.data)).toBe('deep');
  });

  it('leaves empty directories after a delete and still lists correctly', async () => {
    await store.put('e/f/g', text('x'));
    await store.delete('e/f/g');
    expect((await fsp.stat(path.join(root, 'e@', 'f@'))).isDirectory()).toBe(true);
    expect(await keys(store)).toEqual([]);
    await store.put('e/f/g', text('again'), { ifNoneMatch: '*' });
    expect(await keys(store)).toEqual(['e/f/g']);
  });

  it('two store instances on one root serialize compare-and-swap', async () => {
    const other = new FileSystemObjectStore({ root: `${root}${path.sep}` });
    await store.put('shared/counter', text('0'));
    const increment = async (s: FileSystemObjectStore): Promise<void> => {
      for (let done = 0; done < 15; ) {
        const cur = (await s.get('shared/counter'))!;
        try {
          await s.put('shared/counter', text(String(Number(fromText(cur.data)) + 1)), { ifMatch: cur.version });
          done++;
        } catch (e) {
          if (!isTaqubaError(e, 'PRECONDITION_FAILED')) throw e;
        }
      }
    };
    await Promise.all([increment(store), increment(other), increment(store), increment(other)]);
    expect(fromText((await other.get('shared/counter'))!.data)).toBe('60');
  });

  it('two store instances on one root: exactly one create-only put wins', async () => {
    const other = new FileSystemObjectStore({ root });
    const results = await Promise.allSettled([store, other, store, other].map((s, i) => s.put('shared/once', text(String(i)), { ifNoneMatch: '*' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('versions never repeat even when inode numbers are reused', async () => {
    // Each put frees the previous inode, which the next temp file may get; versions must still differ.
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add((await store.put('v/k', text('same'))).version);
    expect(seen.size).toBe(200);
  });

  it('a version read back after reopening equals the one put returned', async () => {
    const { version } = await store.put('r/k', text('x'));
    const reopened = new FileSystemObjectStore({ root });
    expect((await reopened.get('r/k'))!.version).toBe(version);
    const listed = [];
    for await (const info of reopened.list('r/')) listed.push(info);
    expect(listed).toEqual([{ key: 'r/k', size: 1, version }]);
  });

  it('rejects a missing root option with INVALID_CONFIG', () => {
    expect(() => new FileSystemObjectStore({ root: '' })).toThrowError(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });

  // Issue 24: these were accepted silently (the lock then ran with its defaults).
  it('rejects writerLock and appendLogs values that are not their documented types with INVALID_CONFIG', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ writerLock: 'off' }, 'writerLock must be false or an object of lock options (staleMs, onCompromised). option=writerLock value="off"'],
      [{ writerLock: true }, 'writerLock must be false or an object of lock options (staleMs, onCompromised). option=writerLock value=true'],
      [{ writerLock: null }, 'writerLock must be false or an object of lock options (staleMs, onCompromised). option=writerLock value=null'],
      [{ writerLock: [] }, 'writerLock must be false or an object of lock options (staleMs, onCompromised). option=writerLock value=Array'],
      [{ writerLock: { stale: 1 } }, 'unknown writerLock option. option="stale" did_you_mean=staleMs'],
      [{ writerLock: { staleMs: -1 } }, 'writerLock.staleMs must not be negative. option=writerLock.staleMs value=-1'],
      [{ writerLock: { staleMs: 'x' } }, 'writerLock.staleMs must be a number, not string. option=writerLock.staleMs value=x'],
      [{ writerLock: { staleMs: Number.NaN } }, 'writerLock.staleMs must be a number, not NaN. option=writerLock.staleMs value=NaN'],
      [{ writerLock: { staleMs: Infinity } }, 'writerLock.staleMs must be finite. option=writerLock.staleMs value=Infinity'],
      [{ writerLock: { onCompromised: 'log' } }, 'writerLock.onCompromised must be a function, not string. option=writerLock.onCompromised'],
      [{ writerLock: { onCompromised: null } }, 'writerLock.onCompromised must be a function, not null. option=writerLock.onCompromised'],
      [{ appendLogs: 'yes' }, 'appendLogs must be a boolean. option=appendLogs value=yes'],
      [{ appendLogs: 0 }, 'appendLogs must be a boolean. option=appendLogs value=0'],
    ];
    for (const [options, message] of cases) {
      let error: unknown;
      try {
        new FileSystemObjectStore({ root, ...options } as unknown as ConstructorParameters<typeof FileSystemObjectStore>[0]);
      } catch (e) {
        error = e;
      }
      expect(isTaqubaError(error, 'INVALID_CONFIG'), `${JSON.stringify(options)}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toBe(message);
    }
    // Every documented form still works.
    for (const writerLock of [undefined, false, {}, { staleMs: 0 }, { staleMs: 5000, onCompromised: () => {} }] as const) {
      expect(new FileSystemObjectStore({ root, writerLock, appendLogs: true }).root).toBe(path.resolve(root));
    }
  });

  // Issue 24: a listing read the directory, the writer created manifest n+1 and deleted n, and
  // the stat of n found it gone: the listing returned no manifest at all. The writer here works
  // like one in another process without fsyncs: each step creates the successor and deletes the
  // predecessor at once, a step a millisecond, while the listings' directory reads and stats run
  // on the thread pool.
  it('listings racing a writer that replaces its newest key always return it or a newer one', async () => {
    const key = (n: number): string => `db/manifest/${String(n).padStart(20, '0')}`;
    await store.put(key(0), text('0'));
    const dir = path.join(root, 'db@', 'manifest@');
    let newest = 0;
    let writing = true;
    const problems: string[] = [];
    let listings = 0;
    const writer = (async () => {
      try {
        // At least 300 steps, and on until the listings made 300 passes (a loaded machine runs
        // fewer of them per step); the cap only stops a run that could never get there.
        for (let n = 0; (n < 300 || listings < 300) && n < 30_000; n++) {
          writeFileSync(path.join(dir, key(n + 1).slice('db/manifest/'.length)), 'm', { flag: 'wx' });
          newest = n + 1;
          unlinkSync(path.join(dir, key(n).slice('db/manifest/'.length)));
          // Real time is the subject: a step a millisecond, so the listings' thread-pool reads interleave with it.
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      } finally {
        writing = false;
      }
    })();
    const lister = async (): Promise<void> => {
      while (writing) {
        const floor = key(newest);
        const listed = await keys(store, 'db/manifest/');
        listings++;
        const last = listed[listed.length - 1];
        if (last === undefined || last < floor) problems.push(`${JSON.stringify(listed)} after ${floor}`);
      }
    };
    await Promise.all([writer, lister(), lister(), lister(), lister()]);
    expect(problems).toEqual([]);
    expect(listings).toBeGreaterThanOrEqual(300);
  });
});

/** The pid of a process that has exited (so no live process has it, unless it is reused). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/**
 * Starts the put writer on `root`, kills it with SIGKILL once a temp file of its own holds bytes
 * (a put caught mid-write), and resolves with its pid and the keys whose puts it acknowledged.
 */
function killMidPut(root: string): Promise<{ pid: number; acked: string[] }> {
  const writer = fileURLToPath(new URL('./fs-store-put-writer.ts', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeScript(writer), root], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid!;
    const acked: string[] = [];
    let buffer = '';
    let stderr = '';
    let polling: ReturnType<typeof setInterval> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
      // Wait for a few acknowledged puts (so the create-only puts keep a spare), then watch the
      // temp directory for a temp file of the child that is being written.
      if (acked.length >= 6 && polling === undefined) {
        polling = setInterval(() => {
          const tempDir = path.join(root, TEMP_DIRECTORY);
          void fsp.readdir(tempDir).then(async (names) => {
            for (const name of names.filter((n) => n.startsWith(`${TEMP_PREFIX}${pid}-`))) {
              const size = (await fsp.stat(path.join(tempDir, name)).catch(() => undefined))?.size ?? 0;
              if (size > 0) child.kill('SIGKILL');
            }
          });
        }, 1);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code, signal) => {
      clearInterval(polling);
      if (signal === 'SIGKILL') resolve({ pid, acked });
      else reject(new Error(`writer exited on its own: code=${code} ${stderr}`));
    });
  });
}

// Issue #12: temp files were swept only from directories that get listed, so memo directories
// and the root kept one `.tmp-*` per kill -9 forever.
describe('FileSystemObjectStore temp files of crashed puts', () => {
  let root: string;

  beforeEach(async () => {
    root = await tempRoot();
  });
  afterEach(async () => {
    await fsp.rm(root, { recursive: true, force: true });
  });

  it('a put killed with SIGKILL leaves its temp file only in the temp directory; a new store removes it at its first call', async () => {
    const tempDir = path.join(root, TEMP_DIRECTORY);
    // The kill can land just after the child renamed the temp file it was seen writing (a loaded
    // machine delays it): then nothing is left to sweep, so kill another writer, on an empty root
    // (its create-only puts would find the first writer's objects).
    let killed: { pid: number; acked: string[] } | undefined;
    let left: string[] = [];
    for (let attempt = 0; attempt < 5 && left.length === 0; attempt++) {
      if (attempt > 0) {
        await fsp.rm(root, { recursive: true, force: true });
        await fsp.mkdir(root);
      }
      killed = await killMidPut(root);
      left = (await fsp.readdir(tempDir)).filter((n) => n.startsWith(`${TEMP_PREFIX}${killed!.pid}-`));
    }
    expect(left.length).toBeGreaterThan(0);
    const { acked } = killed!;
    expect((await filesUnder(root)).filter((f) => path.basename(f).startsWith(TEMP_PREFIX) && path.dirname(f) !== TEMP_DIRECTORY)).toEqual([]);
    const live = path.join(tempDir, `${TEMP_PREFIX}${process.pid}-0-live`);
    await fsp.writeFile(live, 'in flight');

    const store = new FileSystemObjectStore({ root });
    const memo = acked.find((k) => k.startsWith('wf-memo/'))!;
    expect((await store.get(memo))?.data.length).toBe(8 * 1024 * 1024); // the first call starts the sweep
    await vi.waitFor(async () => expect((await fsp.readdir(tempDir)).sort()).toEqual([path.basename(live)]));
    for (const key of acked) expect(await store.get(key), key).toBeDefined();
  });

  it('the first call sweeps the temp directory: dead processes\' temp files go, live and foreign ones stay', async () => {
    const tempDir = path.join(root, TEMP_DIRECTORY);
    await fsp.mkdir(tempDir);
    const dead = deadPid();
    const names = [`${TEMP_PREFIX}${dead}-0-a`, `${TEMP_PREFIX}${dead}-1-b`, `${TEMP_PREFIX}${process.pid}-9-live`, `${TEMP_PREFIX}notapid`];
    for (const name of names) await fsp.writeFile(path.join(tempDir, name), 'partial');
    const store = new FileSystemObjectStore({ root });
    expect(await store.sweepTempFiles()).toBe(2);
    expect((await fsp.readdir(tempDir)).sort()).toEqual([`${TEMP_PREFIX}${process.pid}-9-live`, `${TEMP_PREFIX}notapid`]);
  });

  it('on a root written before the temp directory (temp files beside objects), the first call sweeps every directory once', async () => {
    const dead = deadPid();
    const memoDir = path.join(root, 'wf-memo@', 'memos@', 'run-1@', '0@');
    await fsp.mkdir(memoDir, { recursive: true });
    await fsp.writeFile(path.join(memoDir, 'ab'), 'memo entry');
    const stale = [path.join(memoDir, `${TEMP_PREFIX}${dead}-0-memo`), path.join(root, `${TEMP_PREFIX}${dead}-1-root`)];
    const live = [path.join(memoDir, `${TEMP_PREFIX}${process.pid}-2-live`), path.join(root, `${TEMP_PREFIX}${process.pid}-3-live`)];
    for (const file of [...stale, ...live]) await fsp.writeFile(file, 'partial');

    const store = new FileSystemObjectStore({ root });
    expect(await store.get('wf-memo/memos/run-1/0/ab')).toMatchObject({ data: text('memo entry') });
    await vi.waitFor(async () => {
      for (const file of stale) await expect(fsp.stat(file), file).rejects.toThrow();
    });
    for (const file of live) expect((await fsp.stat(file)).isFile()).toBe(true);
    expect(await keys(store)).toEqual(['wf-memo/memos/run-1/0/ab']);
  });

  it('a root with a temp directory is not walked: only the temp directory is swept', async () => {
    const dead = deadPid();
    await fsp.mkdir(path.join(root, TEMP_DIRECTORY));
    await fsp.mkdir(path.join(root, 'm@'));
    const beside = path.join(root, 'm@', `${TEMP_PREFIX}${dead}-0-old`);
    await fsp.writeFile(beside, 'partial');
    const store = new FileSystemObjectStore({ root });
    await store.put('x', text('x'));
    expect(await store.sweepTempFiles()).toBe(0);
    expect((await fsp.stat(beside)).isFile()).toBe(true);
    expect(await store.sweepTempFiles({ everywhere: true })).toBe(1);
    await expect(fsp.stat(beside)).rejects.toThrow();
  });

  it('a put into a new nested directory writes its temp file in the temp directory and leaves no temp file', async () => {
    const store = new FileSystemObjectStore({ root: path.join(root, 'new', 'store') });
    await store.put('wf-memo/memos/run-1/0/ab', text('m'));
    await store.put('wf-memo/memos/run-1/1/cd', text('n'), { ifNoneMatch: '*' });
    expect(await filesUnder(path.join(root, 'new', 'store'))).toEqual([path.join('wf-memo@', 'memos@', 'run-1@', '0@', 'ab'), path.join('wf-memo@', 'memos@', 'run-1@', '1@', 'cd')]);
    expect(await fsp.readdir(path.join(root, 'new', 'store', TEMP_DIRECTORY))).toEqual([]);
  });
});
