/**
 * The cluster's own objects (RFC 0003): the cluster record, member heartbeats, lease records,
 * inbox commands and replies. MessagePack records with a kind and a format version; anything
 * else read back is CORRUPT_DATA naming the object.
 */
import { decodeRecord, encodeRecord } from '../codec.js';
import { CorruptDataError } from '../errors.js';

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

/**
 * A command for a shard's owner. Bytes stay bytes (MessagePack carries them). `commandId` is kept
 * with the command's effect in the shard (the command ledger), so a command applied again (lost
 * reply, owner died after applying, batch re-read after a failover, a sender's retry) answers
 * from that record. Batches written before command ids existed have none.
 */
export type ClusterCommand = { readonly commandId?: string } & (
  | {
      readonly type: 'submit';
      readonly runId: string;
      readonly input?: Uint8Array;
      readonly headers?: Record<string, string>;
      readonly priority?: number;
      readonly maxAttemptsPerStep?: number;
      readonly runAt?: number;
      readonly kvWrites?: [Uint8Array, Uint8Array][];
    }
  | {
      /** A typed job's run: `input` is the job envelope (name and encoded input). */
      readonly type: 'submitJob';
      readonly runId: string;
      readonly input: Uint8Array;
      readonly headers?: Record<string, string>;
      readonly priority?: number;
      readonly maxAttemptsPerStep?: number;
      readonly runAt?: number;
    }
  | { readonly type: 'signal'; readonly correlationKey: string; readonly payload: Uint8Array }
  | { readonly type: 'cancel'; readonly runId: string }
  /** Cancels a typed job's run (in the shard's jobs runtime). */
  | { readonly type: 'cancelJob'; readonly runId: string }
);

/** The owner's answer: the call's value, or the typed error it rejected with. */
export type CommandReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly details: Record<string, unknown> };

type Kind = 'cluster' | 'member' | 'lease' | 'command' | 'reply';

function encode(kind: Kind, body: object): Uint8Array {
  return encodeRecord({ kind, format: FORMAT, body });
}

function decode(kind: Kind, bytes: Uint8Array, key: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = decodeRecord(bytes);
  } catch (e) {
    throw new CorruptDataError(`cluster object does not decode. object=${key}`, { object: key, problem: 'undecodable' }, e);
  }
  const v = value as { kind?: unknown; format?: unknown; body?: unknown } | null;
  if (typeof v !== 'object' || v === null || v.kind !== kind || v.format !== FORMAT || typeof v.body !== 'object' || v.body === null) {
    throw new CorruptDataError(`not a ${kind} record of format ${FORMAT}. object=${key}`, { object: key, problem: 'wrong_kind' });
  }
  return v.body as Record<string, unknown>;
}

function need(ok: boolean, kind: Kind, key: string, field: string): void {
  if (!ok) throw new CorruptDataError(`${kind} record field ${field} is missing or malformed. object=${key}`, { object: key, field });
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

/** One inbox object: the commands one sender batched for one shard, applied in order. */
export const encodeCommands = (commands: readonly ClusterCommand[]): Uint8Array => encode('command', { commands });
export function decodeCommands(bytes: Uint8Array, key: string): ClusterCommand[] {
  const b = decode('command', bytes, key);
  need(
    Array.isArray(b.commands) &&
      (b.commands as { type?: unknown; commandId?: unknown }[]).every(
        (c) => ['submit', 'submitJob', 'signal', 'cancel', 'cancelJob'].includes(String(c?.type)) && (c.commandId === undefined || typeof c.commandId === 'string'),
      ),
    'command',
    key,
    'commands',
  );
  return b.commands as ClusterCommand[];
}

/** One reply object: the answers to an inbox object's commands, in the same order. */
export const encodeReplies = (replies: readonly CommandReply[]): Uint8Array => encode('reply', { replies });
export function decodeReplies(bytes: Uint8Array, key: string): CommandReply[] {
  const b = decode('reply', bytes, key);
  need(Array.isArray(b.replies), 'reply', key, 'replies');
  return b.replies as CommandReply[];
}
