/**
 * Cluster members in one process over the memory store and a MockClock (RFC 0003): ownership
 * converges to a fair share, joins move few shards, a clean leave hands over at once, an expired
 * lease is taken over (and the zombie's writes fail FENCED), and commands for shards owned
 * elsewhere go through inboxes exactly once.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { assignShards } from '../../../src/core/cluster/assignment.js';
import { openCluster, type Cluster } from '../../../src/core/cluster/index.js';
import { ClusterLayout, shardOfText } from '../../../src/core/cluster/layout.js';
import { decodeLease } from '../../../src/core/cluster/records.js';
import { encodeCommands, encodeReplies } from '../../../src/core/workflow/commands/run-command.js';
import { isTaqubaError, StoreUnavailableError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/jobs/index.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { QueueReader } from '../../../src/core/queue/index.js';
import { clusterWorld, converged, fair, LEASE_MS, owners, quiet, SHARDS, SKEW_MS, twoSteps } from './cluster-harness.js';

const layout = new ClusterLayout('c');

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return isTaqubaError(e) ? e.code : `untyped: ${String(e)}`;
  }
}

/** A run id whose shard `owner` owns and `other` does not. */
function runIdOwnedBy(owner: Cluster, prefix: string): string {
  const owned = new Set(owner.ownedShards());
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (owned.has(shardOfText(id, SHARDS))) return id;
  }
}

async function termKeys(store: MemoryObjectStore, shard: number): Promise<string[]> {
  const reader = await QueueReader.open(store, layout.queuePath(shard), { pollIntervalMs: null, logger: false });
  try {
    const page = await reader.kvScan(utf8('term/'), { limit: 1000 });
    return page.entries.map(([key]) => fromUtf8(key));
  } finally {
    await reader.close();
  }
}

describe('shard assignment (rendezvous hashing with quotas)', () => {
  it('gives every member floor or ceil of N/M shards, whatever the order of the member list', () => {
    for (let t = 0; t < 200; t++) {
      const m = 1 + (t % 7);
      const n = 1 + ((t * 7) % 40);
      const ids = Array.from({ length: m }, (_, i) => `member-${t}-${i}`);
      const a = assignShards(n, ids);
      expect(assignShards(n, [...ids].reverse())).toEqual(a);
      const counts = ids.map((id) => a.filter((o) => o === id).length);
      expect(a.every((o) => o !== undefined)).toBe(true);
      expect(Math.max(...counts) - Math.min(...counts), `n=${n} m=${m} counts=${counts}`).toBeLessThanOrEqual(1);
    }
    expect(assignShards(4, [])).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('moves few shards when a member joins: on average within 1.5x of the N/(M+1) minimum (modulo hashing moves most)', () => {
    for (const m of [2, 3, 4]) {
      let moves = 0;
      const trials = 100;
      for (let t = 0; t < trials; t++) {
        const ids = Array.from({ length: m + 1 }, (_, i) => `node-${m}-${t}-${i}`);
        const before = assignShards(16, ids.slice(0, m));
        const after = assignShards(16, ids);
        moves += before.filter((o, s) => o !== after[s]).length;
      }
      expect(moves / trials, `16 shards, ${m} -> ${m + 1} members`).toBeLessThanOrEqual((16 / (m + 1)) * 1.5);
    }
  });
});

describe('cluster membership and leases (memory store, MockClock)', () => {
  it('three members converge on owning every shard exactly once, 5 or 6 each', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('c')];
    await w.until('fair ownership', () => fair(members));
    expect(owners(members).flat().sort()).toHaveLength(SHARDS);
    expect(members.map((m) => m.members())).toEqual([['a', 'b', 'c'], ['a', 'b', 'c'], ['a', 'b', 'c']]);
  });

  it('a member joining later gets its share, and only a few shards move', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('c')];
    await w.until('fair ownership of 3', () => fair(members));
    const before = owners(members).map((o) => o[0]);
    members.push(await w.open('d'));
    await w.until('fair ownership of 4', () => fair(members));
    const after = owners(members).map((o) => o[0]);
    const moved = before.filter((o, s) => o !== after[s]).length;
    expect(members[3]!.ownedShards().length).toBe(4);
    expect(moved, `moved ${moved} shards`).toBeLessThanOrEqual(8);
    expect(after).toEqual(assignShards(SHARDS, ['a', 'b', 'c', 'd']));
  });

  it('a clean leave hands its shards over without waiting for the lease to expire', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('c')];
    await w.until('fair ownership', () => fair(members));
    const leaving = members.pop()!;
    const hadShards = leaving.ownedShards();
    await w.drive(leaving.leave());
    const start = w.clock.now();
    await w.until('the others own every shard', () => fair(members));
    expect(w.clock.now() - start, 'takeover time (mock ms)').toBeLessThan(LEASE_MS);
    expect(hadShards.length).toBeGreaterThan(0);
    expect(await w.store.get(layout.memberKey('c'))).toBeUndefined();
    expect(await codeOf(leaving.submit({ runId: 'after-leave' }))).toBe('CLOSED');
  });

  it('a halted member keeps its shards until the lease expires (plus the skew margin); then they move and its writes fail FENCED', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('z')];
    await w.until('fair ownership', () => fair(members));
    const zombie = members.pop()!;
    const shards = zombie.ownedShards();
    zombie.halt();
    // The expiry of the zombie's newest lease record of each shard.
    const expiry = new Map<number, number>();
    for (const s of shards) {
      const keys: string[] = [];
      for await (const info of w.store.list(layout.shardLeasePrefix(s))) keys.push(info.key);
      const newest = keys[keys.length - 1]!;
      expiry.set(s, decodeLease((await w.store.get(newest))!.data, newest).expiresAt);
    }
    const takenAt = new Map<number, number>();
    await w.until('the others own every shard', () => {
      for (const s of shards) if (!takenAt.has(s) && owners(members)[s]!.length === 1) takenAt.set(s, w.clock.now());
      return converged(members);
    });
    for (const s of shards) expect(takenAt.get(s)!, `shard ${s} taken only after expiry + skew`).toBeGreaterThan(expiry.get(s)! + SKEW_MS);
    // The zombie still has its engines open; the new owners' opens fenced them.
    for (const s of shards) {
      const queue = zombie.queueOf(s)!;
      expect(queue, `zombie still holds shard ${s}'s queue`).toBeDefined();
      expect(await codeOf(queue.kvPut(utf8('zombie'), utf8('write'))), `zombie write to shard ${s}`).toBe('FENCED');
    }
  });
});

