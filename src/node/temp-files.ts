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
 * (Create-only puts used to get a spare temp file made ahead of time, because the object WAL
 * waited for an inode creation on every put; the WAL is now an append log on this store
 * (docs/rfcs/0002-wal-append-log.md) and the remaining create-only puts are rare.)
 */
import { randomBytes } from 'node:crypto';
import { open, promises as fsp, unlinkSync } from 'node:fs';
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

export interface TempFile {
  readonly path: string;
  readonly fd: number;
}

/** Creates a new temp file in `dir` on the thread pool. Rejects with the Node error (ENOENT: no `dir`). */
export function createTempFile(dir: string): Promise<TempFile> {
  const file = path.join(dir, tempTag + (tempCounter++).toString(36));
  return new Promise((resolve, reject) => open(file, 'wx', 0o644, (e, fd) => (e ? reject(e) : resolve({ path: file, fd }))));
}

/** Removes a temp file, ignoring failures: it is gone already, or a later listing sweeps it. */
export function removeTempFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone, or the directory is unusable (the caller reports the error that matters)
  }
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
