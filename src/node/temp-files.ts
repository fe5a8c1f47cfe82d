/**
 * The temp files the filesystem store writes a put into before linking or renaming it into place.
 *
 * Directories that take repeated create-only puts (the WAL's, the tables') get a spare: the next
 * temp file is created while the current put writes and fsyncs, so that put's successor starts
 * with an open file. Creating an inode is usually a few microseconds, but on the test machine's
 * ext4 it took 0.4-0.6 ms in every fresh subdirectory of /tmp (0.01-0.05 ms elsewhere on the same
 * disk), and a WAL put would wait for it every time. (Making the spare beside the put slows that
 * put's fsync a little; making it after the put instead helped sequential runs but cost the WAL
 * under load 2-28% in measured pairs, so it stays beside.) At most MAX_HOT_DIRECTORIES directories
 * keep a spare; a directory seen once gets none, and other puts (a manifest's compare-and-swap, a
 * memo entry) never make one: the engine lists its WAL and table directories at every open, and a
 * listing sweeps the temp files of a process that died (names carry the process id), spares
 * included.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, open, unlinkSync } from 'node:fs';
import * as path from 'node:path';

/** Every temp file name starts with this; it never decodes as an object name. */
export const TEMP_PREFIX = '.tmp-';

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
