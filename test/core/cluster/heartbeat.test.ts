/**
 * Member ids and heartbeats (RFC 0003 "Heartbeats and member ids"): a second live process with a
 * member id in use is refused with LOCKED, the later of two that met leaves with it, a restart
 * after a crash gets its shards back once their leases expired, and dead members' heartbeats are
 * collected after ten membership timeouts.
 *
 * The tests run concurrently: each has its own world (store, MockClock, members) and spends its
 * real time waiting on timer turns, not on the CPU. Each world's cleanup is registered on its own test.
 */
import { describe, expect, it } from 'vitest';
import { openCluster } from '../../../src/core/cluster/index.js';
import { decodeHeartbeat, encodeHeartbeat } from '../../../src/core/cluster/heartbeat.js';
import { ClusterLayout } from '../../../src/core/cluster/layout.js';
import { HEARTBEAT_GC_FACTOR } from '../../../src/core/cluster/members.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { utf8 } from '../../../src/core/bytes.js';
import { clusterWorld, EventLog, fair, LEASE_MS, owners, quiet, SHARDS, SKEW_MS, twoSteps } from './cluster-harness.js';

const layout = new ClusterLayout('c');
const TIMEOUT_MS = LEASE_MS + SKEW_MS;

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe.concurrent('one live process per member id', () => {
  // Before: two live processes with one id each took the other's shards as "ours from an earlier
  // life" (55 takes and drops each in 45 s on S3), with only generic warnings.
  it('a second process joining with a member id in use is refused with LOCKED naming the id; the first keeps every shard', async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const log = new EventLog(w.clock);
    const a = await w.open('a', { logger: log.logger('a') });
    const b = await w.open('b');
    await w.until('fair ownership', () => fair([a, b]));
    const before = a.ownedShards();
    const e = await w.drive(failure(openCluster(w.store, { name: 'c', shards: SHARDS, runner: twoSteps, memberId: 'a', leaseMs: LEASE_MS, maxClockSkewMs: SKEW_MS, clock: w.clock, logger: quiet })));
    expect(isTaqubaError(e, 'LOCKED'), String(e)).toBe(true);
    expect(isTaqubaError(e) && e.details.reason).toBe('member_id_in_use');
    expect((e as Error).message).toContain('member=a');
    await w.clock.advance(LEASE_MS);
    expect(a.ownedShards()).toEqual(before);
    expect(log.count(/dropped/)).toBe(0);
    expect(a.renewalStats().drops).toBe(0);
  });

  it('two processes starting with one id at the same moment: one of them is refused', async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const options = { name: 'c', shards: SHARDS, runner: twoSteps, memberId: 'same', leaseMs: LEASE_MS, maxClockSkewMs: SKEW_MS, clock: w.clock, logger: quiet };
    const results = await w.drive(Promise.allSettled([openCluster(w.store, options), openCluster(w.store, options)]));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(isTaqubaError((refused[0] as PromiseRejectedResult).reason, 'LOCKED')).toBe(true);
    const joined = results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<Awaited<ReturnType<typeof openCluster>>>;
    await w.until('the one that joined runs every shard', () => joined.value.ownedShards().length === SHARDS);
    joined.value.halt();
  });

  it('a member that meets an older process under its id (one it could not see beat when it joined) leaves with LOCKED; its shards move, its heartbeat stays', async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const log = new EventLog(w.clock);
    const a = await w.open('a');
    const b = await w.open('b', { logger: log.logger('b') });
    await w.until('fair ownership', () => fair([a, b]));
    const key = layout.memberKey('b');
    const mine = decodeHeartbeat((await w.store.get(key))!.data, key);
    // The older process beats over b's heartbeat.
    const older = { memberId: 'b', beatAt: w.clock.now(), leaseMs: LEASE_MS, incarnation: 'older-process', startedAt: mine.startedAt! - 1 };
    await w.store.put(key, encodeHeartbeat(older));
    await w.until('b stops', () => log.count(/member id is in use/) === 1, 10_000);
    const e = await w.drive(failure(b.submit({ runId: 'x', input: utf8('x') })));
    expect(isTaqubaError(e, 'LOCKED') && e.details.reason).toBe('member_id_in_use');
    // b handed its shards over; with b's heartbeat the older process's, b still counts as live
    // while it beats: here it does not, so a takes everything after b's timeout.
    await w.until('a runs every shard', () => a.ownedShards().length === SHARDS, 20_000);
    expect(b.ownedShards()).toEqual([]);
    expect(decodeHeartbeat((await w.store.get(key))!.data, key).incarnation, 'b left the other process\'s heartbeat alone').toBe('older-process');
    await w.drive(b.leave()); // already left: resolves
  });

  it('a member that meets a later process under its id keeps it, logs an error, and writes its beat over the other\'s', async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const log = new EventLog(w.clock);
    const a = await w.open('a', { logger: log.logger('a') });
    await w.until('a runs every shard', () => a.ownedShards().length === SHARDS);
    const key = layout.memberKey('a');
    const mine = decodeHeartbeat((await w.store.get(key))!.data, key);
    await w.store.put(key, encodeHeartbeat({ memberId: 'a', beatAt: w.clock.now(), leaseMs: LEASE_MS, incarnation: 'later-process', startedAt: mine.startedAt! + 1 }));
    await w.until('a logged the conflict', () => log.count(/also used by another process/) === 1, 5_000);
    await w.until('a beat over it', async () => decodeHeartbeat((await w.store.get(key))!.data, key).incarnation === mine.incarnation, 5_000);
    expect(a.ownedShards()).toHaveLength(SHARDS);
    expect((await w.drive(a.submit({ runId: 'still-works', input: utf8('x') }))).newlySubmitted).toBe(true);
  });

  it('a restart under the same id right after a crash joins after watching one beat interval, and takes its old shards once their leases expired', async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const a = await w.open('a');
    const b = await w.open('b');
    await w.until('fair ownership', () => fair([a, b]));
    const shardsOfA = a.ownedShards();
    a.halt(); // crash: no more beats or renewals (its engines stay open: a zombie)
    const crashedAt = w.clock.now();
    const again = await w.open('a');
    const joinedAt = w.clock.now();
    expect(joinedAt - crashedAt, 'the join watched the old heartbeat for about a beat interval').toBeGreaterThanOrEqual(LEASE_MS / 3);
    await w.until('the restarted a runs its shards again', () => shardsOfA.every((s) => again.ownedShards().includes(s)), 20_000);
    expect(w.clock.now() - crashedAt, 'not before the old leases expired (+ skew)').toBeGreaterThan(LEASE_MS * (2 / 3) + SKEW_MS);
    expect(owners([again, b]).every((o) => o.length === 1)).toBe(true);
  });
});

