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
 *   failover_all_shards_ms
 *                      the same kill -9 to the moment the survivor runs every one of the killed
 *                      member's shards (engine open, worker started); `saturated: false` here,
 *                      and again in the saturated phase below (`saturated: true`)
 *   renew_lag_p99_ms   saturated phase: BUSY_LOOPS child processes spin on the CPU (this machine
 *                      has 2 cores), then 2 fresh members join beside them, run RUNS / 3 chains
 *                      and idle until SATURATED_MS (45 s) passed: the 99th percentile, over both
 *                      members, of how long after its due time each lease renewal was confirmed
 *                      (Cluster.renewalStats). Fields: the longest gap between renewals, round
 *                      trip and timer lag, and the churn over the phase: shards dropped and opens
 *                      failed (`drops`, `failed_opens`, from the members' warnings), shards taken
 *                      and passes that held takes back (`takes`, `stepped_back`, from their stats)
 *
 * `BENCH_CLUSTER_MEMBERS=2` runs only the 2-member configuration (and the saturated phase).
 *
 * Uses the child-process member of the crash tests (test/crash/cluster-member.ts). On this
 * 2-core machine the emulator (one request at a time) bounds absolute numbers; the ratios say
 * whether members add throughput.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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
/** Busy-loop processes beside the saturated phase: one per core of this 2-core machine. */
const BUSY_LOOPS = 2;
/** How long the saturated phase's members run (join, chains, idle) before their renewal figures are read. */
const SATURATED_MS = 45_000;

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

/** `count` processes spinning on the CPU until killed. */
function busyLoops(count: number): ChildProcess[] {
  return Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

async function stopLoops(loops: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    loops.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}

/** Kill -9 of `victim`: ms until `survivor` ran a step on one of its shards, and until it runs all of them. */
async function failover(victim: MemberProc, survivor: MemberProc): Promise<{ firstStepMs: number; allShardsMs: number; takenMs: number; lastOpenMs: number; shards: number }> {
  const shards = [...victim.owned];
  const stat = (k: string) => Number((survivor.renewal as Record<string, number> | undefined)?.[k] ?? NaN);
  const takesBefore = stat('takes');
  victim.child.kill('SIGKILL');
  const killedAt = Date.now();
  survivor.firstRanAt.clear();
  // When the survivor had taken every lease (its stats, printed within 50 ms of a change; NaN from a member without them).
  const taken = waitUntil('the survivor took the leases', () => !(stat('takes') < takesBefore + shards.length), 120_000, [survivor]).then(() => Date.now() - killedAt);
  const all = waitUntil("all of a killed member's shards run elsewhere", () => shards.every((s) => survivor.owned.includes(s)), 120_000, [survivor]).then(() => Date.now() - killedAt);
  await waitUntil("a step on a killed member's shard", () => shards.some((s) => survivor.firstRanAt.has(s)), 120_000, [survivor]);
  const firstAt = Math.min(...shards.map((s) => survivor.firstRanAt.get(s) ?? Infinity));
  const allShardsMs = await all;
  return { firstStepMs: firstAt - killedAt, allShardsMs, takenMs: await taken, lastOpenMs: stat('lastOpenMs'), shards: shards.length };
}

/** Churn counted from the members' warnings and stats (the stats' extra fields only where the member reports them). */
function churn(members: readonly MemberProc[]): { drops: number; failedOpens: number; takes: number; steppedBack: number; behind: number } {
  const warned = (re: RegExp) => members.reduce((n, m) => n + m.warnings.filter((w) => re.test(w)).length, 0);
  const stat = (k: 'takes' | 'steppedBack') => members.reduce((n, m) => n + Number((m.renewal as Record<string, number> | undefined)?.[k] ?? 0), 0);
  return { drops: warned(/shard dropped/), failedOpens: warned(/failed to open/), takes: stat('takes'), steppedBack: stat('steppedBack'), behind: warned(/member is behind/) };
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
    for (const count of (process.env.BENCH_CLUSTER_MEMBERS ?? '1,2,4').split(',').map(Number)) {
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
          // Failover: keep work flowing, kill one member, time the first step on one of its shards
          // elsewhere and the moment all of them run there.
          const [victim, survivor] = members as [MemberProc, MemberProc];
          survivor.send(`submit ${100_000} ${100_000 + RUNS}`);
          await sleep(500);
          const f = await failover(victim, survivor);
          ctx.emit('failover_ms', f.firstStepMs, 'ms', { members: 2, shards_moved: f.shards, lease_ms: LEASE_MS, max_clock_skew_ms: SKEW_MS });
          ctx.emit('failover_all_shards_ms', f.allShardsMs, 'ms', { members: 2, shards_moved: f.shards, lease_ms: LEASE_MS, max_clock_skew_ms: SKEW_MS, saturated: false, leases_taken_ms: f.takenMs, last_open_ms: f.lastOpenMs });
          log(`  failover: ${f.firstStepMs} ms from kill -9 to the first step on a moved shard, ${f.takenMs} ms until their leases were taken, ${f.allShardsMs} ms until all ${f.shards} run elsewhere (lease ${LEASE_MS} ms + skew ${SKEW_MS} ms; the last open took ${f.lastOpenMs} ms)`);
        }
      } finally {
        await stopAll(members);
      }
    }
    await saturated(ctx, server);
  } finally {
    await target.close();
  }
}

