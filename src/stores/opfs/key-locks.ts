import { KeyedMutex } from '../../core/keyed-mutex.js';

/*
 * OPFS has no conditional move: a put checks its precondition, then moves its temporary file
 * into place. Two contexts doing that at once for one key would both see "absent" and the second
 * move would replace the first's create-only object (or fail with NoModificationAllowedError
 * when the moves overlap). So every change of a key (put, delete, creating a log) holds a lock
 * on it that every worker and tab of the origin shares: a Web Lock, which reaches exactly the
 * contexts that share the origin private file system and is released when a context dies.
 */

interface WebLocks {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

function webLocks(): WebLocks | undefined {
  return (globalThis as { navigator?: { locks?: WebLocks } }).navigator?.locks;
}

/** Only where Web Locks are missing (no browser with OPFS sync access handles lacks them): this realm only. */
const realmLocks = new KeyedMutex();

/** Runs `fn` holding the origin-wide lock on `key` of the store at `directory` (canonical, '/'-joined). */
export function withKeyLock<T>(directory: string, key: string, fn: () => Promise<T>): Promise<T> {
  const name = `taquba-opfs:${directory}\n${key}`;
  const locks = webLocks();
  return locks ? locks.request(name, fn) : realmLocks.run(name, fn);
}