describe('commands from any member (inboxes)', () => {
  it('submit, idempotent resubmit, status, signal and cancel through members that do not own the run', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('c')];
    await w.until('fair ownership', () => fair(members));
    const [a, b, c] = members as [Cluster, Cluster, Cluster];
    const id = runIdOwnedBy(a, 'waiting');
    const first = await w.drive(b.submit({ runId: id, input: utf8('wait') }));
    expect(first.newlySubmitted).toBe(true);
    const again = await w.drive(c.submit({ runId: id, input: utf8('wait') }));
    expect([again.runId, again.newlySubmitted]).toEqual([id, false]);
    expect(await w.drive(codeOf(c.submit({ runId: id, input: utf8('other') })))).toBe('INPUT_MISMATCH');
    await w.until('the run parks on its signal', async () => (await b.getRun(id))?.state === 'waiting-for-signal');
    expect(await w.drive(c.readStatus(id))).toEqual({ runId: id, state: 'pending', currentStep: 1 });
    expect(await w.drive(b.signal(`${id}#go`, utf8('approved')))).toBe('delivered');
    await w.until('the run succeeds', () => w.hook.outcomes.some((o) => o.runId === id));
    const outcome = w.hook.outcomes.find((o) => o.runId === id)!;
    expect([outcome.status, fromUtf8(outcome.result!)]).toEqual(['succeeded', 'approved']);
    expect(await w.drive(c.readStatus(id))).toBeNull();

    const cancelled = runIdOwnedBy(a, 'to-cancel');
    await w.drive(c.submit({ runId: cancelled, input: utf8('wait') }));
    await w.until('parked', async () => (await b.getRun(cancelled))?.state === 'waiting-for-signal');
    expect(await w.drive(b.cancel(cancelled))).toBe(true);
    await w.until('cancelled', () => w.hook.outcomes.some((o) => o.runId === cancelled));
    expect(w.hook.outcomes.find((o) => o.runId === cancelled)!.status).toBe('cancelled');
    expect(await w.drive(b.cancel(cancelled))).toBe(false);
    const shard = a.shardOf(id);
    // The hook's effects commit with its notification's ack, just after the call.
    const terms = async () => (await termKeys(w.store as MemoryObjectStore, shard)).filter((k) => k.startsWith(`term/${id}/`));
    await w.until('the hook effect committed', async () => (await terms()).length > 0);
    expect(await terms()).toHaveLength(1);
    const leftovers: string[] = [];
    for await (const info of w.store.list('c/')) if (info.key.includes('/inbox/') || info.key.includes('/replies/')) leftovers.push(info.key);
    expect(leftovers).toEqual([]);
  });

  it('runs submitted through every member all terminate exactly once', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b'), await w.open('c')];
    await w.until('fair ownership', () => fair(members));
    const ids = Array.from({ length: 60 }, (_, i) => `run-${i}`);
    const outcomes = await w.drive(Promise.all(ids.map((id, i) => members[i % 3]!.submit({ runId: id, input: utf8(id) }))));
    expect(outcomes.every((o) => o.newlySubmitted)).toBe(true);
    await w.until('every run terminated', () => new Set(w.hook.outcomes.map((o) => o.runId)).size === ids.length);
    expect(w.hook.outcomes.map((o) => o.runId).sort()).toEqual([...ids].sort());
    const allTerms = async () => {
      const keys: string[] = [];
      for (let s = 0; s < SHARDS; s++) keys.push(...(await termKeys(w.store as MemoryObjectStore, s)));
      return keys;
    };
    await w.until('every hook effect committed', async () => (await allTerms()).length >= ids.length);
    const runsOfTerms = (await allTerms()).map((k) => k.split('/')[1]!).sort();
    expect(runsOfTerms, 'one committed terminal effect per run').toEqual([...ids].sort());
  });

  it('a client member (takesShards false) owns nothing, is not counted as a member, and its submissions run', async () => {
    const w = clusterWorld();
    const members = [await w.open('a'), await w.open('b')];
    const client = await w.open('web', { takesShards: false });
    await w.until('fair ownership of the two workers', () => fair(members));
    const ids = Array.from({ length: 10 }, (_, i) => `client-${i}`);
    await w.drive(Promise.all(ids.map((id) => client.submit({ runId: id, input: utf8(id) }))));
    await w.until('every run terminated', () => ids.every((id) => w.hook.outcomes.some((o) => o.runId === id)));
    expect(client.ownedShards()).toEqual([]);
    expect(members[0]!.members()).toEqual(['a', 'b']);
    expect(await w.store.get(layout.memberKey('web'))).toBeUndefined();
  });

  it('a command nobody answers rejects with TIMEOUT and stays in the inbox for a later owner', async () => {
    const w = clusterWorld();
    const client = await w.open('web', { takesShards: false, commandTimeoutMs: 500 });
    expect(await w.drive(codeOf(client.submit({ runId: 'unowned', input: utf8('x') })))).toBe('TIMEOUT');
    const inbox: string[] = [];
    for await (const info of w.store.list(layout.inboxRoot)) inbox.push(info.key);
    expect(inbox).toHaveLength(1);
    // A worker that joins later applies it.
    await w.open('a');
    await w.until('the late submission ran', () => w.hook.outcomes.some((o) => o.runId === 'unowned'));
  });

  it('a command whose reply exists (its owner crashed before deleting it) is deleted, not applied again', async () => {
    const w = clusterWorld();
    const a = await w.open('a');
    await w.until('a owns everything', () => a.ownedShards().length === SHARDS);
    const id = 'replayed-command';
    const shard = a.shardOf(id);
    await w.store.put(layout.replyKey(shard, 'cmd1'), encodeReplies([{ ok: true, value: { runId: id, newlySubmitted: true, jobId: 'x' } }]));
    await w.store.put(layout.inboxKey(shard, 'cmd1'), encodeCommands([{ type: 'submit', runId: id, input: utf8('x') }]));
    await w.until('the command is gone', async () => (await w.store.get(layout.inboxKey(shard, 'cmd1'))) === undefined);
    expect(await a.getRun(id)).toBeNull();
  });
});

