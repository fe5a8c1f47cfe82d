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
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { StoreLockedError, StoreUnavailableError } from '../core/errors.js';

export interface ProcessLockOptions {
  /** Age after which a lock nobody refreshes counts as abandoned. Default 10 s. */
  readonly staleMs?: number;
  /** Called when the lock is lost while held. Default: log to stderr. */
  readonly onCompromised?: (error: Error) => void;
}

export interface ProcessLock {
  /** The directory that is locked. */
  readonly root: string;
  /** Releases the lock. Safe to call twice. */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `root` (created if missing). Rejects with LOCKED when another live
 * process holds it, STORE_UNAVAILABLE on I/O errors.
 */
export async function acquireProcessLock(root: string, options: ProcessLockOptions = {}): Promise<ProcessLock> {
  const dir = resolve(root);
  await mkdir(dir, { recursive: true });
  const staleMs = Math.max(2000, options.staleMs ?? 10_000);
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, {
      lockfilePath: join(dir, '.writer.lock'),
      stale: staleMs,
      update: Math.floor(staleMs / 2),
      realpath: false,
      onCompromised: options.onCompromised ?? ((e) => console.error(`taquba: store lock lost. root=${dir}: ${e.message}`)),
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOCKED') {
      throw new StoreLockedError(`store is locked by another process. root=${dir}`, { root: dir }, e);
    }
    throw new StoreUnavailableError(`could not lock the store. root=${dir}`, { root: dir }, e);
  }
  let released = false;
  return {
    root: dir,
    async release() {
      if (released) return;
      released = true;
      await release().catch(() => undefined);
    },
  };
}
