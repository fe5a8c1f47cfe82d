/**
 * Damage injection (damage runs only, between writers): flip a byte of, or delete, one engine
 * object. The engine must then report CORRUPT_DATA at open or read, or the damage must be
 * harmless (every acknowledged write still reads back).
 *
 * Left out, because no format can tell them from a legitimate state:
 *  - a flip in the last record of the newest segment of an epoch with no recorded end (a torn
 *    append looks the same), and deleting that newest segment;
 *  - deleting a WAL object (at or past the manifest's walStart) unless the next id holds commits:
 *    followed by nothing or by empty fences it looks never written (a crashed opener leaves such
 *    gaps too);
 *  - deleting the newest manifest (the previous one is a valid older state) or a log end (the
 *    next opener measures the log again; a fenced writer's late appends then count).
 */
import { walObjectKey } from '../../src/core/kv/format.js';
import { decodeManifest } from '../../src/core/kv/manifest/manifest.js';
import { logEndKey, parseLogSegmentKey } from '../../src/core/kv/wal/log-format.js';
import { decodeWalObject } from '../../src/core/kv/wal/wal-format.js';
import { PATH } from './context.js';
import type { Prng } from './prng.js';
import type { SimWorld } from './sim-world.js';

type Target = { readonly key: string; readonly kind: 'flip'; readonly below: number } | { readonly key: string; readonly kind: 'delete' };

export function injectDamage(world: SimWorld, r: Prng): string | undefined {
  const targets = damageTargets(world);
  if (targets.length === 0) return undefined;
  const target = r.pick(targets);
  if (target.kind === 'delete') {
    world.unlink(target.key, world.nextTick());
    return `damage: deleted ${target.key}`;
  }
  const inode = world.raw(target.key)!;
  const at = r.int(0, target.below - 1);
  const data = inode.data.slice();
  data[at] = data[at]! ^ r.int(1, 255);
  inode.data = data;
  return `damage: flipped byte ${at} of ${target.key} (${data.length} B)`;
}

function damageTargets(world: SimWorld): Target[] {
  const keys = world.keys(`${PATH}/`);
  const newest = (prefix: string): string | undefined => keys.filter((k) => k.startsWith(prefix)).at(-1);
  const newestManifest = newest(`${PATH}/manifest/`);
  const walStart = readWalStart(world, newestManifest);
  /** Whether WAL id `id` exists and holds commits. */
  const holdsCommits = (id: number): boolean => {
    const key = walObjectKey(PATH, id);
    const inode = world.raw(key);
    if (!inode) return false;
    try {
      return decodeWalObject(inode.data, key).commits.length > 0;
    } catch {
      return false;
    }
  };
  const lastSegment = new Map<number, number>();
  for (const key of keys) {
    const pos = key.startsWith(`${PATH}/log/`) ? parseLogSegmentKey(key) : undefined;
    if (pos) lastSegment.set(pos[0], Math.max(lastSegment.get(pos[0]) ?? 0, pos[1]));
  }
  const out: Target[] = [];
  for (const key of keys) {
    const size = world.raw(key)!.data.length;
    const dir = key.slice(PATH.length + 1, key.lastIndexOf('/'));
    if (dir === 'log') {
      const [epoch, segment] = parseLogSegmentKey(key)!;
      const openEnded = segment === lastSegment.get(epoch) && !world.lookup(logEndKey(PATH, epoch));
      const below = openEnded ? lastRecordStart(world.raw(key)!.data) : size;
      if (below > 0) out.push({ key, kind: 'flip', below });
      if (!openEnded) out.push({ key, kind: 'delete' });
      continue;
    }
    if (size > 0 && dir !== 'log-seal') out.push({ key, kind: 'flip', below: size });
    const walId = dir === 'wal' ? Number(key.slice(key.lastIndexOf('/') + 1)) : undefined;
    const walDetectable = walId !== undefined && walStart !== undefined && (walId < walStart || holdsCommits(walId + 1));
    if (dir === 'sst' || dir === 'log-seal' || (dir === 'manifest' && key !== newestManifest) || walDetectable) out.push({ key, kind: 'delete' });
  }
  return out;
}

/** The newest manifest's walStart (undefined when it cannot be read: then no WAL object is deleted). */
function readWalStart(world: SimWorld, key: string | undefined): number | undefined {
  const inode = key === undefined ? undefined : world.raw(key);
  if (!inode) return undefined;
  try {
    return decodeManifest(inode.data, key!).walStart;
  } catch {
    return undefined;
  }
}

/** Where the last whole record of a log segment starts (records: u32 length, u32 crc, body). */
function lastRecordStart(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let last = 0;
  while (at + 8 <= bytes.length) {
    const length = view.getUint32(at);
    if (at + 8 + length > bytes.length) break;
    last = at;
    at += 8 + length;
  }
  return last;
}
