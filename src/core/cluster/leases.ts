/**
 * Shard leases as create-only sequences (RFC 0002): reading the newest record of every shard, and
 * creating the next one.
 */
import { createObject } from '../objects/create-object.js';
import type { ObjectStore } from '../objects/object-store.js';
import { parseLeaseKey, type ClusterLayout } from './layout.js';
import { decodeLease, encodeLease, type LeaseRecord } from './records.js';

export interface ShardLeases {
  /** The newest record, undefined when the shard never had a lease. */
  readonly newest: LeaseRecord | undefined;
  /** Every record key of the shard, oldest first (for cleanup). */
  readonly keys: readonly string[];
}

/**
 * Reads the lease table: one listing of `leases/`, then a get of each shard's newest record unless
 * `cache` already holds that key. The cache keeps only the newest keys afterwards.
 */
export async function readLeaseTable(store: ObjectStore, layout: ClusterLayout, shards: number, cache: Map<string, LeaseRecord>): Promise<ShardLeases[]> {
  const keys: string[][] = Array.from({ length: shards }, () => []);
  const prefix = layout.leasesPrefix;
  for await (const info of store.list(prefix)) {
    const parsed = parseLeaseKey(info.key.slice(prefix.length));
    if (parsed && parsed.shard < shards) keys[parsed.shard]!.push(info.key);
  }
  const table = await Promise.all(
    keys.map(async (shardKeys): Promise<ShardLeases> => {
      // The newest whose object still reads: one deleted between list and get falls back to the one before.
      for (let i = shardKeys.length - 1; i >= 0; i--) {
        const key = shardKeys[i]!;
        const cached = cache.get(key);
        if (cached) return { newest: cached, keys: shardKeys };
        const stored = await store.get(key);
        if (stored === undefined) continue;
        const record = decodeLease(stored.data, key);
        cache.set(key, record);
        return { newest: record, keys: shardKeys };
      }
      return { newest: undefined, keys: shardKeys };
    }),
  );
  const keep = new Set(table.map((t) => t.keys[t.keys.length - 1]).filter((k): k is string => k !== undefined));
  for (const key of cache.keys()) if (!keep.has(key)) cache.delete(key);
  return table;
}

/**
 * Creates lease record `record.seq` of `shard`, create-only. True when it is ours and still the
 * newest: a record after it means our seq had been retired and deleted and someone moved on
 * (RFC 0001's publish step 2, for the same reason).
 */
export async function createLease(store: ObjectStore, layout: ClusterLayout, shard: number, record: LeaseRecord): Promise<boolean> {
  const key = layout.leaseKey(shard, record.seq);
  const result = await createObject(store, key, encodeLease(record));
  if (!result.created) return false;
  for await (const _later of store.list(layout.shardLeasePrefix(shard), { startAfter: key })) return false;
  return true;
}
