/**
 * Who should own each shard, given the live members (RFC 0003, member loop step 3): rendezvous
 * hashing with exact quotas. Every member computes the same table from the same live set.
 *
 * Each member gets floor(N/M) shards and N mod M of them (those ranked first by a hash of their
 * id) one more, so shares differ by at most one. Pairs (shard, member) are taken in descending
 * score order, each shard going to the first member with quota left: a member's best shards
 * stay its own when others join or leave, so a membership change moves about N/M shards.
 */
import { utf8 } from '../bytes.js';
import { crc32c } from '../checksum.js';

/** A 32-bit finaliser (MurmurHash3 fmix32): CRC-32C alone is linear, so near-equal inputs would score alike. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function rendezvousScore(memberId: string, shard: number): number {
  return mix(crc32c(utf8(`${memberId}/${shard}`)));
}

/** `owners[shard]` = the member id that should own it; empty members: every entry undefined. */
export function assignShards(shards: number, members: readonly string[]): (string | undefined)[] {
  const owners: (string | undefined)[] = new Array(shards).fill(undefined);
  const unique = [...new Set(members)].sort();
  if (unique.length === 0) return owners;
  const base = Math.floor(shards / unique.length);
  const extra = shards % unique.length;
  const byRank = [...unique].sort((a, b) => mix(crc32c(utf8(a))) - mix(crc32c(utf8(b))) || (a < b ? -1 : 1));
  const quota = new Map<string, number>(byRank.map((m, i) => [m, base + (i < extra ? 1 : 0)]));
  const pairs: { shard: number; member: string; score: number }[] = [];
  for (let s = 0; s < shards; s++) for (const m of unique) pairs.push({ shard: s, member: m, score: rendezvousScore(m, s) });
  pairs.sort((a, b) => b.score - a.score || a.shard - b.shard || (a.member < b.member ? -1 : 1));
  for (const p of pairs) {
    if (owners[p.shard] !== undefined) continue;
    const left = quota.get(p.member)!;
    if (left === 0) continue;
    owners[p.shard] = p.member;
    quota.set(p.member, left - 1);
  }
  return owners;
}
