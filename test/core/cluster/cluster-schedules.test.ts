/**
 * Cron schedules in a cluster (`openCluster({ schedules })`): each schedule fires on the shard
 * its name hashes to, once per tick across members; its firings' runs are routed to that shard
 * (`result` from any member finds them); a halted owner's shard moves and the new owner goes on
 * from the recorded firing (no tick skipped, none twice); the schedules are listed from any
 * member; bad schedules are refused at open.
 */
import { describe, expect, it } from 'vitest';
import type { Cluster, ClusterOptions } from '../../../src/core/cluster/index.js';
import { firingRunIdOn, scheduleShard } from '../../../src/core/cluster/cluster-schedules.js';
import { shardOfText } from '../../../src/core/cluster/layout.js';
import type { AnySchedule } from '../../../src/core/cron/index.js';
import { defineJob } from '../../../src/core/jobs/index.js';
import { defineWorkflow } from '../../../src/core/workflow/index.js';
import { MockClock } from '../../../src/core/clock.js';
import { clusterWorld, SHARDS, type ClusterWorld } from './cluster-harness.js';

const MINUTE = 60_000;
/**
 * Few shards and slow polls: minutes of mock time pass in seconds (every poll loop of every shard
 * wakes per advance). Steps of 250 ms stay well within the leases' renewal period (1 s).
 */
const SCHEDULE_SHARDS = 4;
const lean: Partial<ClusterOptions> = { shards: SCHEDULE_SHARDS, inboxPollMs: 200, runtimeOptions: { pollIntervalMs: 500 } };