/**
 * Two members started beside BUSY_LOOPS spinning processes (so every renewal they make is under a
 * saturated CPU): lease renewal lag and churn while they join, run chains and idle for
 * SATURATED_MS in all, then a kill -9 failover with the CPU still saturated.
 */
async function saturated(ctx: BenchContext, server: Server): Promise<void> {
  const prefix = `bench-cluster-${randomBytes(4).toString('hex')}/`;
  const loops = busyLoops(BUSY_LOOPS);
  const started = Date.now();
  const members = startMembers(server, prefix, 2);
  try {
    const joinMs = await waitUntil('2 members own a fair share', () => fairlyOwned(members, SHARDS), 120_000, members);
    const runs = Math.round(RUNS / 3);
    const chainMs = await chain(members, 0, runs);
    await sleep(Math.max(0, SATURATED_MS - (Date.now() - started)));
    const c = churn(members);
    const stats = members.map((m) => (m.renewal ?? {}) as Record<string, number>);
    const lagP99 = Math.max(...stats.map((r) => r.lagP99Ms ?? NaN));
    const fields = {
      members: 2,
      busy_loops: BUSY_LOOPS,
      lease_ms: LEASE_MS,
      duration_ms: Date.now() - started,
      join_ms: joinMs,
      runs,
      chain_ms: chainMs,
      renewals: stats.reduce((n, r) => n + (r.renewals ?? 0), 0),
      max_gap_ms: Math.max(...stats.map((r) => r.maxGapMs ?? 0)),
      max_round_trip_ms: Math.max(...stats.map((r) => r.maxRoundTripMs ?? 0)),
      max_tick_lag_ms: Math.max(...stats.map((r) => r.maxTickLagMs ?? 0)),
      drops: c.drops,
      failed_opens: c.failedOpens,
      takes: c.takes,
      stepped_back: c.steppedBack,
      behind_warnings: c.behind,
    };
    if (Number.isFinite(lagP99)) ctx.emit('renew_lag_p99_ms', lagP99, 'ms', fields);
    log(`  saturated (${BUSY_LOOPS} busy loops): renewal lag p99 ${lagP99} ms, ${JSON.stringify(fields)}`);
    const [victim, survivor] = members as [MemberProc, MemberProc];
    survivor.send(`submit ${200_000} ${200_000 + runs}`);
    await sleep(500);
    const f = await failover(victim, survivor);
    ctx.emit('failover_all_shards_ms', f.allShardsMs, 'ms', { members: 2, shards_moved: f.shards, lease_ms: LEASE_MS, max_clock_skew_ms: SKEW_MS, saturated: true, busy_loops: BUSY_LOOPS, first_step_ms: f.firstStepMs, leases_taken_ms: f.takenMs, last_open_ms: f.lastOpenMs });
    log(`  saturated failover: first step ${f.firstStepMs} ms, leases taken ${f.takenMs} ms, all ${f.shards} shards ${f.allShardsMs} ms after kill -9 (the last open took ${f.lastOpenMs} ms)`);
  } finally {
    await stopLoops(loops);
    await stopAll(members);
  }
}

const benchmarks: Benchmark[] = [{ name: 'cluster.chain', stores: ['s3'], run }];
export default benchmarks;
