/**
 * Reading the WAL back, at open and in read-only handles: which ids exist, how far they run
 * without a gap, and one decoded object.
 */
import { CorruptDataError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { parseSequenceId, walObjectKey } from '../format.js';
import { decodeWalObject, type WalObject } from './wal-format.js';

/** WAL objects read at once while replaying them in order (core/read-ahead.ts). */
export const WAL_READ_AHEAD = 8;

/** Ids of the WAL objects at or after `fromId`, ascending. */
export async function listWalIds(store: ObjectStore, path: string, fromId: number): Promise<number[]> {
  const ids: number[] = [];
  const startAfter = fromId > 1 ? walObjectKey(path, fromId - 1) : undefined;
  for await (const info of store.list(`${path}/wal/`, { startAfter })) {
    const id = parseSequenceId(info.key);
    if (id !== undefined && id >= fromId) ids.push(id);
  }
  return ids.sort((a, b) => a - b);
}

/**
 * How many of `ids` (ascending) run on without a gap from `fromId`. A gap is not corruption by
 * itself: a writer fencing the store puts a window of ids at once, so its later ids can land
 * first. Commits after a gap are (see KvDb.recover).
 */
export function denseLength(ids: readonly number[], fromId: number): number {
  let n = 0;
  while (n < ids.length && ids[n] === fromId + n) n++;
  return n;
}

/** Reads and decodes one WAL object; undefined when it does not exist. */
export async function readWal(store: ObjectStore, path: string, id: number): Promise<WalObject | undefined> {
  const key = walObjectKey(path, id);
  const obj = await store.get(key);
  if (!obj) return undefined;
  const wal = decodeWalObject(obj.data, key);
  if (wal.id !== id) throw new CorruptDataError(`wal object holds another id. object=${key} id=${wal.id}`, { object: key });
  return wal;
}

/**
 * CORRUPT_DATA when an id missing from `ids` (listed from `fromId`) comes before a WAL object that
 * holds commits. A writer stores its ids one after another, each once the one before was stored,
 * and fence objects hold no commits: commits after a missing id prove that id was stored and then
 * deleted, with its commits. (An opener must look before it fences: its fence would fill the
 * hole and hide the loss from everyone after it.) A missing id is read again first: one created
 * while the listing ran may be absent from it.
 */
export async function checkNoDeletedWal(store: ObjectStore, path: string, ids: readonly number[], fromId: number): Promise<void> {
  const dense = denseLength(ids, fromId);
  let lastWithCommits: number | undefined;
  for (const id of ids.slice(dense)) {
    const wal = await readWal(store, path, id);
    if (wal && wal.commits.length > 0) lastWithCommits = id;
  }
  if (lastWithCommits === undefined) return;
  const listed = new Set(ids);
  for (let id = fromId + dense; id < lastWithCommits; id++) {
    if (listed.has(id) || (await store.get(walObjectKey(path, id))) !== undefined) continue;
    const object = walObjectKey(path, id);
    throw new CorruptDataError(`wal object missing before stored commits (id ${lastWithCommits}): it was written and deleted, and its commits are lost. object=${object}`, {
      object,
      problem: 'wal_object_missing',
    });
  }
}
