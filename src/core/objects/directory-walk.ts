import { entryPart, type SegmentCodec } from './directory-layout.js';
import type { ObjectInfo } from './object-store.js';

/**
 * The platform calls a directory walk needs, injected by each directory store (`D` a directory,
 * `E` one of its entries: a Node path and Dirent, an OPFS handle and [name, handle]).
 */
export interface DirectoryWalkPlatform<D, E> {
  /** The files and directories in `dir` (anything else left out); none when `dir` is gone. */
  entries(dir: D): AsyncIterable<E> | Promise<Iterable<E>>;
  name(entry: E): string;
  isDirectory(entry: E): boolean;
  /** The directory an entry of `dir` names. */
  subdirectory(dir: D, entry: E): D;
  /** The object a file entry of `dir` holds, or undefined when it is gone since `entries`. */
  object(dir: D, entry: E, key: string): Promise<ObjectInfo | undefined>;
}

/**
 * Lazily yields the objects below `dir` (whose keys start with `dirKey`) in ascending key order,
 * reading one directory at a time: those whose part in `dir` starts with `namePrefix`, and (when
 * given) whose key is after `startAfter`. Entries are sorted by what they add to the key, with
 * '/' appended for directories: all keys below directory `a` start with `a/`, so `a-c` (0x2d)
 * comes before them and `a0` (0x30) after.
 */
export async function* walkDirectory<D, E>(
  platform: DirectoryWalkPlatform<D, E>,
  codec: SegmentCodec,
  dir: D,
  dirKey: string,
  namePrefix: string,
  startAfter: string | undefined,
): AsyncGenerator<ObjectInfo> {
  const found: { part: string; entry: E; isDir: boolean }[] = [];
  for await (const entry of await platform.entries(dir)) {
    const isDir = platform.isDirectory(entry);
    const part = entryPart(codec, platform.name(entry), isDir);
    if (part === undefined || !part.startsWith(namePrefix)) continue;
    const key = dirKey + part;
    if (startAfter !== undefined && key <= startAfter && !(isDir && startAfter.startsWith(key))) continue;
    found.push({ part, entry, isDir });
  }
  found.sort((a, b) => (a.part < b.part ? -1 : a.part > b.part ? 1 : 0));
  for (const { part, entry, isDir } of found) {
    const key = dirKey + part;
    if (isDir) {
      yield* walkDirectory(platform, codec, platform.subdirectory(dir, entry), key, '', startAfter);
      continue;
    }
    const info = await platform.object(dir, entry, key);
    if (info) yield info;
  }
}
