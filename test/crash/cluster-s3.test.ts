/**
 * A cluster of real Node processes on the S3 test server (RFC 0003): 3 members, 16 shards, runs
 * submitted through every member; one member is killed (-9) once a fifth of the runs have ended,
 * runs in flight and submissions still coming in through the others, and its shards move to the
 * others; every run terminates and every step and terminal effect commits exactly once. Then a
 * member joins and gets its share, and a member paused (SIGSTOP) past its lease, again with runs
 * in flight, loses its shards and, continued, commits nothing it ran after the stop. The runs in
 * flight at the kill and at the stop are counted from the committed effects and must be > 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOfText } from '../../src/core/cluster/layout.js';
import { S3ObjectStore } from '../../src/stores/s3/index.js';
import { startS3TestServer, type S3TestServer } from '../setup/s3-server.js';
import { committedEffects, effectMember, effectTime, fairlyOwned, MemberProc, waitUntil, waitWhileProgressing } from './cluster-procs.js';
import type { Config } from './cluster-member.js';

const SHARDS = 16;
/**
 * Runs before and after the kill. 300 + 120 leave about 60 runs in flight at the kill and 70 at
 * the stop (500 + 200 left 90-100 and 100-150 for 60 s of CPU, a sixth of it reading the effects
 * back through 16 readers that replay every WAL object); CLUSTER_TEST_RUNS asks for more.
 */
const RUNS = Number(process.env.CLUSTER_TEST_RUNS ?? 300);
/** Runs submitted through the member that is killed, all answered before the kill. */
const KILLED_MEMBER_RUNS = Math.ceil(RUNS / 10);
const EXTRA_RUNS = Math.ceil(RUNS * 0.4);
const STEPS = 2;
/**
 * How long a step takes. With 2 ms steps a run ended within a few hundred ms of its submission:
 * about 5 runs were in flight at the kill and none on the paused member's shards at the stop.
 */
const STEP_MS = 1000;
/**
 * Renewals run every leaseMs / 3 and a member gives a shard up leaseMs / 5 before expiry, so a
 * renewal round trip must stay under about 0.47 x leaseMs. On this 2-core machine with the CPU
 * saturated beside the test, the S3 test server's round trips reached 2.2 s (with a 6 s lease the
 * longest gap between renewals came within 0.5 s of a drop); 10 s leaves room for that.
 */
const LEASE_MS = 10_000;
const SKEW_MS = 500;
/**
 * Waits on work (submissions answered, runs ended) fail when nothing moved for this long, not at
 * a fixed deadline: the pace is the CPU-bound S3 test server's, on a machine shared with other
 * test files. Waits on membership (shards moving) keep fixed deadlines: those are the product's.
 */
const STALL_MS = 120_000;
/**
 * Membership changes (start, kill, join, pause) have fixed deadlines. Idle, each takes 10-20 s
 * (a lease plus skew, engine opens on S3); with the machine saturated (the suite, two busy
 * loops or the simulator beside it) a join once took over 60 s.
 */
const MEMBERSHIP_MS = 120_000;

let server: S3TestServer;
const procs: MemberProc[] = [];

beforeAll(async () => {
  server = await startS3TestServer();
});
afterAll(async () => {
  for (const p of procs) {
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
  }
  await Promise.all(procs.map((p) => p.exited));
  await server?.stop();
});

