/**
 * Where a cluster's objects live under its name (RFC 0003 "Objects") and which shard a run or a
 * correlation key belongs to. One place, so the member, the inbox and readers agree.
 */
import type { InboxTarget } from '../workflow/commands/inbox.js';
import { utf8 } from '../bytes.js';
import { crc32c } from '../checksum.js';

/** Shard numbers in keys are zero-padded so listings come in shard order. */
const SHARD_DIGITS = 4;
/** Lease sequence numbers are zero-padded like manifest ids, so key order is numeric order. */
const SEQ_DIGITS = 20;

/** The largest shard count (4 digits in keys). */
export const MAX_SHARDS = 9999;

export function shardSegment(shard: number): string {
  return String(shard).padStart(SHARD_DIGITS, '0');
}

export function seqSegment(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, '0');
}

/** Object keys of one cluster. */
export class ClusterLayout {
  constructor(readonly name: string) {}

  get clusterKey(): string {
    return `${this.name}/cluster`;
  }
  get membersPrefix(): string {
    return `${this.name}/members/`;
  }
  memberKey(memberId: string): string {
    return `${this.membersPrefix}${memberId}`;
  }
  get leasesPrefix(): string {
    return `${this.name}/leases/`;
  }
  shardLeasePrefix(shard: number): string {
    return `${this.leasesPrefix}${shardSegment(shard)}/`;
  }
  leaseKey(shard: number, seq: number): string {
    return `${this.shardLeasePrefix(shard)}${seqSegment(seq)}`;
  }
  /** The engine path of the shard's queue (and so of its workflow runtime). */
  queuePath(shard: number): string {
    return `${this.name}/shards/${shardSegment(shard)}/queue`;
  }
  memoPrefix(shard: number): string {
    return `${this.name}/shards/${shardSegment(shard)}/memo`;
  }
  /** Every shard's inbox under one prefix, so an owner finds the commands of all its shards with one listing. */
  get inboxRoot(): string {
    return `${this.name}/inbox/`;
  }
  /** Memo prefix of the shard's typed jobs (their outcomes live there, readable by any member). */
  jobsMemoPrefix(shard: number): string {
    return `${this.name}/shards/${shardSegment(shard)}/jobs-memo`;
  }
  inboxPrefix(shard: number): string {
    return `${this.inboxRoot}${shardSegment(shard)}/`;
  }
  inboxKey(shard: number, commandId: string): string {
    return `${this.inboxPrefix(shard)}${commandId}`;
  }
  repliesPrefix(shard: number): string {
    return `${this.name}/shards/${shardSegment(shard)}/replies/`;
  }
  replyKey(shard: number, commandId: string): string {
    return `${this.repliesPrefix(shard)}${commandId}`;
  }
  /** The shard's inbox as a command sender addresses it. */
  shardInbox(shard: number): InboxTarget {
    return { inboxPrefix: this.inboxPrefix(shard), repliesPrefix: this.repliesPrefix(shard), describe: `the owner of shard ${shard}`, details: { shard } };
  }
}

/** The shard of a key below the inbox root, undefined for anything else. */
export function parseInboxKey(rest: string): number | undefined {
  const m = /^(\d{4})\/[^/]+$/.exec(rest);
  return m ? Number(m[1]) : undefined;
}

/** The cluster name and shard of an engine path made by `queuePath`; undefined for any other path. */
export function parseShardQueuePath(path: string): { cluster: string; shard: number } | undefined {
  const m = /^(.+)\/shards\/(\d{4})\/queue$/.exec(path);
  return m ? { cluster: m[1]!, shard: Number(m[2]) } : undefined;
}

/** Parses `<shard>/<seq>` below the leases prefix; undefined for anything else. */
export function parseLeaseKey(rest: string): { shard: number; seq: number } | undefined {
  const m = /^(\d{4})\/(\d{20})$/.exec(rest);
  if (!m) return undefined;
  return { shard: Number(m[1]), seq: Number(m[2]) };
}

/**
 * The text a correlation key is routed by: what precedes its first `#`, or the whole key. So
 * `${runId}#approval` lives in the shard of `runId`, where that run waits on it.
 */
export function routingText(correlationKey: string): string {
  const hash = correlationKey.indexOf('#');
  return hash < 0 ? correlationKey : correlationKey.slice(0, hash);
}

/** The shard of a run id (or of a routing text): CRC-32C of its UTF-8 bytes, modulo the shard count. Stable forever. */
export function shardOfText(text: string, shards: number): number {
  return crc32c(utf8(text)) % shards;
}
