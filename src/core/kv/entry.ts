/** The unit the engine stores: one version of one key. */

export type EntryKind = 'put' | 'delete' | 'merge';

export const KIND_CODES: Record<EntryKind, number> = { put: 1, delete: 2, merge: 3 };
export const KIND_BY_CODE: readonly (EntryKind | undefined)[] = [undefined, 'put', 'delete', 'merge'];

/** A version of a key as it sits in a memtable, a WAL record or a table. */
export interface VersionedEntry {
  readonly key: Uint8Array;
  /** Commit sequence number; every write of one commit shares it. */
  readonly seq: number;
  readonly kind: EntryKind;
  /** Empty for deletes. */
  readonly value: Uint8Array;
}
