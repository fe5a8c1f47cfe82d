/**
 * The cluster's own objects (RFC 0003): the cluster record, member heartbeats, lease records
 * (inbox commands and replies are the runtime's: workflow/commands/run-command.ts). MessagePack records with a kind and a format version; anything
 * else read back is CORRUPT_DATA naming the object.
 */
import { decodeKindRecord, encodeKindRecord, malformedField } from '../kind-records.js';

const FORMAT = 1;

export interface ClusterRecord {
  readonly shards: number;
}

export interface MemberRecord {
  readonly memberId: string;
  /** Member clock, epoch ms. */
  readonly beatAt: number;
  readonly leaseMs: number;
}

export interface LeaseRecord {
  readonly seq: number;
  /** `hold`: `owner` holds the shard until `expiresAt` (owner clock). `release`: free now. */
  readonly kind: 'hold' | 'release';
  readonly owner: string;
  readonly expiresAt: number;
  /** Random per record, so two members' records are never byte-equal (createObject compares bytes). */
  readonly nonce: string;
}

type Kind = 'cluster' | 'member' | 'lease';

function encode(kind: Kind, body: object): Uint8Array {
  return encodeKindRecord(kind, FORMAT, body);
}

function decode(kind: Kind, bytes: Uint8Array, key: string): Record<string, unknown> {
  return decodeKindRecord(bytes, key, kind, FORMAT, 'cluster object');
}

function need(ok: boolean, kind: Kind, key: string, field: string): void {
  if (!ok) throw malformedField(kind, key, field);
}

export const encodeCluster = (r: ClusterRecord): Uint8Array => encode('cluster', r);
export function decodeCluster(bytes: Uint8Array, key: string): ClusterRecord {
  const b = decode('cluster', bytes, key);
  need(Number.isSafeInteger(b.shards), 'cluster', key, 'shards');
  return { shards: b.shards as number };
}

export const encodeMember = (r: MemberRecord): Uint8Array => encode('member', r);
export function decodeMember(bytes: Uint8Array, key: string): MemberRecord {
  const b = decode('member', bytes, key);
  need(typeof b.memberId === 'string' && typeof b.beatAt === 'number' && typeof b.leaseMs === 'number', 'member', key, 'memberId/beatAt/leaseMs');
  return { memberId: b.memberId as string, beatAt: b.beatAt as number, leaseMs: b.leaseMs as number };
}

export const encodeLease = (r: LeaseRecord): Uint8Array => encode('lease', r);
export function decodeLease(bytes: Uint8Array, key: string): LeaseRecord {
  const b = decode('lease', bytes, key);
  need(Number.isSafeInteger(b.seq) && (b.kind === 'hold' || b.kind === 'release') && typeof b.owner === 'string' && typeof b.expiresAt === 'number', 'lease', key, 'seq/kind/owner/expiresAt');
  return { seq: b.seq as number, kind: b.kind as 'hold' | 'release', owner: b.owner as string, expiresAt: b.expiresAt as number, nonce: String(b.nonce) };
}
