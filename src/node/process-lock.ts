/**
 * The single-writer guard for Node: one process per store directory. The engine's fencing
 * already keeps history safe when two writers meet, but then the older one fails mid-run; this
 * lock makes the second process fail at open with a clear LOCKED error instead.
 *
 * Built on `proper-lockfile`: the lock is a directory created atomically with mkdir (safe across
 * processes) whose mtime the holder refreshes; a holder that crashed stops refreshing, and after
 * `staleMs` the next opener may take the lock over. If the holder's refresh fails (its lock was
 * taken over or removed), `onCompromised` is called: stop writing (the engine's fencing is the
 * safety net behind it).
 */
import * as fs from 'node:fs';
import { mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { InvalidConfigError, StoreLockedError, StoreUnavailableError } from '../core/errors.js';
import { checkOptions, numberRule, optionNames } from '../core/options.js';

export interface ProcessLockOptions {
  /**
   * Age after which a lock nobody refreshes counts as abandoned. Default 30 s: a holder that died
   * on this host is recognised by its pid at once, so this only delays taking over from a paused
   * or remote process, and a busy event loop that refreshes late does not lose its lock.
   */
  readonly staleMs?: number;
  /** Called when the lock is lost while held. Default: log to stderr. */
  readonly onCompromised?: (error: Error) => void;
}

/** Every ProcessLockOptions name (add a new option's name here, or the check rejects it). */
const PROCESS_LOCK_OPTION_NAMES = optionNames<ProcessLockOptions>({ staleMs: true, onCompromised: true });

/**
 * Throws INVALID_CONFIG unless `options` is undefined or ProcessLockOptions: an object of known
 * options only, `staleMs` a non-negative finite number, `onCompromised` a function. `name` names
 * the options in messages (`writerLock`: `writerLock.staleMs must not be negative`).
 */
export function validateProcessLockOptions(options: unknown, name: string): asserts options is ProcessLockOptions | undefined {
  checkOptions(options, PROCESS_LOCK_OPTION_NAMES, name);
  const { staleMs, onCompromised } = (options ?? {}) as Record<string, unknown>;
  const rule = staleMs === undefined ? undefined : numberRule(staleMs);
  if (rule !== undefined) {
    const option = `${name}.staleMs`;
    throw new InvalidConfigError(`${option} ${rule}. option=${option} value=${String(staleMs)}`, { option });
  }
  if (onCompromised !== undefined && typeof onCompromised !== 'function') {
    const option = `${name}.onCompromised`;
    throw new InvalidConfigError(`${option} must be a function, not ${onCompromised === null ? 'null' : typeof onCompromised}. option=${option}`, { option });
  }
}

export interface ProcessLock {
  /** The directory that is locked. */
  readonly root: string;
  /** Releases the lock. Safe to call twice. */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `root` (created if missing). Rejects with LOCKED when another live
 * process holds it, STORE_UNAVAILABLE on I/O errors, INVALID_CONFIG on bad options.
 */
export async function acquireProcessLock(root: string, options: ProcessLockOptions = {}): Promise<ProcessLock> {
  validateProcessLockOptions(options, 'lock');
  const dir = resolve(root);
  await mkdir(dir, { recursive: true });
  return { ...(await lockDirectory(dir, join(dir, '.writer.lock'), `root=${dir}`, options)), root: dir };
}

/**
 * Takes the lock directory `lockPath`, which records who holds it (`host:pid`). `name` must be
 * unique per lock in this process (proper-lockfile keys its held locks by it). A holder on this
 * host whose process is gone (killed, crashed) is taken over at once; any other holder only once
 * its lock is stale. `what` names the locked thing in errors.
 */
export async function lockDirectory(name: string, lockPath: string, what: string, options: ProcessLockOptions = {}): Promise<ProcessLock> {
  await mkdir(dirname(lockPath), { recursive: true });
  const staleMs = Math.max(2000, options.staleMs ?? 30_000);
  const take = (): Promise<() => Promise<void>> =>
    lockfile.lock(name, {
      lockfilePath: lockPath,
      stale: staleMs,
      update: Math.floor(staleMs / 2),
      realpath: false,
      fs: lockFs,
      onCompromised: options.onCompromised ?? ((e) => console.error(`taquba: store lock lost. ${what}: ${e.message}`)),
    });
  let release: () => Promise<void>;
  try {
    release = await take().catch(async (e: unknown) => {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED' || !(await holderIsGone(lockPath))) throw e;
      await rm(lockPath, { recursive: true, force: true });
      return take();
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOCKED') {
      const holder = await readHolder(lockPath);
      throw new StoreLockedError(`store is locked by another process. ${what} holder=${holder ?? 'unknown'}`, { what, holder }, e);
    }
    throw new StoreUnavailableError(`could not lock the store. ${what}`, { what }, e);
  }
  // Inside the lock directory, so it goes with it; readers of a half-written file see no holder.
  // Adding the file changes the directory's mtime, which proper-lockfile would take for another
  // process's refresh at its next update: it would stop refreshing, and the lock would go stale
  // (and be taken over) while we still hold it. So the mtime it recorded is put back.
  const recorded = await stat(lockPath).then((st) => st.mtime, () => undefined);
  await writeFile(join(lockPath, 'holder'), `${hostname()}:${process.pid}`).catch(() => undefined);
  if (recorded) await utimes(lockPath, recorded, recorded).catch(() => undefined);
  heldHere.add(lockPath);
  let released = false;
  return {
    root: name,
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(lockPath);
      await release().catch(() => undefined);
    },
  };
}

/**
 * The lock directory holds a `holder` file, so proper-lockfile's removals (release, and taking
 * over a stale lock) must remove a non-empty directory.
 */
const lockFs = {
  ...fs,
  rmdir: (dir: string, callback: (err: NodeJS.ErrnoException | null) => void) => fs.rm(dir, { recursive: true, force: true }, callback),
  rmdirSync: (dir: string) => fs.rmSync(dir, { recursive: true, force: true }),
};

/** Lock directories this process holds now: one naming our pid but not in here was copied or left behind. */
const heldHere = new Set<string>();

async function readHolder(lockPath: string): Promise<string | undefined> {
  return (await readFile(join(lockPath, 'holder'), 'utf8').catch(() => undefined)) || undefined;
}

/** True when the lock's holder ran on this host and its process no longer exists (or is us, without holding it). */
async function holderIsGone(lockPath: string): Promise<boolean> {
  const holder = await readHolder(lockPath);
  const match = holder === undefined ? null : /^(.*):(\d+)$/.exec(holder);
  if (!match || match[1] !== hostname()) return false;
  const pid = Number(match[2]);
  if (pid === process.pid) return !heldHere.has(lockPath);
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
