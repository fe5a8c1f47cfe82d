/**
 * Shard leases as create-only sequences (RFC 0003): reading the newest record of every shard, and
 * creating the next one.
 */
import { createObject } from '../objects/create-object.js';
import type { ObjectStore } from '../objects/object-store.js';
import { parseLeaseKey, type ClusterLayout } from './layout.js';
import { decodeLease, encodeLease, type LeaseRecord } from './records.js';

export interface ShardLeases {
  /** The newest record's seq, 0 when the shard never had a lease. */
  readonly newestSeq: number;
  /** Every record key of the shard, oldest first (the newest last). */
  readonly keys: readonly string[];
}

/**
 * The lease table from one listing of `leases/`: no record is read here (a member reads only the
 * records it must judge, see `readLease`), so a steady cluster costs one LIST per pass.
 */
export async function listLeaseTable(store: ObjectStore, layout: ClusterLayout, shards: number): Promise<ShardLeases[]> {
  const keys: string[][] = Array.from({ length: shards }, () => []);
  const seqs: number[] = new Array(shards).fill(0);
  const prefix = layout.leasesPrefix;
  for await (const info of store.list(prefix)) {
    const parsed = parseLeaseKey(info.key.slice(prefix.length));
    if (parsed && parsed.shard < shards) {
      keys[parsed.shard]!.push(info.key);
      seqs[parsed.shard] = Math.max(seqs[parsed.shard]!, parsed.seq);
    }
  }
  return keys.map((k, shard) => ({ newestSeq: seqs[shard]!, keys: k }));
}

/**
 * The newest readable record of a shard's listed keys (one deleted between list and get falls
 * back to the one before), through `cache` (records never change once created).
 */
export async function readNewestLease(store: ObjectStore, keys: readonly string[], cache: Map<string, LeaseRecord>): Promise<LeaseRecord | undefined> {
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i]!;
    const cached = cache.get(key);
    if (cached) return cached;
    const stored = await store.get(key);
    if (stored === undefined) continue;
    const record = decodeLease(stored.data, key);
    cache.set(key, record);
    return record;
  }
  return undefined;
}

/**
 * Creates lease record `record.seq` of `shard`, create-only. True when it is ours and still the
 * newest: a record after it means our seq had been retired and deleted and someone moved on
 * (RFC 0001's publish step 2, for the same reason). `checkLater` false skips that listing.
 */
export async function createLease(store: ObjectStore, layout: ClusterLayout, shard: number, record: LeaseRecord, checkLater = true): Promise<boolean> {
  const key = layout.leaseKey(shard, record.seq);
  const result = await createObject(store, key, encodeLease(record));
  if (!result.created) return false;
  return !checkLater || (await newestLeaseAfter(store, layout, shard, record.seq)) === undefined;
}

/** The newest lease record seq of `shard` past `seq` (one listing), undefined when there is none. */
export async function newestLeaseAfter(store: ObjectStore, layout: ClusterLayout, shard: number, seq: number): Promise<number | undefined> {
  const prefix = layout.leasesPrefix;
  let newest: number | undefined;
  for await (const info of store.list(layout.shardLeasePrefix(shard), { startAfter: layout.leaseKey(shard, seq) })) {
    const parsed = parseLeaseKey(info.key.slice(prefix.length));
    if (parsed) newest = Math.max(newest ?? 0, parsed.seq);
  }
  return newest;
}