/** Advances mock time in steps of 250 ms until `cond` holds; throws after `maxMs` of mock time. */
async function minutesUntil(w: ClusterWorld, what: string, cond: () => boolean | Promise<boolean>, maxMs: number): Promise<void> {
  const start = w.clock.now();
  while (!(await cond())) {
    if (w.clock.now() - start > maxMs) throw new Error(`not reached within ${maxMs} ms of mock time: ${what}`);
    await w.clock.advance(250);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Every shard owned by exactly one of `members`, shared as evenly as can be. */
function shared(members: readonly Cluster[]): boolean {
  const counts = members.map((m) => m.ownedShards().length);
  const owned = new Set(members.flatMap((m) => m.ownedShards()));
  return owned.size === SCHEDULE_SHARDS && counts.reduce((a, b) => a + b, 0) === SCHEDULE_SHARDS && Math.max(...counts) - Math.min(...counts) <= 1;
}

/** Run ids whose step ran, by member (a zombie's step may run again on the next owner: a set per id). */
const ran = new Map<string, Set<string>>();
const digest = defineWorkflow({
  name: 'digest',
  run: (ctx, topic: string) =>
    ctx.step('note', () => {
      ran.set(ctx.runId, ran.get(ctx.runId) ?? new Set());
      return `digest of ${topic}`;
    }),
});
const tally = defineJob({ name: 'tally', run: async (n: number) => n + 1 });

const schedules: readonly AnySchedule[] = [
  { name: 'minutely-digest', cron: '* * * * *', start: [digest, 'news'] },
  { name: 'minutely-tally', cron: '* * * * *', job: [tally, 41] },
];
const options = { ...lean, runner: { workflows: [digest] }, jobs: [tally], schedules };

/** The fire time of a firing's run id (`cron-{name}-{F}` or `..._{k}`). */
const fireTimeOf = (runId: string): number => Number(/-(\d+)(_\d+)?$/.exec(runId)![1]);

describe('cluster schedules', () => {
  it('each schedule fires on its shard once per tick across members; its runs are routed there and read from any member', { timeout: 60_000 }, async () => {
    ran.clear();
    const w = clusterWorld();
    const members = [await w.open('a', options), await w.open('b', options)];
    const client = await w.open('web', { ...options, takesShards: false });
    await w.until('fair ownership', () => shared(members));
    const startMs = w.clock.now();
    await minutesUntil(w, 'two digests', () => ran.size >= 2, 3 * MINUTE);

    const listed = await w.drive(client.listSchedules());
    expect(listed.map((s) => [s.name, s.declared])).toEqual([
      ['minutely-digest', true],
      ['minutely-tally', true],
    ]);
    for (const s of listed) {
      expect(s.lastFireId, s.name).toBeDefined();
      // Fired on its own shard, with a run id of that shard.
      expect(client.shardOf(s.lastFireId!)).toBe(scheduleShard(s.name, SCHEDULE_SHARDS));
    }
    const [digestSchedule, tallySchedule] = listed;
    expect(await w.drive(client.workflowRun(digest, digestSchedule!.lastFireId!).result())).toBe('digest of news');
    expect(await w.drive(client.jobHandle(tally, tallySchedule!.lastFireId!).result())).toBe(42);

    // One run per minute since the start, none twice.
    const fireTimes = [...ran.keys()].map(fireTimeOf).sort();
    const first = fireTimes[0]!;
    expect(first).toBeGreaterThan(startMs - MINUTE);
    expect(fireTimes).toEqual(fireTimes.map((_, i) => first + i * MINUTE));
  });

  it('a halted owner: the shard moves and the new owner fires the next tick once; a cluster back after ticks passed makes up the one recorded firing', { timeout: 60_000 }, async () => {
    ran.clear();
    const w = clusterWorld();
    const members = [await w.open('a', options), await w.open('b', options), await w.open('z', options)];
    await w.until('fair ownership', () => shared(members));
    // The member that fires the digest halts right after a firing (a zombie: its workers run on
    // until the new owner's open fences them, so both wake for the next tick).
    const shard = scheduleShard('minutely-digest', SCHEDULE_SHARDS);
    const owner = members.find((m) => m.ownedShards().includes(shard))!;
    await minutesUntil(w, 'a digest', () => ran.size >= 1, 2 * MINUTE);
    owner.halt();
    const others = members.filter((m) => m !== owner);
    await minutesUntil(w, 'the others own every shard', () => shared(others), MINUTE);
    await minutesUntil(w, 'a digest after the move', () => ran.size >= 2, 2 * MINUTE);
    const [before, after] = [...ran.keys()].map(fireTimeOf).sort();
    expect(after).toBe(before! + MINUTE);

    // Everyone leaves; two and a half minutes pass with no member; one comes back.
    await w.drive(Promise.all(members.map((m) => m.leave())));
    await expect(others[0]!.listSchedules()).rejects.toMatchObject({ code: 'CLOSED' });
    await w.clock.advance(150_000);
    const back = await w.open('n', options);
    await minutesUntil(w, 'the overdue digest', () => ran.size >= 3, MINUTE);
    const ids = [...ran.keys()];
    const fireTimes = ids.map(fireTimeOf).sort();
    // The one recorded firing (a minute after the last), not the two ticks after it: no backfill.
    expect(fireTimes).toEqual([before, after, after! + MINUTE]);
    for (const id of ids) expect(shardOfText(id, SCHEDULE_SHARDS)).toBe(shard);
    const schedule = (await w.drive(back.listSchedules())).find((s) => s.name === 'minutely-digest')!;
    expect(schedule.lastFireMs).toBe(after! + MINUTE);
    // Then the first tick after now.
    expect(schedule.nextFireMs).toBeGreaterThan(w.clock.now());
    expect(schedule.nextFireMs - w.clock.now()).toBeLessThanOrEqual(MINUTE);
    expect(schedule.nextFireMs % MINUTE).toBe(0);
  });

  it('firing run ids: fixed per fire time, on the given shard, the plain id when it lands there', () => {
    const idOf = firingRunIdOn(5, SHARDS);
    for (let minute = 0; minute < 50; minute++) {
      const fireMs = 1_700_000_040_000 + minute * MINUTE;
      const id = idOf('nightly', fireMs);
      expect(shardOfText(id, SHARDS)).toBe(5);
      expect(idOf('nightly', fireMs)).toBe(id);
      expect(id === `cron-nightly-${fireMs}` || id.startsWith(`cron-nightly-${fireMs}_`)).toBe(true);
    }
    expect(firingRunIdOn(0, 1)('x', 60_000)).toBe('cron-x-60000');
    // The longest name and fire time at the largest shard count still make a valid run id.
    expect(firingRunIdOn(9998, 9999)('n'.repeat(100), 9_999_999_999_999).length).toBeLessThanOrEqual(128);
  });

  it("cronOptions reach each shard's scheduler: its own clock and logger; bad ones are refused at open", { timeout: 60_000 }, async () => {
    ran.clear();
    const w = clusterWorld();
    // The schedulers' clock is not the cluster's: firings follow it (a minute from 00:00:30 is 00:01:00 of 2025).
    const cronClock = new MockClock(Date.parse('2025-01-01T00:00:30Z'));
    const fired: string[] = [];
    const logger = { info: (message: string) => void (message.startsWith('[cron] fired') && fired.push(message)) };
    const member = await w.open('a', { ...options, schedules: [schedules[0]!], cronOptions: { clock: cronClock, logger, retryDelayMs: 50 } });
    await w.until('every shard owned', () => member.ownedShards().length === SCHEDULE_SHARDS);
    await minutesUntil(w, 'a digest on the cron clock', async () => (await cronClock.advance(5_000), ran.size >= 1), MINUTE);
    const [schedule] = await w.drive(member.listSchedules());
    expect(schedule!.lastFireMs! % MINUTE).toBe(0);
    expect(schedule!.lastFireMs).toBeGreaterThanOrEqual(Date.parse('2025-01-01T00:01:00Z'));
    expect(schedule!.lastFireMs).toBeLessThanOrEqual(cronClock.now());
    expect(fired[0]).toBe('[cron] fired schedule minutely-digest');

    await expect(w.open('b', { ...options, cronOptions: { retryDelayMs: 0 } })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'retryDelayMs' } });
    await expect(w.open('c', { ...options, cronOptions: { tickMs: 10 } as never })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(w.open('d', { ...options, cronOptions: { clock: {} as never } })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'clock' } });
  });

  it('refuses bad schedules at open: a plain enqueue, an unknown workflow or job, a bad expression', async () => {
    const w = clusterWorld();
    const other = defineWorkflow({ name: 'other', run: async () => 1 });
    const open = (s: readonly AnySchedule[]) => w.open('a', { ...options, schedules: s });
    await expect(open([{ name: 'q', cron: '* * * * *', enqueue: { queue: 'tasks' } }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_schedule', key: 'enqueue' } });
    await expect(open([{ name: 'o', cron: '* * * * *', start: [other, undefined] }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_workflow' } });
    await expect(open([{ name: 'j', cron: '0 0 * * * *', job: [tally, 1] }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_cron_expression' } });
    await expect(w.open('b', { schedules: [{ name: 'j', cron: '* * * * *', job: [tally, 1] }] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_schedule' } });
  });
});
