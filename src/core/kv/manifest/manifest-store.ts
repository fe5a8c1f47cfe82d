import { FencedError, PreconditionFailedError, isTaqubaError } from '../../errors.js';
import type { ObjectStore, ObjectVersion } from '../../objects/object-store.js';
import { manifestObjectKey } from '../format.js';
import { decodeManifest, emptyManifest, encodeManifest, type ManifestData } from './manifest.js';

export interface VersionedManifest {
  readonly data: ManifestData;
  readonly version: ObjectVersion;
}

/** Reads and conditionally writes the manifest object of one engine path. */
export class ManifestStore {
  readonly key: string;

  constructor(
    private readonly store: ObjectStore,
    path: string,
  ) {
    this.key = manifestObjectKey(path);
  }

  async read(): Promise<VersionedManifest | undefined> {
    const obj = await this.store.get(this.key);
    if (!obj) return undefined;
    return { data: decodeManifest(obj.data, this.key), version: obj.version };
  }

  /** Creates the first manifest; PRECONDITION_FAILED when another opener created it first. */
  async create(): Promise<VersionedManifest> {
    const data = emptyManifest();
    const { version } = await this.store.put(this.key, encodeManifest(data), { ifNoneMatch: '*' });
    return { data, version };
  }

  /**
   * Replaces the manifest if it is still at `expected`. A lost race means another writer moved
   * it, which for a writer always means it has been fenced: rejects with FENCED.
   */
  async update(expected: VersionedManifest, next: ManifestData): Promise<VersionedManifest> {
    try {
      const { version } = await this.store.put(this.key, encodeManifest(next), { ifMatch: expected.version });
      return { data: next, version };
    } catch (e) {
      if (!isTaqubaError(e, 'PRECONDITION_FAILED')) throw e;
      const current = await this.read().catch(() => undefined);
      throw new FencedError(
        `manifest changed under this writer. epoch=${expected.data.epoch} stored_epoch=${current?.data.epoch ?? 'unknown'}`,
        { epoch: expected.data.epoch, storedEpoch: current?.data.epoch },
        e,
      );
    }
  }

  /** Compare-and-swap that reports a lost race as PRECONDITION_FAILED (used while opening). */
  async tryUpdate(expected: VersionedManifest, next: ManifestData): Promise<VersionedManifest | undefined> {
    try {
      const { version } = await this.store.put(this.key, encodeManifest(next), { ifMatch: expected.version });
      return { data: next, version };
    } catch (e) {
      if (e instanceof PreconditionFailedError || isTaqubaError(e, 'PRECONDITION_FAILED')) return undefined;
      throw e;
    }
  }
}
