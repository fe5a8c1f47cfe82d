/**
 * Taking over an engine path as its writer (docs/rfcs/0001-kv-engine.md, "Open as writer"):
 *
 *  1. Read the newest manifest. None: prove the path holds no engine objects (CORRUPT_DATA
 *     otherwise, and nothing is written) and start from the empty state.
 *  2. Create the next manifest with `epoch + 1`, create-only (fault point `open:bump-epoch`).
 *     Lost: back to 1. An older writer's next manifest create now fails, so it can publish no
 *     table and retire no WAL object.
 *  3. List past our manifest. A newer one means ours landed on an id a writer had retired, and is
 *     a dead branch: back to 1.
 *  4. (recovery/recovery.ts) Replay WAL objects from `walStart`, noting each epoch's first object (a fence).
 *  5. Fence the WAL (`fenceWal`, fault point `open:fence-wal`) and replay the ids the older
 *     writer stored first. Our first fence is kept forever, so the older writer's next WAL put
 *     fails however long it was delayed.
 *  6. (KvDb.recover) Start the WAL writer after the fence; collect garbage in the background.
 */
import { toHex } from '../../bytes.js';
import { CorruptDataError, StoreUnavailableError } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { FaultHook } from '../kv-options.js';
import { emptyManifest } from '../manifest/manifest.js';
import type { ManifestStore, VersionedManifest } from '../manifest/manifest-store.js';
import { walObjectKey } from '../format.js';
import { encodeWalObject } from '../wal/wal-format.js';

const CLAIM_ATTEMPTS = 16;
/** WAL ids fenced per round (see fenceWal). */
const FENCE_WINDOW = 4;

/** Steps 1-3: a manifest naming this writer's new epoch, the newest one of the path. */
export async function claimEpoch(store: ObjectStore, path: string, manifests: ManifestStore, faults?: FaultHook): Promise<VersionedManifest> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const current = (await manifests.latest()) ?? (await emptyPath(store, path, manifests));
    if (!current) continue;
    const next = { ...current.data, epoch: current.data.epoch + 1, writer: randomWriterId() };
    await faults?.('open:bump-epoch', { epoch: next.epoch });
    const id = current.id + 1;
    if ((await manifests.tryCreate(id, next)) && !(await manifests.hasNewer(id))) return { id, data: next };
  }
  throw new StoreUnavailableError(`could not claim the writer epoch: too many concurrent openers. path=${path}`, { path });
}

/**
 * The starting point of a path with no manifest, after proving no engine object is there.
 * Undefined when a manifest appeared meanwhile (a concurrent first open): start over.
 */
async function emptyPath(store: ObjectStore, path: string, manifests: ManifestStore): Promise<VersionedManifest | undefined> {
  const legacy = `${path}/manifest`;
  const found = (await firstKey(store, `${path}/wal/`)) ?? (await firstKey(store, `${path}/sst/`)) ?? ((await store.get(legacy)) ? legacy : undefined);
  if (found === undefined) return { id: 0, data: emptyManifest() };
  if ((await manifests.ids()).length > 0) return undefined;
  if (found === legacy) {
    throw new CorruptDataError(`a single manifest object is the layout of an older format, which this version cannot read. object=${legacy}`, { object: legacy, problem: 'old_format' });
  }
  throw new CorruptDataError(`engine objects exist but no manifest names them; refusing to start an empty history over them. object=${found}`, { object: found, problem: 'manifest_missing' });
}

function randomWriterId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(12)));
}

async function firstKey(store: ObjectStore, prefix: string): Promise<string | undefined> {
  for await (const info of store.list(prefix)) return info.key;
  return undefined;
}

export interface WalFence {
  /** Our first fence object: kept forever, it is where the older writer's next put lands. */
  readonly firstOwned: number;
  /** The id of our first WAL batch. */
  readonly nextId: number;
}

/**
 * An id inside our windows that another writer stored first. `afterOwn`: the id before it is
 * ours, so it was empty when we fenced it; commits here would mean a WAL object was lost.
 */
export interface TakenId {
  readonly id: number;
  readonly afterOwn: boolean;
}

/**
 * Step 5. Stores empty WAL objects over a window of ids at once, create-only, and repeats until
 * the window's last id is ours. An older writer stores ids one after another, so the ids it won
 * are a prefix of the window and ours the rest; once the last is ours it can store nothing more.
 * One round costs one put time, as one of its batches does, so a busy writer cannot stay ahead
 * (probing one id at a time, it could, forever). Each round's taken ids go to `onTaken` (replay)
 * before the next round: one holding a newer epoch means we were overtaken, and the handler's
 * FENCED stops us before we fence further into the newer writer's ids.
 */
export async function fenceWal(store: ObjectStore, path: string, epoch: number, fromId: number, onTaken: (taken: readonly TakenId[]) => Promise<void>, faults?: FaultHook): Promise<WalFence> {
  let firstOwned: number | undefined;
  let nextId = fromId;
  for (let lastOwned = false; !lastOwned; nextId += FENCE_WINDOW) {
    await faults?.('open:fence-wal', { id: nextId });
    const window = Array.from({ length: FENCE_WINDOW }, (_, i) => nextId + i);
    const owned = await Promise.all(window.map((id) => plugWalId(store, path, epoch, id)));
    const taken: TakenId[] = [];
    for (let i = 0; i < FENCE_WINDOW; i++) {
      if (owned[i]) firstOwned ??= window[i];
      else taken.push({ id: window[i], afterOwn: i > 0 && owned[i - 1] });
    }
    await onTaken(taken);
    lastOwned = owned[FENCE_WINDOW - 1];
  }
  return { firstOwned: firstOwned!, nextId };
}

/**
 * Stores an empty WAL object at `id`; false when someone else stored that id first. A fence's
 * bytes depend only on (epoch, id), so a lost create that holds them was ours (a retried request).
 */
async function plugWalId(store: ObjectStore, path: string, epoch: number, id: number): Promise<boolean> {
  return (await createObject(store, walObjectKey(path, id), encodeWalObject(epoch, id, []))).created;
}