describe('a cluster of processes on S3 (kill -9, join, SIGSTOP)', () => {
  it('moves a killed member\'s shards, terminates every run exactly once, gives a joiner its share, and fences a paused member', async () => {
    const prefix = `cluster-${Date.now()}/`;
    const config = (memberId: string): Config => ({
      store: { type: 's3', endpoint: server.endpoint, bucket: server.bucket, region: server.region, prefix },
      memberId,
      shards: SHARDS,
      leaseMs: LEASE_MS,
      maxClockSkewMs: SKEW_MS,
      steps: STEPS,
      // Steps that take a while, so the kill and the stop land with steps running and runs in flight.
      stepDelayMs: STEP_MS,
      // `ran <shard>` per step: the pause waits for the paused member to be running a run.
      report: true,
    });
    const start = (id: string) => {
      const p = new MemberProc(config(id));
      procs.push(p);
      return p;
    };
    const t0 = Date.now();
    const phases: string[] = [];
    const phase = (name: string) => phases.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    const [a, b, c] = [start('a'), start('b'), start('c')];
    let live = [a, b, c];
    await waitUntil('3 members own a fair share', () => fairlyOwned(live, SHARDS), MEMBERSHIP_MS, live);

    phase('started');
    // Runs submitted through every member; most go through other members' inboxes. The member to
    // be killed submits a small share that is answered before the kill (a submission cut off by
    // the kill may or may not have been applied); the others keep submitting through the kill.
    c.send(`submit 0 ${KILLED_MEMBER_RUNS}`);
    const half = Math.ceil((RUNS - KILLED_MEMBER_RUNS) / 2);
    a.send(`submit ${KILLED_MEMBER_RUNS} ${KILLED_MEMBER_RUNS + half}`);
    b.send(`submit ${KILLED_MEMBER_RUNS + half} ${RUNS}`);
    const terminated = () => new Set(procs.flatMap((p) => p.terms)).size;
    const accepted = () => new Set(procs.flatMap((p) => p.accepted));
    // Submissions answered and runs ended both count as progress.
    const work = () => procs.reduce((n, p) => n + p.accepted.length + p.terms.length, 0);
    await waitWhileProgressing('the killed member\'s submissions answered and a fifth of the runs ended', () => c.submitted === KILLED_MEMBER_RUNS && terminated() >= RUNS / 5, work, STALL_MS, live);

    phase('a fifth ended');
    // kill -9 one member mid-run, submissions still coming in through the others.
    const killedShards = [...c.owned];
    const atKill = { acceptedRuns: accepted(), ended: terminated(), pending: RUNS - accepted().size };
    const killedAt = Date.now();
    c.child.kill('SIGKILL');
    await c.exited;
    live = [a, b];
    const failoverMs = await waitUntil('the killed member\'s shards move', () => fairlyOwned(live, SHARDS), MEMBERSHIP_MS, live);
    expect(killedShards.length).toBeGreaterThan(0);
    console.log(`[cluster-s3] failover of ${killedShards.length} shards after kill -9: ${failoverMs} ms (lease ${LEASE_MS} ms + skew ${SKEW_MS} ms)`);
    await waitWhileProgressing(`all ${RUNS} runs submitted and terminated`, () => a.submitted + b.submitted === RUNS - KILLED_MEMBER_RUNS && terminated() >= RUNS, work, STALL_MS, live);

    phase('failed over');
    // A member joining later gets its share.
    const d = start('d');
    live = [a, b, d];
    await waitUntil('the joiner gets its share', () => fairlyOwned(live, SHARDS), MEMBERSHIP_MS, live);
    expect(d.owned.length).toBeGreaterThanOrEqual(5);

    phase('joined');
    // A member paused past its lease mid-run, submissions still coming in through the others: its
    // shards move; continued, it commits nothing it ran after the stop.
    const extraHalf = Math.ceil(EXTRA_RUNS / 2);
    const bLaterStepsBefore = b.ranLaterSteps;
    a.send(`submit ${RUNS} ${RUNS + extraHalf}`);
    d.send(`submit ${RUNS + extraHalf} ${RUNS + EXTRA_RUNS}`);
    // Every earlier run has ended, so the first later step b runs now is the second of an extra
    // run on one of its shards, whose first step is committed (a next step starts only once the
    // step before it is durable): paused then, that run is in flight there, with a step committed
    // before the stop. Pausing at b's first step instead left no committed trace of the run when
    // its submission's answer had not come back yet; waiting for a share of the extra runs to end
    // could find b's already done.
    await waitWhileProgressing('the paused member to run a later step of an extra run', () => b.ranLaterSteps > bLaterStepsBefore, work, STALL_MS, live);
    const pausedShards = [...b.owned];
    const atStop = { acceptedRuns: accepted(), ended: terminated(), pending: RUNS + EXTRA_RUNS - accepted().size };
    const stoppedAt = Date.now();
    b.child.kill('SIGSTOP');
    live = [a, d];
    // b's own view is frozen: judge by the others owning every shard.
    await waitUntil('the paused member\'s shards move', () => a.owned.length + d.owned.length === SHARDS && new Set([...a.owned, ...d.owned]).size === SHARDS, MEMBERSHIP_MS, live);
    phase('paused member replaced');
    // Every run ends before b continues: once continued, b may take shards again and legitimately
    // run steps, so with nothing left to run any effect of b's after the stop is one it ran paused.
    await waitWhileProgressing(`all ${RUNS + EXTRA_RUNS} runs submitted and terminated`, () => accepted().size === RUNS + EXTRA_RUNS && terminated() >= RUNS + EXTRA_RUNS, work, STALL_MS, live);
    phase('all terminated');
    b.child.kill('SIGCONT');
    await waitUntil('the continued member drops its shards', () => b.owned.length === 0 || !b.owned.some((s) => pausedShards.includes(s)) || b.warnings.some((w) => w.includes('dropped')), 30_000, [b]);

    phase('paused member dropped');
    // Exactly once: one committed effect per step and per run, nothing b ran after its stop.
    const reader = new S3ObjectStore({ bucket: server.bucket, prefix, clientConfig: { region: server.region, endpoint: server.endpoint, forcePathStyle: true, credentials: server.credentials } });
    // Hook effects commit with their notification's ack, just after the hook call printed `term`.
    // Read once per try (waitUntil tries at once): each read opens a reader per shard on S3.
    let effects: Awaited<ReturnType<typeof committedEffects>> | undefined;
    await waitUntil('every terminal effect committed', async () => {
      effects = await committedEffects(reader, SHARDS);
      return effects.terms.size >= RUNS + EXTRA_RUNS;
    }, 30_000);
    reader.destroy();
    if (!effects) throw new Error('no effects read');
    const total = RUNS + EXTRA_RUNS;
    // In flight at the kill and at the stop: submitted before it, terminal effect committed by a
    // hook called after it (see inFlight). Judged from the committed times, not from output lines
    // that may still have been in the pipes; logged before the checks, to read beside a failure.
    const kill = inFlight(effects, atKill.acceptedRuns, killedAt, killedShards, 'c');
    const stop = inFlight(effects, atStop.acceptedRuns, stoppedAt, pausedShards, 'b');
    console.log(`[cluster-s3] at the kill -9: ${atKill.ended} of ${RUNS} runs ended, ${atKill.pending} submissions not yet answered; in flight ${kill.runs} runs (${kill.onShards} on the killed member's ${killedShards.length} shards, ${kill.startedThere} of them with a step committed by the killed member)`);
    console.log(`[cluster-s3] at the SIGSTOP: ${atStop.ended} of ${total} runs ended, ${atStop.pending} submissions not yet answered; in flight ${stop.runs} runs (${stop.onShards} on the paused member's ${pausedShards.length} shards, ${stop.startedThere} of them with a step committed by the paused member)`);
    const dupSteps = [...effects.steps].filter(([, v]) => v.length !== 1);
    const dupTerms = [...effects.terms].filter(([, v]) => v.length !== 1);
    expect(effects.terms.size).toBe(total);
    expect(effects.steps.size).toBe(total * STEPS);
    expect(dupSteps, 'steps committed more than once').toEqual([]);
    expect(dupTerms, 'terminal effects committed more than once').toEqual([]);
    const lateFromPaused = [...effects.steps.values(), ...effects.terms.values()].flat().filter((e) => effectMember(e) === 'b' && effectTime(e) >= stoppedAt);
    expect(lateFromPaused, 'effects the paused member ran after its stop').toEqual([]);
    const hookCalls = procs.flatMap((p) => p.terms);
    expect(new Set(hookCalls).size).toBe(total);

    expect(kill.runs, 'runs in flight at the kill').toBeGreaterThan(0);
    expect(kill.onShards, 'runs in flight on the killed member\'s shards at the kill').toBeGreaterThan(0);
    expect(stop.runs, 'runs in flight at the SIGSTOP').toBeGreaterThan(0);
    expect(stop.onShards, 'runs in flight on the paused member\'s shards at the SIGSTOP').toBeGreaterThan(0);
    phase('checked');
    console.log(`[cluster-s3] phases: ${phases.join(' | ')}`);
    console.log(`[cluster-s3] ${total} runs, ${hookCalls.length} hook calls (${hookCalls.length - total} repeated after a failover), paused member warnings: ${b.warnings.filter((w) => w.includes('dropped')).length}`);
    console.log(`[cluster-s3] lease renewals (longest gap / round trip / timer lag, ms; lease ${LEASE_MS}):\n${describeRenewals(procs)}`);
  }, 900_000);
});

