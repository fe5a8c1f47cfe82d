import { CorruptDataError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { parseObjectId, walObjectKey } from '../format.js';
import { decodeWalObject, type WalObject } from './wal-format.js';

/** Ids of the WAL objects at or after `fromId`, ascending, checked to be dense. */
export async function listWalIds(store: ObjectStore, path: string, fromId: number): Promise<number[]> {
  const ids: number[] = [];
  const startAfter = fromId > 1 ? walObjectKey(path, fromId - 1) : undefined;
  for await (const info of store.list(`${path}/wal/`, { startAfter })) {
    const id = parseObjectId(info.key);
    if (id !== undefined && id >= fromId) ids.push(id);
  }
  ids.sort((a, b) => a - b);
  for (let i = 0; i < ids.length; i++) {
    const expected = (i === 0 ? fromId : ids[i - 1] + 1);
    if (ids[i] !== expected) {
      const object = walObjectKey(path, expected);
      throw new CorruptDataError(`wal object missing from a dense sequence. object=${object}`, { object });
    }
  }
  return ids;
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