/** Passes every call through; reply writes fail while `refuseReplies` is set (the owner applied, its answer is lost). */
class ReplyLosingStore extends MemoryObjectStore {
  refuseReplies = false;
  refused = 0;
  override async put(...args: Parameters<MemoryObjectStore['put']>): ReturnType<MemoryObjectStore['put']> {
    if (this.refuseReplies && args[0].includes('/replies/')) {
      this.refused++;
      throw new StoreUnavailableError(`reply write refused by the test. key=${args[0]}`);
    }
    return super.put(...args);
  }
}

/** Hook outcomes and committed terminal effects of one run. */
async function runsOf(w: ReturnType<typeof clusterWorld>, store: MemoryObjectStore, shard: number, runId: string): Promise<{ outcomes: number; effects: number }> {
  return { outcomes: w.hook.outcomes.filter((o) => o.runId === runId).length, effects: (await termKeys(store, shard)).filter((k) => k.startsWith(`term/${runId}/`)).length };
}

describe('commands applied once (issue 25: one submission, one run)', () => {
  it('an owner whose reply write fails applies the batch again after the run ended: the answer comes from the record, one run', async () => {
    const store = new ReplyLosingStore();
    const w = clusterWorld(store);
    const a = await w.open('a');
    const client = await w.open('web', { takesShards: false });
    await w.until('a owns everything', () => a.ownedShards().length === SHARDS);
    store.refuseReplies = true;
    const id = 'lost-reply';
    const answer = w.drive(client.submit({ runId: id, input: utf8(id) }));
    await w.until('the run ended while its reply could not be written', () => w.hook.outcomes.some((o) => o.runId === id) && store.refused > 0);
    // Passes that meet a refused reply re-apply the batch; let a few happen after the run ended.
    const refusedAtEnd = store.refused;
    await w.until('the batch was applied again', () => store.refused >= refusedAtEnd + 2);
    store.refuseReplies = false;
    const outcome = await answer;
    expect(outcome.newlySubmitted).toBe(true);
    const shard = a.shardOf(id);
    await w.until('the hook effect committed', async () => (await runsOf(w, store, shard, id)).effects > 0);
    expect(await runsOf(w, store, shard, id)).toEqual({ outcomes: 1, effects: 1 });
  });

  it('an owner that dies after applying, before replying: the next owner reads the batch again and answers from the record', async () => {
    const store = new ReplyLosingStore();
    const w = clusterWorld(store);
    const a = await w.open('a');
    const client = await w.open('web', { takesShards: false, commandTimeoutMs: 60_000 });
    await w.until('a owns everything', () => a.ownedShards().length === SHARDS);
    store.refuseReplies = true;
    const id = 'owner-died';
    const answer = w.drive(client.submit({ runId: id, input: utf8(id) }));
    await w.until('applied, not answered', () => w.hook.outcomes.some((o) => o.runId === id) && store.refused > 0);
    a.halt();
    store.refuseReplies = false;
    const b = await w.open('b');
    await w.until('b took the shards over', () => b.ownedShards().length === SHARDS, 60_000);
    const outcome = await answer;
    expect(outcome.newlySubmitted).toBe(true);
    const shard = b.shardOf(id);
    await w.until('the hook effect committed', async () => (await runsOf(w, store, shard, id)).effects > 0);
    expect(await runsOf(w, store, shard, id)).toEqual({ outcomes: 1, effects: 1 });
  });

  it('a caller that got TIMEOUT sends the command again with its id: applied once, answered from the record', async () => {
    const store = new MemoryObjectStore();
    const w = clusterWorld(store);
    const client = await w.open('web', { takesShards: false, commandTimeoutMs: 500 });
    const id = 'retried';
    const timeout = await w.drive(client.submit({ runId: id, input: utf8(id) }).catch((e: unknown) => e));
    expect(isTaqubaError(timeout, 'TIMEOUT')).toBe(true);
    const commandId = (timeout as { details: { commandId?: string } }).details.commandId;
    expect(typeof commandId).toBe('string');
    expect((timeout as Error).message).toContain(`commandId=${commandId}`);
    // A worker joins; the first batch applies and the run ends before the retry arrives.
    const a = await w.open('a');
    await w.until('the first submission ran', () => w.hook.outcomes.some((o) => o.runId === id));
    const retried = await w.drive(client.submit({ runId: id, input: utf8(id) }, { commandId }));
    expect(retried.newlySubmitted).toBe(true);
    const shard = a.shardOf(id);
    await w.until('the hook effect committed', async () => (await runsOf(w, store, shard, id)).effects > 0);
    expect(await runsOf(w, store, shard, id)).toEqual({ outcomes: 1, effects: 1 });
    // Without the id it is a new submission: the reference's rule for an ended run.
    expect((await w.drive(client.submit({ runId: id, input: utf8(id) }))).newlySubmitted).toBe(true);
  });
});

