/**
 * The manifest as a sequence of create-only objects, `<path>/manifest/<id>`: the newest id is
 * the current state. Creating id + 1 is the only way to change it, so two writers can never both
 * extend the same version, and no store needs a compare-and-swap (a filesystem's `link` is
 * enough, across processes too).
 *
 * Publish protocol (a writer moving from version `id` to `id + 1`):
 *  1. Create `id + 1`. Lost to another object: FENCED (fault point `<caller>:manifest-put`).
 *     A lost create whose object holds our own bytes (a retried request that had landed) is ours.
 *  2. List past `id + 1`. Anything there means a newer writer claimed the store and later
 *     retired the object we just recreated: FENCED, and our object is a dead branch nobody reads.
 *  3. Only then may the caller delete what the new version no longer names.
 */
import { FencedError, NotFoundError } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { manifestObjectKey, parseSequenceId } from '../format.js';
import { decodeManifest, encodeManifest, type ManifestData } from './manifest.js';

export interface VersionedManifest {
  /** Position in the manifest sequence. */
  readonly id: number;
  readonly data: ManifestData;
}

/** Lists and reads a manifest that vanishes in between (retired by the writer) this many times before giving up. */
const READ_ATTEMPTS = 8;

export class ManifestStore {
  constructor(
    private readonly store: ObjectStore,
    private readonly path: string,
  ) {}

  key(id: number): string {
    return manifestObjectKey(this.path, id);
  }

  private get prefix(): string {
    return `${this.path}/manifest/`;
  }

  /** Ids of the manifest objects after `afterId` (all when undefined), ascending. */
  async ids(afterId?: number): Promise<number[]> {
    const ids: number[] = [];
    const startAfter = afterId === undefined ? undefined : this.key(afterId);
    for await (const info of this.store.list(this.prefix, { startAfter })) {
      const id = parseSequenceId(info.key);
      if (id !== undefined) ids.push(id);
    }
    return ids.sort((a, b) => a - b);
  }

  /** The newest manifest, or undefined when none exists. CORRUPT_DATA when it fails its checks. */
  async latest(): Promise<VersionedManifest | undefined> {
    for (let attempt = 1; ; attempt++) {
      const ids = await this.ids();
      if (ids.length === 0) return undefined;
      const id = ids[ids.length - 1];
      const read = await this.read(id);
      if (read) return read;
      // Retired between the listing and the read: a newer one exists.
      if (attempt >= READ_ATTEMPTS) throw new NotFoundError(`manifest kept moving while being read. object=${this.key(id)}`, { object: this.key(id) });
    }
  }

  /** The manifest at `id`, or undefined when that object does not exist. */
  async read(id: number): Promise<VersionedManifest | undefined> {
    const key = this.key(id);
    const obj = await this.store.get(key);
    return obj && { id, data: decodeManifest(obj.data, key) };
  }

  /**
   * Creates manifest `id`. False when another writer's object is there. A create that fails
   * although the object holds exactly our bytes was our own (a retried request) and counts.
   */
  async tryCreate(id: number, data: ManifestData): Promise<boolean> {
    return (await createObject(this.store, this.key(id), encodeManifest(data))).created;
  }

  /** True when some manifest newer than `id` exists. */
  async hasNewer(id: number): Promise<boolean> {
    for await (const info of this.store.list(this.prefix, { startAfter: this.key(id) })) {
      if (parseSequenceId(info.key) !== undefined) return true;
    }
    return false;
  }

  /** Steps 1 and 2 of the publish protocol above. Rejects with FENCED when another writer owns the store. */
  async publish(current: VersionedManifest, next: ManifestData): Promise<VersionedManifest> {
    const id = current.id + 1;
    if (!(await this.tryCreate(id, next)) || (await this.hasNewer(id))) {
      throw new FencedError(`a newer writer owns the store. epoch=${next.epoch} manifest=${this.key(id)}`, { epoch: next.epoch, manifestId: id });
    }
    return { id, data: next };
  }
}
