/**
 * A cluster of two real Node processes on one filesystem store (RFC 0003): one member is paused
 * (SIGSTOP) past its lease mid-run; the other takes its shards (the shard engines bypass the
 * store's process lock, which the paused member would otherwise keep holding), and the paused
 * one, continued, commits nothing it ran after the stop. Every step and terminal effect commits
 * exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { committedEffects, effectMember, effectTime, fairlyOwned, MemberProc, waitUntil } from './cluster-procs.js';

const SHARDS = 8;
const RUNS = 200;
const STEPS = 3;
const LEASE_MS = 4000;

const procs: MemberProc[] = [];
let root: string | undefined;

afterAll(async () => {
  for (const p of procs) {
    p.child.kill('SIGCONT');
    p.child.kill('SIGKILL');
  }
  await Promise.all(procs.map((p) => p.exited));
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a cluster of processes on the filesystem store', () => {
  it('a member paused past its lease loses its shards to the other, commits nothing after the stop, and every run terminates exactly once', async () => {
    root = await mkdtemp(join(tmpdir(), 'taquba-cluster-'));
    const start = (memberId: string) => {
      const p = new MemberProc({ store: { type: 'fs', root: root! }, memberId, shards: SHARDS, leaseMs: LEASE_MS, maxClockSkewMs: 200, steps: STEPS, stepDelayMs: 5 });
      procs.push(p);
      return p;
    };
    const [a, b] = [start('a'), start('b')];
    await waitUntil('2 members own a fair share', () => fairlyOwned([a, b], SHARDS), 60_000, [a, b]);
    a.send(`submit 0 ${RUNS / 2}`);
    b.send(`submit ${RUNS / 2} ${RUNS}`);
    await waitUntil('every submission answered', () => a.submitted + b.submitted === RUNS, 60_000, [a, b]);
    const terminated = () => new Set(procs.flatMap((p) => p.terms)).size;
    await waitUntil('some runs done', () => terminated() >= RUNS / 10, 60_000, [a, b]);

    b.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    await waitUntil('the running member owns every shard', () => a.owned.length === SHARDS, 60_000, [a]);
    b.child.kill('SIGCONT');
    await waitUntil('the continued member has dropped its shards', () => b.owned.length === 0, 30_000, [b]);
    await waitUntil(`all ${RUNS} runs terminated`, () => terminated() >= RUNS, 60_000, [a, b]);

    const store = new FileSystemObjectStore({ root, writerLock: false });
    let effects = await committedEffects(store, SHARDS);
    await waitUntil('every terminal effect committed', async () => {
      effects = await committedEffects(store, SHARDS);
      return effects.terms.size >= RUNS;
    }, 30_000);
    expect(effects.terms.size).toBe(RUNS);
    expect(effects.steps.size).toBe(RUNS * STEPS);
    expect([...effects.steps].filter(([, v]) => v.length !== 1), 'steps committed more than once').toEqual([]);
    expect([...effects.terms].filter(([, v]) => v.length !== 1), 'terminal effects committed more than once').toEqual([]);
    const late = [...effects.steps.values(), ...effects.terms.values()].flat().filter((e) => effectMember(e) === 'b' && effectTime(e) >= stoppedAt);
    expect(late, 'effects the paused member ran after its stop').toEqual([]);
    // The member that was paused rejoins and gets its share back.
    await waitUntil('both members own a fair share again', () => fairlyOwned([a, b], SHARDS), 60_000, [a, b]);
  }, 120_000);
});