describe('orphaned replies', () => {
  it('the owner deletes replies no sender waits for any more (sent over twice the command timeout ago), and only those', async () => {
    const w = clusterWorld();
    const a = await w.open('a', { commandTimeoutMs: 1000 });
    await w.until('a owns every shard', () => a.ownedShards().length === SHARDS);
    const idAt = (ms: number) => `${ms.toString(36).padStart(9, '0')}-${'ab'.repeat(10)}`;
    const orphan = layout.replyKey(3, idAt(w.clock.now() - 10_000));
    const waitedFor = layout.replyKey(3, idAt(w.clock.now() + 120_000));
    const foreign = `${layout.repliesPrefix(3)}not-a-batch`;
    for (const key of [orphan, waitedFor, foreign]) await w.store.put(key, encodeReplies([]));
    await w.until('the orphaned reply is collected', async () => (await w.store.get(orphan)) === undefined, 10_000);
    expect(await w.store.get(waitedFor), 'a reply whose sender may still poll').toBeDefined();
    expect(await w.store.get(foreign), 'a name that is not a batch id').toBeDefined();
  });
});

describe('cluster options and errors', () => {
  const base = { name: 'c', shards: 4, runner: twoSteps, logger: quiet };

  it('rejects bad options with a typed error naming them', async () => {
    const store = new MemoryObjectStore();
    const err = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        return e as { code: string; message: string; details: Record<string, unknown> };
      }
      throw new Error('resolved');
    };
    const unknown = await err(openCluster(store, { ...base, leaseMS: 5 } as never));
    expect([unknown.code, unknown.details.suggestion]).toEqual(['INVALID_CONFIG', 'leaseMs']);
    expect((await err(openCluster(store, { ...base, shards: 0 }))).code).toBe('INVALID_CONFIG');
    expect((await err(openCluster(store, { ...base, shards: 2.5 }))).message).toContain('shards');
    expect((await err(openCluster(store, { ...base, name: 'a//b' }))).code).toBe('INVALID_CONFIG');
    expect((await err(openCluster(store, { ...base, memberId: 'no spaces' }))).code).toBe('INVALID_CONFIG');
    expect((await err(openCluster(store, { ...base, leaseMs: 10 }))).code).toBe('INVALID_CONFIG');
    expect((await err(openCluster(store, { ...base, runner: 42 as never }))).code).toBe('INVALID_ARGUMENT');
    expect((await err(openCluster(store, { ...base, hook: {} as never }))).code).toBe('INVALID_ARGUMENT');
    expect((await err(openCluster(store, { ...base, runtimeOptions: { memoPrefix: 'x' } as never }))).code).toBe('INVALID_CONFIG');
    expect((await err(openCluster(null as never, base))).code).toBe('INVALID_ARGUMENT');
  });

  it('refuses to join a cluster created with another shard count', async () => {
    const w = clusterWorld();
    const a = await w.open('a', { shards: SHARDS });
    expect(a.shardCount).toBe(SHARDS);
    const e = await w.drive(openCluster(w.store, { name: 'c', shards: 8, runner: twoSteps, logger: quiet, clock: w.clock }).then(
      () => undefined,
      (x: unknown) => x,
    ));
    expect(isTaqubaError(e, 'INVALID_CONFIG') && e.details.existing).toBe(SHARDS);
  });

  it('rejects bad run ids and correlation keys before any I/O', async () => {
    const w = clusterWorld();
    const a = await w.open('a');
    expect(await codeOf(a.submit({ runId: 'has space' }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(a.cancel(''))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(a.signal('', utf8('x')))).toBe('INVALID_ARGUMENT');
    expect(a.shardOfCorrelationKey('run-1#approval')).toBe(a.shardOf('run-1'));
  });
});