/**
 * Runs in flight at `at`: submitted before it (answered before it, or a step already run: a run
 * can end before its submission's answer comes back through the inbox) and their terminal effect
 * from a hook called after it; how many of those are on `shards`, and how many of those `member`
 * had already committed a step of.
 */
function inFlight(effects: Awaited<ReturnType<typeof committedEffects>>, acceptedBefore: ReadonlySet<string>, at: number, shards: readonly number[], member: string): { runs: number; onShards: number; startedThere: number } {
  const stepsOf = (id: string) => Array.from({ length: STEPS }, (_, n) => effects.steps.get(`${id}/${n}`)?.[0]).filter((e) => e !== undefined);
  const runs = [...effects.terms.keys()].filter((id) => effectTime(effects.terms.get(id)![0]!) > at && (acceptedBefore.has(id) || stepsOf(id).some((e) => effectTime(e) < at)));
  const onShards = runs.filter((id) => shards.includes(shardOfText(id, SHARDS)));
  const startedThere = onShards.filter((id) => stepsOf(id).some((e) => effectMember(e) === member && effectTime(e) < at));
  return { runs: runs.length, onShards: onShards.length, startedThere: startedThere.length };
}

function describeRenewals(members: readonly MemberProc[]): string {
  return members.map((m) => `  ${m.id}: ${m.renewal ? `${m.renewal.renewals} renewals, ${m.renewal.maxGapMs} / ${m.renewal.maxRoundTripMs} / ${m.renewal.maxTickLagMs}` : 'none reported'}`).join('\n');
}