describe.concurrent('dead members\' heartbeats', () => {
  it(`a dead member's heartbeat is deleted by a live member after ${HEARTBEAT_GC_FACTOR} membership timeouts, not before`, async ({ onTestFinished }) => {
    const w = clusterWorld(undefined, { onFinished: onTestFinished });
    const log = new EventLog(w.clock);
    const a = await w.open('a', { logger: log.logger('a') });
    const b = await w.open('b');
    await w.until('fair ownership', () => fair([a, b]));
    b.halt();
    const diedAt = w.clock.now();
    await w.until('a runs every shard', () => a.ownedShards().length === SHARDS, 20_000);
    // Idle but for renewals (every second): steps of 200 ms.
    await w.until('almost ten timeouts', () => w.clock.now() - diedAt >= (HEARTBEAT_GC_FACTOR - 1) * TIMEOUT_MS, 60_000, 200);
    expect(await w.store.get(layout.memberKey('b')), 'kept for ten timeouts').toBeDefined();
    await w.until('collected', async () => (await w.store.get(layout.memberKey('b'))) === undefined, 3 * TIMEOUT_MS);
    expect(log.count(/heartbeat of a dead member collected/)).toBe(1);
    expect(await w.store.get(layout.memberKey('a'))).toBeDefined();
    // A process under b's id later joins afresh, and gets its share.
    const b2 = await w.open('b');
    await w.until('fair ownership again', () => fair([a, b2]), 20_000);
  }, 120_000);
});