describe('typed jobs in a cluster', () => {
  const double = defineJob({ name: 'test.double', idempotencyKey: (n: number) => `double:${n}`, run: async (n: number) => n * 2 });
  const refuse = defineJob<string, string, { why: string }>({ name: 'test.refuse', run: async (_, ctx) => ctx.fail({ why: 'always' }) });
  const unknownJob = defineJob({ name: 'test.unknown', run: async () => 1 });

  it('a job submitted through a member that does not own its shard resolves on every member, once per idempotency key', async () => {
    const w = clusterWorld();
    const jobs = [double, refuse];
    const members = [await w.open('a', { jobs }), await w.open('b', { jobs }), await w.open('c', { jobs })];
    await w.until('fair ownership', () => fair(members));
    const [a, b, c] = members as [Cluster, Cluster, Cluster];
    // Submitted through b; the job's shard is whichever its key hashes to (b owns about a third).
    const handle = await w.drive(b.submitJob(double, 21));
    expect(handle.newlySubmitted).toBe(true);
    expect(await w.drive(handle.result())).toBe(42);
    // Resolved on every member, also those that never owned its shard.
    for (const m of members) expect(await w.drive(m.jobHandle(double, handle.id).result())).toBe(42);
    // Several jobs through every member: most go through inboxes.
    const handles = await w.drive(Promise.all(Array.from({ length: 12 }, (_, i) => members[i % 3]!.submitJob(double, 100 + i))));
    expect(await w.drive(Promise.all(handles.map((h) => h.result())))).toEqual(Array.from({ length: 12 }, (_, i) => (100 + i) * 2));
    expect(new Set(handles.map((h) => shardOfText(h.id, SHARDS))).size, 'jobs spread over shards').toBeGreaterThan(1);
    const again = await w.drive(c.submitJob(double, 21));
    expect([again.id, again.newlySubmitted]).toEqual([handle.id, false]);
    expect(await w.drive(again.result())).toBe(42);

    const failed = await w.drive(c.submitJob(refuse, 'x'));
    const err = await w.drive(failed.result().then(() => undefined, (e: unknown) => e));
    expect(isTaqubaError(err, 'JOB_FAILED') && err.details.reason).toBe('job_error');
    expect((err as { error?: unknown }).error).toEqual({ why: 'always' });
    expect(await codeOf(a.submitJob(unknownJob, undefined as never))).toBe('INVALID_ARGUMENT');
    expect(await w.drive(codeOf(a.jobHandle(double, 'never-submitted').result()))).toBe('NOT_FOUND');
  });

  it('a running job is cancelled from a member that does not own its shard: its signal fires, result() says cancelled', async () => {
    const started: string[] = [];
    const aborted: string[] = [];
    const hang = defineJob({
      name: 'test.hang',
      run: (_: null, ctx) =>
        new Promise<never>((_resolve, reject) => {
          started.push(ctx.id);
          ctx.signal.addEventListener('abort', () => {
            aborted.push(ctx.id);
            reject(ctx.signal.reason);
          });
        }),
    });
    const w = clusterWorld();
    const jobs = [hang];
    const members = [await w.open('a', { jobs }), await w.open('b', { jobs }), await w.open('c', { jobs })];
    await w.until('fair ownership', () => fair(members));
    const handle = await w.drive(members[0]!.submitJob(hang, null));
    const shard = shardOfText(handle.id, SHARDS);
    const other = members.find((m) => !m.ownedShards().includes(shard))!;
    await w.until('the job runs', () => started.includes(handle.id));
    // Read from a member that does not run the shard (its claim may not be flushed yet: pending).
    const seenElsewhere = other.jobHandle(hang, handle.id);
    expect(['pending', 'running']).toContain((await w.drive(seenElsewhere.status()))?.state);
    expect(await w.drive(other.cancelJob(handle.id))).toBe(true);
    const err = await w.drive(handle.result().then(() => undefined, (e: unknown) => e));
    expect(isTaqubaError(err, 'JOB_FAILED') && err.details.reason).toBe('cancelled');
    expect(aborted).toEqual([handle.id]);
    expect(await w.drive(seenElsewhere.status()), 'no status once the job ended').toBeNull();
    expect(await w.drive(other.cancelJob(handle.id)), 'a job no longer active').toBe(false);
    expect(await w.drive(seenElsewhere.cancel()), 'through its handle too').toBe(false);
    // Asked afterwards, on a handle rebuilt from the id elsewhere: the same answer.
    const later = await w.drive(other.jobHandle(hang, handle.id).result().then(() => undefined, (e: unknown) => e));
    expect(isTaqubaError(later, 'JOB_FAILED') && later.details.reason).toBe('cancelled');
    expect(await codeOf(other.cancelJob('has space'))).toBe('INVALID_ARGUMENT');
  });
});
