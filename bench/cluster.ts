/**
 * cluster.chain: a cluster of member processes (RFC 0003) on the S3 test server (in a child
 * process, see s3-chain.ts), 16 shards, with 1, 2 and 4 members in the same run. Each
 * configuration starts its members on a fresh prefix, waits until they own a fair share, then
 * submits RUNS chains of STEPS steps through all members (most submissions go through other
 * members' inboxes) and measures until every run has terminated.
 *
 *   steps_per_s        steps completed per second, submission included; fields: members, and
 *                      `scaling` (steps_per_s over the 1-member figure of the same run)
 *   steps_per_wal_put  per shard: the steps a shard ran over its engine's WAL PUTs (the cluster's
 *                      analogue of commits_per_put: each step is one durable settlement commit,
 *                      so this is the group-commit factor per shard); mean, min and max over shards
 *   failover_ms        with 2 members: kill -9 of one member to the first step the survivor runs
 *                      on one of the killed member's shards (lease expiry + skew + engine open)
 *
 * Uses the child-process member of the crash tests (test/crash/cluster-member.ts). On this
 * 2-core machine the emulator (one request at a time) bounds absolute numbers; the ratios say
 * whether members add throughput.
 */
import { randomBytes } from 'node:crypto';
import { fairlyOwned, MemberProc, sleep, waitUntil } from '../test/crash/cluster-procs.js';
import type { Config } from '../test/crash/cluster-member.js';
import { log, type BenchContext, type Benchmark } from './harness.js';
import { openBenchTarget } from './s3-chain.js';

const SHARDS = 16;
const RUNS = 300;
const STEPS = 4;
const LEASE_MS = 6000;
const SKEW_MS = 500;

type Server = { endpoint: string; bucket: string; region: string };

function startMembers(server: Server, prefix: string, count: number): MemberProc[] {
  return Array.from({ length: count }, (_, i) => {
    const config: Config = {
      store: { type: 's3', ...server, prefix },
      memberId: `m${i}`,
      shards: SHARDS,
      leaseMs: LEASE_MS,
      maxClockSkewMs: SKEW_MS,
      steps: STEPS,
      stepDelayMs: 0,
      report: true,
    };
    return new MemberProc(config);
  });
}

async function stopAll(members: readonly MemberProc[]): Promise<void> {
  for (const m of members) m.child.kill('SIGKILL');
  await Promise.all(members.map((m) => m.exited));
}

/** Submits runs `from..to` split across `members` and waits until they all terminated. Returns ms. */
async function chain(members: readonly MemberProc[], from: number, to: number): Promise<number> {
  const started = Date.now();
  const per = Math.ceil((to - from) / members.length);
  const before = new Set(members.flatMap((m) => m.terms)).size;
  members.forEach((m, i) => m.send(`submit ${from + i * per} ${Math.min(to, from + (i + 1) * per)}`));
  await waitUntil(`${to - from} runs terminated`, () => new Set(members.flatMap((m) => m.terms)).size - before >= to - from, 300_000, members);
  return Date.now() - started;
}

async function walStats(members: readonly MemberProc[]): Promise<{ mean: number; min: number; max: number }> {
  for (const m of members) {
    m.walPuts = undefined;
    m.send('stats');
  }
  await waitUntil('wal stats', () => members.every((m) => m.walPuts !== undefined), 30_000, members);
  const ratios: number[] = [];
  for (let s = 0; s < SHARDS; s++) {
    const steps = members.reduce((n, m) => n + (m.ran.get(s) ?? 0), 0);
    const puts = members.reduce((n, m) => n + (m.walPuts![String(s)] ?? 0), 0);
    if (puts > 0 && steps > 0) ratios.push(steps / puts);
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  return { mean: round(ratios.reduce((a, b) => a + b, 0) / Math.max(1, ratios.length)), min: round(Math.min(...ratios)), max: round(Math.max(...ratios)) };
}

async function run(ctx: BenchContext): Promise<void> {
  const target = await openBenchTarget();
  try {
    if (!target.server) {
      log('  cluster.chain needs the local S3 test server in a child process (unset TAQUBA_S3_BUCKET and BENCH_S3_INPROC); skipped');
      return;
    }
    const server = target.server;
    let single = 0;
    for (const count of [1, 2, 4]) {
      const prefix = `bench-cluster-${randomBytes(4).toString('hex')}/`;
      const members = startMembers(server, prefix, count);
      try {
        await waitUntil(`${count} members own a fair share`, () => fairlyOwned(members, SHARDS), 120_000, members);
        await chain(members, 0, 50); // warm-up: engines open, JIT
        const ms = await chain(members, 50, 50 + RUNS);
        const stepsPerS = (RUNS * STEPS * 1000) / ms;
        if (count === 1) single = stepsPerS;
        const wal = await walStats(members);
        ctx.emit('steps_per_s', stepsPerS, 'steps/s', { members: count, shards: SHARDS, runs: RUNS, steps_per_run: STEPS, duration_ms: ms, scaling: Math.round((stepsPerS / single) * 100) / 100 });
        ctx.emit('steps_per_wal_put', wal.mean, 'steps/put', { members: count, shards: SHARDS, min: wal.min, max: wal.max });
        log(`  ${count} member(s): ${stepsPerS.toFixed(0)} steps/s (x${(stepsPerS / single).toFixed(2)} of 1 member), ${wal.mean} steps per WAL put per shard (min ${wal.min}, max ${wal.max})`);

        if (count === 2) {
          // Failover: keep work flowing, kill one member, time the first step on one of its shards elsewhere.
          const [victim, survivor] = members as [MemberProc, MemberProc];
          survivor.send(`submit ${100_000} ${100_000 + RUNS}`);
          await sleep(500);
          const shards = [...victim.owned];
          victim.child.kill('SIGKILL');
          const killedAt = Date.now();
          survivor.firstRanAt.clear();
          await waitUntil('a step on a killed member\'s shard', () => shards.some((s) => survivor.firstRanAt.has(s)), 120_000, [survivor]);
          const firstAt = Math.min(...shards.map((s) => survivor.firstRanAt.get(s) ?? Infinity));
          ctx.emit('failover_ms', firstAt - killedAt, 'ms', { members: 2, shards_moved: shards.length, lease_ms: LEASE_MS, max_clock_skew_ms: SKEW_MS });
          log(`  failover: ${firstAt - killedAt} ms from kill -9 to the first step on a moved shard (lease ${LEASE_MS} ms + skew ${SKEW_MS} ms)`);
        }
      } finally {
        await stopAll(members);
      }
    }
  } finally {
    await target.close();
  }
}

const benchmarks: Benchmark[] = [{ name: 'cluster.chain', stores: ['s3'], run }];
export default benchmarks;
