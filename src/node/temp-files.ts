/**
 * The temp files the filesystem store writes a put into before linking or renaming it into place.
 *
 * Every temp file of a store lives in one directory, `<root>/.tmp/` (TEMP_DIRECTORY), on the same
 * filesystem as the objects, so `link` and `rename` into any key's directory still work. A put
 * killed before its link or rename (kill -9, a crash) leaves its temp file there, and only there:
 * a store sweeps that one directory once, at its first use ({@link sweepTempDirectory}), instead
 * of needing a listing of every directory a put ever wrote to (memo directories are never
 * listed). Names carry the writer's process id, and a live process's temp file is never touched.
 *
 * Create-only puts get a spare: the next temp file is created while the current put writes and
 * fsyncs, so that put's successor starts with an open file. Creating an inode is usually a few
 * microseconds, but on the test machine's ext4 it took 0.4-0.6 ms in every fresh subdirectory of
 * /tmp (0.01-0.05 ms elsewhere on the same disk), and a WAL put would wait for it every time.
 * (Making the spare beside the put slows that put's fsync a little; making it after the put
 * instead helped sequential runs but cost the WAL under load 2-28% in measured pairs, so it stays
 * beside.) A temp directory gets a spare from its second create-only put on; other puts (a
 * manifest's compare-and-swap, a memo entry) never make one. At most MAX_HOT_DIRECTORIES temp
 * directories (store roots) in a process keep a spare. A spare left by a process that died is
 * swept like any other temp file.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, open, promises as fsp, unlinkSync } from 'node:fs';
import * as path from 'node:path';

/** Every temp file name starts with this; it never decodes as an object name. */
export const TEMP_PREFIX = '.tmp-';

/**
 * The directory under a store's root that holds every temp file of its puts. It starts with '.'
 * and has no '@' suffix, so it never decodes as a key's directory and listings skip it.
 */
export const TEMP_DIRECTORY = '.tmp';

/** `.tmp-<pid>-<random per process>-<counter>`: unique without a random draw per file. */
const tempTag = `${TEMP_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-`;
let tempCounter = 0;

const MAX_HOT_DIRECTORIES = 4;

export interface TempFile {
  readonly path: string;
  readonly fd: number;
}

/** Creates a new temp file in `dir` on the thread pool. Rejects with the Node error (ENOENT: no `dir`). */
export function createTempFile(dir: string): Promise<TempFile> {
  const file = path.join(dir, tempTag + (tempCounter++).toString(36));
  return new Promise((resolve, reject) => open(file, 'wx', 0o644, (e, fd) => (e ? reject(e) : resolve({ path: file, fd }))));
}

/** Recently used directories, least recent first, each with its spare (if one is being made or ready). */
const hot = new Map<string, Promise<TempFile | undefined> | undefined>();

/**
 * A temp file in `dir` for a create-only put, open for writing: the directory's spare when it
 * has one, else a new one. A directory used before (and still among the recent ones) starts its
 * next spare now. Rejects like `createTempFile`.
 */
export async function takeTempFile(dir: string): Promise<TempFile> {
  const seenBefore = hot.has(dir);
  const spare = hot.get(dir);
  hot.delete(dir);
  hot.set(dir, seenBefore ? createTempFile(dir).catch(() => undefined) : undefined);
  if (hot.size > MAX_HOT_DIRECTORIES) {
    const [coldest, coldSpare] = hot.entries().next().value!;
    hot.delete(coldest);
    void coldSpare?.then((file) => file && discard(file));
  }
  const file = await spare;
  if (file && fstatSync(file.fd).nlink > 0) return file;
  // No spare, or it was deleted meanwhile (the directory was removed, perhaps recreated).
  if (file) discard(file);
  return createTempFile(dir);
}

/** Removes a temp file, ignoring failures: it is gone already, or a later listing sweeps it. */
export function removeTempFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone, or the directory is unusable (the caller reports the error that matters)
  }
}

function discard(file: TempFile): void {
  try {
    closeSync(file.fd);
  } catch {
    // closed with its directory's teardown; the name may still need removing
  }
  removeTempFile(file.path);
}

function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Whether `name` is the temp file of a put whose process is gone (temp names carry the writer's
 * pid). A live process's temp is never touched: a reused pid only delays the sweep. Across pid
 * namespaces (containers sharing one root) a live writer could look dead; run one writer process
 * per root, as the process lock requires.
 */
export function isOrphanedTemp(name: string): boolean {
  if (!name.startsWith(TEMP_PREFIX)) return false;
  const pid = Number(name.slice(TEMP_PREFIX.length, name.indexOf('-', TEMP_PREFIX.length)));
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return errnoOf(e) === 'ESRCH';
  }
}

/** Unlinks the orphaned temp files among `names` in `dir`; resolves with how many it removed. */
async function removeOrphans(dir: string, names: Iterable<string>): Promise<number> {
  let removed = 0;
  for (const name of names) {
    if (!isOrphanedTemp(name)) continue;
    try {
      await fsp.unlink(path.join(dir, name));
      removed++;
    } catch {
      // gone already (another store on this root swept it), or not removable: the next sweep retries
    }
  }
  return removed;
}

/**
 * Removes the temp files of dead processes from `dir` (a store's temp directory) and resolves
 * with how many it removed; a missing directory has none. Unlinking a temp name is always safe,
 * even one that a put had already linked into place (the object keeps its own name). The
 * removals are not fsynced: a name that comes back after a crash is swept again. Rejects with the
 * Node error of the readdir (other than ENOENT).
 */
export async function sweepTempDirectory(dir: string): Promise<number> {
  try {
    return await removeOrphans(dir, await fsp.readdir(dir));
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return 0;
    throw e;
  }
}

/**
 * Like {@link sweepTempDirectory} for `root` and every key directory below it (names ending in
 * `dirSuffix`), one directory at a time. For roots written before temp files moved to the temp
 * directory, when each put wrote its temp file beside its target. Directories that vanish during
 * the walk are skipped. Rejects with the Node error of a readdir (other than ENOENT, ENOTDIR).
 */
export async function sweepTempTree(root: string, dirSuffix: string): Promise<number> {
  let dirents;
  try {
    dirents = await fsp.readdir(root, { withFileTypes: true });
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return 0;
    throw e;
  }
  let removed = await removeOrphans(root, dirents.filter((d) => d.isFile()).map((d) => d.name));
  for (const dirent of dirents) {
    if (dirent.isDirectory() && dirent.name.endsWith(dirSuffix)) removed += await sweepTempTree(path.join(root, dirent.name), dirSuffix);
  }
  return removed;
}
