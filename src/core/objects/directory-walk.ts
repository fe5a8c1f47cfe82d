import { StoreUnavailableError } from '../errors.js';
import { entryPart, type SegmentCodec } from './directory-layout.js';
import type { ObjectInfo } from './object-store.js';

/**
 * The platform calls a directory walk needs, injected by each directory store (`D` a directory,
 * `E` one of its entries: a Node path and Dirent, an OPFS handle and [name, handle]).
 */
export interface DirectoryWalkPlatform<D, E> {
  /**
   * The files and directories in `dir` (anything else left out); none when `dir` is gone. Must
   * return every entry present for the whole read (a small directory is read in one go).
   */
  entries(dir: D): AsyncIterable<E> | Promise<Iterable<E>>;
  name(entry: E): string;
  isDirectory(entry: E): boolean;
  /** The directory an entry of `dir` names. */
  subdirectory(dir: D, entry: E): D;
  /** The object a file entry of `dir` holds, or undefined when it is gone since `entries`. */
  object(dir: D, entry: E, key: string): Promise<ObjectInfo | undefined>;
}

/**
 * Re-reads of one directory allowed for entries that appeared during a listing and then vanished
 * (on top of one per entry of its first read), so that endless churn fails the listing instead of
 * chasing it forever.
 */
export const MAX_CHURN_REREADS = 64;

interface Found<E> {
  readonly part: string;
  readonly entry: E;
  readonly isDir: boolean;
}

/** Shared by every directory of one walk: how many file entries turned out gone so far. */
export interface WalkState {
  vanished: number;
}

/**
 * Lazily yields the objects below `dir` (whose keys start with `dirKey`) in ascending key order,
 * reading one directory at a time: those whose part in `dir` starts with `namePrefix`, and (when
 * given) whose key is after `startAfter`. Entries are sorted by what they add to the key, with
 * '/' appended for directories: all keys below directory `a` start with `a/`, so `a-c` (0x2d)
 * comes before them and `a0` (0x30) after.
 *
 * Meets the listing contract of ObjectStore.list: when an entry read from a directory is gone by
 * the time its object is read (here or in a directory below), the directory is read again before
 * anything after it is yielded, since the entry's successor (created before it was deleted) may
 * be missing from the first read. Nothing vanishing costs nothing extra. Rejects with
 * STORE_UNAVAILABLE when one directory keeps churning (see MAX_CHURN_REREADS).
 */
export async function* walkDirectory<D, E>(
  platform: DirectoryWalkPlatform<D, E>,
  codec: SegmentCodec,
  dir: D,
  dirKey: string,
  namePrefix: string,
  startAfter: string | undefined,
  /** Shared with the walks of the directories below (callers leave it out). */
  state: WalkState = { vanished: 0 },
): AsyncGenerator<ObjectInfo> {
  let found = await read(platform, codec, dir, dirKey, namePrefix, startAfter, undefined);
  let readAt = state.vanished;
  const maxRereads = found.length + MAX_CHURN_REREADS;
  let rereads = 0;
  // The part of the last entry yielded or walked here: a re-read lists only the parts after it.
  let resume: string | undefined;
  for (let i = 0; ; i++) {
    const item = found[i] as Found<E> | undefined;
    let info: ObjectInfo | undefined;
    if (item && !item.isDir) {
      info = await platform.object(dir, item.entry, dirKey + item.part);
      if (!info) {
        state.vanished++;
        continue;
      }
    }
    if (state.vanished !== readAt) {
      if (++rereads > maxRereads) {
        throw new StoreUnavailableError(
          `list gave up: objects in a directory kept vanishing while it was re-read. directory=${JSON.stringify(dirKey)} rereads=${maxRereads}`,
          { directory: dirKey, rereads: maxRereads },
        );
      }
      readAt = state.vanished;
      found = await read(platform, codec, dir, dirKey, namePrefix, startAfter, resume);
      i = -1;
      continue;
    }
    if (!item) return;
    resume = item.part;
    if (item.isDir) yield* walkDirectory(platform, codec, platform.subdirectory(dir, item.entry), dirKey + item.part, '', startAfter, state);
    else yield info!;
  }
}

/** The listable entries of `dir` whose parts come after `after` (when given), sorted by part. */
async function read<D, E>(
  platform: DirectoryWalkPlatform<D, E>,
  codec: SegmentCodec,
  dir: D,
  dirKey: string,
  namePrefix: string,
  startAfter: string | undefined,
  after: string | undefined,
): Promise<Found<E>[]> {
  const found: Found<E>[] = [];
  for await (const entry of await platform.entries(dir)) {
    const isDir = platform.isDirectory(entry);
    const part = entryPart(codec, platform.name(entry), isDir);
    if (part === undefined || !part.startsWith(namePrefix)) continue;
    if (after !== undefined && part <= after) continue;
    const key = dirKey + part;
    if (startAfter !== undefined && key <= startAfter && !(isDir && startAfter.startsWith(key))) continue;
    found.push({ part, entry, isDir });
  }
  return found.sort((a, b) => (a.part < b.part ? -1 : a.part > b.part ? 1 : 0));
}
