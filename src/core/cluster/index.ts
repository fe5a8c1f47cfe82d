/**
 * Layer 5: a cluster of processes sharing the shards of one store (RFC 0003).
 *
 * Owns: the cluster record (shard count fixed at creation), member heartbeats (one live process
 * per member id; dead members' heartbeats collected), per-shard leases as create-only sequences
 * renewed on their own timer, the fair assignment of shards to live members (rendezvous hashing
 * with quotas), the hand-over and takeover of shards (each shard is its own engine, queue and
 * workflow runtime; opening it as writer fences the previous owner), and commands for shards
 * owned elsewhere through create-only inbox objects.
 *
 * Errors (all `TaqubaError`): INVALID_CONFIG (options, or a shard count that differs from the
 * cluster's), INVALID_ARGUMENT (run ids, keys, specs), LOCKED (`member_id_in_use`: another live
 * process has this member id), TIMEOUT (no owner answered a command),
 * CLOSED (after `leave`), CORRUPT_DATA (an undecodable cluster object), the runtime's errors
 * (INPUT_MISMATCH, ...), and the store's STORE_*.
 *
 * Never: import a platform API, or rely on compare-and-swap for safety (create-only puts, so it
 * holds across processes on the filesystem store too; the heartbeat's `ifMatch` only serves to
 * notice a second process under one member id).
 */
export { openCluster, Cluster } from './cluster.js';
export type { ClusterOptions } from './cluster-options.js';
