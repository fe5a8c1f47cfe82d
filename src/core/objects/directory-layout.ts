import { fromUtf8, hexByte, utf8 } from '../bytes.js';

/*
 * The key-to-directory layout of the directory stores (the Node filesystem store, the OPFS
 * store). Object storage lets `a/b` and `a/b/c` both exist; a directory cannot hold a file and a
 * directory of one name, so the two live in disjoint name spaces:
 *   - a key segment becomes a name through the store's SegmentCodec, which always escapes '%',
 *     '@' and a leading '.' (so no name starts with '.', and none can pass for a directory);
 *   - the last segment names a file; every other segment names a directory with a '@' suffix.
 * `db/wal/0001` is `<root>/db@/wal@/0001`. A store's temporary files start with '.', so they
 * never decode as objects.
 */

/** Suffix of every directory name (never part of an encoded segment). */
export const DIR_SUFFIX = '@';

/** How a store turns key segments into names and back. */
export interface SegmentCodec {
  encode(segment: string): string;
  /** The segment a name encodes, or undefined for anything `encode` never returns (temp files included). */
  decode(name: string): string | undefined;
}

/** Runs of %xx escapes: decoded together, as the UTF-8 bytes of the characters they stand for. */
const ESCAPE_RUN = /(?:%[0-9a-f]{2})+/g;

function unescapeRun(run: string): string {
  const bytes = new Uint8Array(run.length / 3);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
  return fromUtf8(bytes);
}

/**
 * A segment codec that keeps a character as it is when `keeps(char)` (a whole code point) says so
 * and escapes every other one as `%xx` per byte of its UTF-8 form (lower-case hex). '%', '@' and
 * a leading '.' are always escaped. Decoding accepts only the canonical encoding: a name counts
 * only if encoding what it decodes to gives the name back (this rejects '%61' for 'a', upper-case
 * escapes, a leading '.', invalid UTF-8, and anything else the store never wrote).
 */
export function segmentCodec(keeps: (char: string) => boolean): SegmentCodec {
  const encode = (segment: string): string => {
    let out = '';
    let first = true;
    for (const ch of segment) {
      if (ch !== '%' && ch !== '@' && !(first && ch === '.') && keeps(ch)) {
        out += ch;
      } else {
        const code = ch.charCodeAt(0);
        if (code < 0x80) out += `%${hexByte(code)}`;
        else for (const byte of utf8(ch)) out += `%${hexByte(byte)}`;
      }
      first = false;
    }
    return out;
  };
  const decode = (name: string): string | undefined => {
    if (name === '') return undefined;
    let segment = name;
    if (name.includes('%')) {
      try {
        segment = name.replace(ESCAPE_RUN, unescapeRun);
      } catch {
        return undefined; // not UTF-8: never written by encode
      }
    }
    return encode(segment) === name ? segment : undefined;
  };
  return { encode, decode };
}

/**
 * Where a listing of `prefix` starts: the deepest directory the prefix pins down (`dirKey`, the
 * prefix up to and including its last '/', and that directory's segments), and the rest of the
 * prefix, which filters the names found there.
 */
export function listStart(prefix: string): { dirKey: string; dirSegments: string[]; namePrefix: string } {
  const cut = prefix.lastIndexOf('/') + 1;
  const dirKey = prefix.slice(0, cut);
  return { dirKey, dirSegments: dirKey === '' ? [] : dirKey.slice(0, -1).split('/'), namePrefix: prefix.slice(cut) };
}

/**
 * What a directory entry adds to its directory's key: a file's segment, or a directory's
 * segment and '/'. Undefined for a name this layout never produces (a file named like a
 * directory or the other way round, a temporary file, a name not in canonical encoding).
 */
export function entryPart(codec: SegmentCodec, name: string, isDir: boolean): string | undefined {
  if (isDir !== name.endsWith(DIR_SUFFIX)) return undefined;
  const segment = codec.decode(isDir ? name.slice(0, -DIR_SUFFIX.length) : name);
  if (segment === undefined) return undefined;
  return isDir ? `${segment}/` : segment;
}
