/**
 * The queue layer on the simulated store: Queue handles (each its own process; a newer open
 * fences the older) enqueue, claim, ack and nack jobs while store calls are reordered, fail and
 * processes crash. At the end a fresh open (which recovers interrupted claims) must show:
 *  - every job whose enqueue resolved, unless an ack of it resolved (or may have applied);
 *  - no job twice, and no job nobody enqueued;
 *  - no job acked twice (two acks that both resolved), and no acked job waiting again;
 *  - a job an ack continued in place as a next one (`ackContinuing`, a workflow's next step: same
 *    id, still claimed by the acking handle) is the next job from then on: the acked payload is
 *    never listed again once the ack resolved, the next one is kept like any enqueue (present,
 *    recovered at open), no id is listed twice, and a continuation counts no `done`;
 *  - no job taken out while waiting (`takeWaiting`, `removeWaitingWith`: a run's hand-off, a
 *    debounced start) listed again, and none taken that was claimed at the time;
 *  - stats() equal to the jobs listed per status (done: cumulative, one per ack that applied);
 *    a second open shows the same jobs.
 */
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/queue.js';
import type { QueueOptions } from '../../src/core/queue/queue-options.js';
import type { Claim } from '../../src/core/queue/transitions/claim.js';
import type { JobRecord, JobStatus } from '../../src/core/queue/records/job-record.js';
import { Actor } from './actor.js';
import type { SimContext } from './context.js';
import { codeOf } from './history.js';
import { Prng, labelHash } from './prng.js';
import type { SimRun } from './sim-run.js';
import type { Scenario } from './simulation.js';

const QUEUE_PATH = 'q';
const JOBS = 'jobs';
const STATUSES: readonly JobStatus[] = ['pending', 'scheduled', 'claimed', 'done', 'dead'];
const FINAL = labelHash('queue-final');
const RANDOM = labelHash('queue-random');
/** Codes a queue call may answer with (anything else is a violation). */
const EXPECTED = ['FENCED', 'CLOSED', 'STORE_UNAVAILABLE', 'CLAIM_LOST', 'LOCKED', 'NOT_FOUND'];

/** What the clients know about one job (keyed by its unique payload). */
interface JobModel {
  readonly payload: string;
  enqueue: 'pending' | 'ok' | 'failed' | 'unknown';
  id?: string;
  /** Acks that resolved. */
  acks: number;
  /** An ack whose outcome is unknown (it may have applied). */
  ackMaybe: boolean;
  /** Taken out while waiting: the take resolved `taken` (true), or may have applied ('maybe'). */
  taken?: true | 'maybe';
  /** Continued in place as another job: an ack that did so resolved. */
  continued?: true;
  /**
   * Continuations of this job that may have applied: in flight, or ended without an answer. Counted
   * per call: two writers may continue the same job at once (one fenced, one that took the claim
   * over), and the fenced one's failure says nothing of the other's.
   */
  continuing: number;
}

class QueueActor extends Actor {
  queue: Queue | undefined;
  readonly claims: Claim[] = [];
  /** A call answered FENCED or CLOSED: the engine under this handle has stopped. */
  broken = false;

  constructor(ctx: SimContext, index: number) {
    super(ctx, `Q${index}`);
  }

  /** track() for queue calls: notes when the handle has stopped working. */
  call<T>(label: string, promise: Promise<T>, settled: (result: { ok: true; value: T } | { ok: false; error: unknown }) => void): void {
    this.track(label, promise, EXPECTED, (result) => {
      if (!result.ok && ['FENCED', 'CLOSED'].includes(codeOf(result.error))) this.broken = true;
      settled(result);
    });
  }
}

export class QueueScenario implements Scenario {
  private readonly actors: QueueActor[] = [];
  private readonly jobs = new Map<string, JobModel>();
  private readonly keepDone: boolean;

  constructor(private readonly run: SimRun) {
    this.keepDone = Prng.of(run.seed, labelHash('keep-done')).chance(0.5);
  }

  act(r: Prng): string | undefined {
    const alive = this.actors.filter((a) => a.alive);
    const open = alive.filter((a) => a.state === 'open' && !a.paused && !a.broken);
    const broken = alive.filter((a) => a.state === 'open' && a.broken);
    const holding = open.filter((a) => a.claims.length > 0);
    type Action = () => string | undefined;
    const weights: [Action, number][] = [
      [() => undefined, 6],
      [() => this.open(r), alive.length < this.run.config.maxWriters ? (open.length === 0 ? 6 : 1) : 0],
      [() => this.enqueue(r.pick(open)), open.length > 0 ? 10 : 0],
      [() => this.claim(r.pick(open), r), open.length > 0 ? 6 : 0],
      [() => this.settle(r.pick(holding), r, 'ack'), holding.length > 0 ? 6 : 0],
      [() => this.settle(r.pick(holding), r, 'nack'), holding.length > 0 ? 1.5 : 0],
      [() => this.ackWithNext(r.pick(holding), r), holding.length > 0 ? 4 : 0],
      [() => this.take(r.pick(open), r), open.length > 0 && this.jobs.size > 0 ? 1 : 0],
      [() => this.whenIdle(r.pick(open)), open.length > 0 ? 0.5 : 0],
      [() => this.close(r.pick(open)), open.length > 0 ? 0.5 : 0],
      [() => this.close(r.pick(broken)), broken.length > 0 ? 3 : 0],
      [() => this.crash(r.pick(alive), r), this.run.config.crashes && alive.length > 0 ? 0.4 : 0],
      [() => this.crashMachine(r), this.run.config.machineCrashes ? 0.1 : 0],
    ];
    return r.weighted(weights)?.();
  }

  private open(r: Prng): string {
    const index = this.actors.length + 1;
    const random = Prng.of(this.run.seed, RANDOM, index);
    const actor = new QueueActor(this.run, index);
    const options: QueueOptions = {
      clock: actor.clock,
      random: (bytes: Uint8Array) => random.fill(bytes),
      memtableBytes: r.pick([1024, 2048, 16384, 65536]),
      flushIntervalMs: r.pick([0, 0, 1]),
      livenessHeartbeatMs: null,
      reaperIntervalMs: r.pick([20, 200]),
      schedulerIntervalMs: 50,
      logger: false,
      defaultQueueConfig: { leaseMs: r.pick([30, 300, 30_000]), maxAttempts: 1000, maxInterruptions: 1000, retryBackoffBaseMs: 0, keepDoneMs: this.keepDone ? 1e12 : null },
    };
    this.actors.push(actor);
    this.run.stats.opens++;
    actor.call('open', Queue.open(actor.store, QUEUE_PATH, options), (result) => {
      if (result.ok) {
        actor.queue = result.value;
        actor.state = 'open';
        this.run.trace(`${actor.name} opened: epoch ${result.value.writerEpoch}`);
      } else {
        actor.state = 'open-failed';
        this.run.trace(`${actor.name} open failed: ${codeOf(result.error)}`);
      }
    });
    return `${actor.name} opens (pid ${actor.pid}): memtable=${options.memtableBytes} lease=${options.defaultQueueConfig!.leaseMs} reaper=${options.reaperIntervalMs}`;
  }

  private enqueue(actor: QueueActor): string {
    const payload = `j${this.jobs.size + 1}`;
    const job: JobModel = { payload, enqueue: 'pending', acks: 0, ackMaybe: false, continuing: 0 };
    this.jobs.set(payload, job);
    actor.call(`enqueue ${payload}`, actor.queue!.enqueue(JOBS, utf8(payload)), (result) => {
      if (result.ok) {
        job.enqueue = 'ok';
        job.id = result.value;
      } else job.enqueue = ['FENCED', 'CLOSED'].includes(codeOf(result.error)) ? 'failed' : 'unknown';
    });
    return `${actor.name} enqueue ${payload}`;
  }

  private claim(actor: QueueActor, r: Prng): string {
    const leaseMs = r.pick([30, 300, 30_000]);
    actor.call('claim', actor.queue!.claim(JOBS, leaseMs), (result) => {
      if (!result.ok || !result.value) return this.run.trace(`${actor.name} claimed ${result.ok ? 'nothing' : `${codeOf(result.error)}: ${(result.error as Error).message}`}`);
      const claim = result.value;
      const payload = fromUtf8(claim.job.payload);
      this.run.trace(`${actor.name} claimed ${payload} (${claim.job.id})`);
      if (!this.jobs.has(payload)) this.run.fail('queue-no-phantom-jobs', `${actor.name} claimed a job nobody enqueued: ${payload}`);
      actor.claims.push(claim);
    });
    return `${actor.name} claim (lease ${leaseMs} ms)`;
  }

  private settle(actor: QueueActor, r: Prng, how: 'ack' | 'nack'): string {
    const claim = actor.claims.splice(r.int(0, actor.claims.length - 1), 1)[0]!;
    const payload = fromUtf8(claim.job.payload);
    const job = this.jobs.get(payload);
    const call: Promise<unknown> = how === 'ack' ? actor.queue!.ack(claim) : actor.queue!.nack(claim, 'simulated failure');
    actor.call(`${how} ${payload}`, call, (result) => {
      if (how !== 'ack' || !job) return;
      if (result.ok) job.acks++;
      else if (!['FENCED', 'CLOSED', 'CLAIM_LOST'].includes(codeOf(result.error))) job.ackMaybe = true;
      if (job.acks > 1) this.run.fail('queue-no-double-ack', `${payload} (${claim.job.id}) was acked twice`);
    });
    // Until it settles the ack may apply; a crash leaves it unknown.
    if (how === 'ack' && job) job.ackMaybe = true;
    return `${actor.name} ${how} ${payload}`;
  }

  /**
   * Acks a claim handing its work on to a next job: continued in place (`ackContinuing`) when the
   * queue allows it, else acked with the next job as an enqueue. A continued job is held like any
   * claim. The next job stands or falls with the ack.
   */
  private ackWithNext(actor: QueueActor, r: Prng): string {
    const claim = actor.claims.splice(r.int(0, actor.claims.length - 1), 1)[0]!;
    const payload = fromUtf8(claim.job.payload);
    const job = this.jobs.get(payload);
    const nextJob: JobModel = { payload: `j${this.jobs.size + 1}`, enqueue: 'pending', acks: 0, ackMaybe: false, continuing: 0 };
    this.jobs.set(nextJob.payload, nextJob);
    const queue = actor.queue!;
    const failed = (error: unknown): boolean => ['FENCED', 'CLOSED', 'CLAIM_LOST'].includes(codeOf(error));
    if (!queue.mayContinueInPlace(claim, utf8(nextJob.payload))) {
      const id = queue.nextJobId();
      const effects = { enqueues: [{ queue: JOBS, payload: utf8(nextJob.payload), options: { idOverride: id } }] };
      actor.call(`ack ${payload} enqueuing ${nextJob.payload}`, queue.ackWith(claim, effects), (result) => {
        if (result.ok) {
          nextJob.enqueue = 'ok';
          nextJob.id = id;
          if (job) job.acks++;
        } else if (failed(result.error)) nextJob.enqueue = 'failed';
        else nextJob.enqueue = 'unknown';
        if (!result.ok && !failed(result.error) && job) job.ackMaybe = true;
        if (job && job.acks > 1) this.run.fail('queue-no-double-ack', `${payload} (${claim.job.id}) was acked twice`);
      });
      if (job) job.ackMaybe = true;
      return `${actor.name} ack ${payload} enqueuing ${nextJob.payload}`;
    }
    actor.call(`ack ${payload} continuing as ${nextJob.payload}`, queue.ackContinuing(claim, { payload: utf8(nextJob.payload), headers: {} }), (result) => {
      if (result.ok) {
        const continued = result.value;
        nextJob.enqueue = 'ok';
        nextJob.id = claim.id;
        if (job) job.continued = true;
        if (continued.id !== claim.id || fromUtf8(continued.job.payload) !== nextJob.payload || continued.job.status !== 'claimed') {
          this.run.fail('queue-continued-claim', `${actor.name} continued ${claim.id} as ${continued.id} (${fromUtf8(continued.job.payload)}, ${continued.job.status}), not as ${nextJob.payload}`);
        }
        this.run.trace(`${actor.name} continued ${claim.id} as ${nextJob.payload}`);
        if (actor.queue !== undefined && !actor.broken) actor.claims.push(continued);
      } else if (failed(result.error)) {
        nextJob.enqueue = 'failed';
        if (job) job.continuing--;
      } else nextJob.enqueue = 'unknown';
    });
    // Until it settles the continuation may apply; a crash leaves it unknown.
    if (job) job.continuing++;
    return `${actor.name} ack ${payload} continuing as ${nextJob.payload}`;
  }

  /** Takes a known job out of the queue if it is waiting, by either primitive. */
  private take(actor: QueueActor, r: Prng): string {
    // An id names the job a continuation made of it last: only a job known to hold its id now.
    const all = [...this.jobs.values()];
    const holdsItsId = (j: JobModel): boolean => j.continued === undefined && j.continuing === 0 && !all.some((o) => o !== j && o.id === j.id && (o.enqueue === 'pending' || o.enqueue === 'unknown'));
    const known = all.filter((j) => j.id !== undefined && j.taken === undefined && holdsItsId(j));
    if (known.length === 0) return `${actor.name} take: no known job`;
    const job = r.pick(known);
    const id = job.id!;
    const guarded = r.chance(0.5);
    const call: Promise<boolean> = guarded
      ? actor.queue!.takeWaiting(id, { accept: (record) => record.id === id }, {}).then((outcome) => outcome === 'taken')
      : actor.queue!.removeWaitingWith(id, {});
    job.taken = 'maybe';
    actor.call(`take ${job.payload}`, call, (result) => {
      if (result.ok && result.value) job.taken = true;
      else if (result.ok || ['FENCED', 'CLOSED'].includes(codeOf(result.error))) {
        // Answered not taken (claimed, settled, unknown), or refused before it applied.
        if (job.taken === 'maybe') delete job.taken;
      }
      if (result.ok && result.value && job.acks > 0) this.run.fail('queue-take-waiting-only', `${job.payload} (${id}) was taken after an ack resolved`);
    });
    return `${actor.name} ${guarded ? 'takeWaiting' : 'removeWaitingWith'} ${job.payload}`;
  }

  private whenIdle(actor: QueueActor): string {
    actor.call('whenIdle', actor.queue!.whenIdle(), () => undefined);
    return `${actor.name} whenIdle`;
  }

  private close(actor: QueueActor): string {
    actor.state = 'closing';
    actor.claims.length = 0;
    actor.call('close', actor.queue!.close(), () => (actor.state = 'closed'));
    return `${actor.name} close`;
  }

  private crash(actor: QueueActor, r: Prng): string {
    actor.crash(r);
    actor.claims.length = 0;
    this.run.stats.crashes++;
    return `${actor.name} crashes`;
  }

  private crashMachine(r: Prng): string {
    const victims = this.actors.filter((a) => this.run.world.isLive(a.pid));
    for (const a of victims) {
      a.state = 'crashed';
      a.claims.length = 0;
      a.pending.clear();
      this.run.time.kill(a.pid);
    }
    this.run.world.crashMachine(
      victims.map((a) => a.pid),
      r,
    );
    this.run.stats.machineCrashes++;
    return `machine crash (${victims.map((a) => a.name).join(', ') || 'no process'})`;
  }

  async finish(): Promise<void> {
    const { run } = this;
    run.stats.commits = this.jobs.size;
    run.stats.acknowledged = [...this.jobs.values()].filter((j) => j.enqueue === 'ok').length;
    const r = Prng.of(run.seed, FINAL);
    run.trace('wind-down');
    for (const a of this.actors) if (a.alive && a.paused) a.resume();
    for (const a of this.actors) {
      if (!a.alive || a.state === 'closing') continue;
      if (a.state === 'open' && r.chance(0.5)) run.trace(this.close(a));
      else run.trace(this.crash(a, r));
    }
    run.world.calm = true;
    if (!(await run.quiesce(r))) return run.fail('liveness', 'store activity never ends after the wind-down');
    for (const a of this.actors) {
      if (a.state !== 'crashed' && a.pending.size > 0) return run.fail('liveness', `${a.name}'s calls never settled: ${[...a.pending.values()].join(', ')}`);
    }
    const first = await this.readJobs(r, 'final open');
    if (!first) return;
    this.check(first.jobs, first.stats);
    if (run.violation) return;
    const again = await this.readJobs(r, 'second open');
    if (!again) return;
    const describe = (jobs: readonly JobRecord[]): string =>
      jobs
        .map((j) => `${j.id}:${j.status}`)
        .sort()
        .join(' ');
    if (describe(first.jobs) !== describe(again.jobs)) run.fail('queue-stable-reopen', `a second open shows other jobs:\n${describe(first.jobs)}\nvs\n${describe(again.jobs)}`);
  }

  /** A fresh open (recovering claims), every job by status, stats, close. */
  private async readJobs(r: Prng, what: string): Promise<{ jobs: JobRecord[]; stats: Record<string, number> } | undefined> {
    const { run } = this;
    const actor = new QueueActor(run, this.actors.length + 100);
    const opened = await run.until(Queue.open(actor.store, QUEUE_PATH, { clock: actor.clock, logger: false, livenessHeartbeatMs: null, memtableBytes: r.pick([1024, 65536]) }), r, what);
    if (!opened) return undefined;
    if (!opened.ok) return void run.fail('calm-reopen-works', `${what} rejected with ${codeOf(opened.error)}: ${(opened.error as Error)?.stack}`);
    const queue = opened.value;
    const read = async (): Promise<{ jobs: JobRecord[]; stats: Record<string, number> }> => {
      const jobs: JobRecord[] = [];
      for (const status of STATUSES) {
        let cursor: Uint8Array | undefined;
        do {
          const page = await queue.listJobs(JOBS, status, { cursor, limit: 7 });
          jobs.push(...page.jobs);
          cursor = page.nextCursor;
        } while (cursor);
      }
      const stats = await queue.stats(JOBS);
      return { jobs, stats: { pending: stats.pending, scheduled: stats.scheduled, claimed: stats.claimed, done: stats.done, dead: stats.dead } };
    };
    const result = await run.until(read(), r, `${what}: listing`);
    if (!result) return undefined;
    if (!result.ok) return void run.fail('calm-reopen-works', `${what}: listing rejected with ${codeOf(result.error)}: ${(result.error as Error)?.stack}`);
    const closed = await run.until(queue.close(), r, `${what}: close`);
    if (!closed) return undefined;
    run.trace(`${what}: ${result.value.jobs.length} jobs ${JSON.stringify(result.value.stats)}`);
    return result.value;
  }

  private check(jobs: readonly JobRecord[], stats: Record<string, number>): void {
    const { run } = this;
    const seen = new Map<string, JobRecord>();
    const ids = new Map<string, string>();
    const counts: Record<string, number> = { pending: 0, scheduled: 0, claimed: 0, done: 0, dead: 0 };
    for (const job of jobs) {
      const payload = fromUtf8(job.payload);
      counts[job.status] = (counts[job.status] ?? 0) + 1;
      const model = this.jobs.get(payload);
      if (!model) return run.fail('queue-no-phantom-jobs', `job ${job.id} (${job.status}) holds ${payload}, which nobody enqueued`);
      if (seen.has(payload)) return run.fail('queue-unique-jobs', `${payload} listed twice: ${seen.get(payload)!.id} (${seen.get(payload)!.status}) and ${job.id} (${job.status})`);
      seen.set(payload, job);
      if (ids.has(job.id)) return run.fail('queue-unique-jobs', `job ${job.id} listed twice: holding ${ids.get(job.id)} and ${payload}`);
      ids.set(job.id, payload);
      if (model.continued === true) return run.fail('queue-continued-replaced', `${payload} (${job.id}) was continued in place as another job but is listed as ${job.status}`);
      if (model.id !== undefined && model.id !== job.id) return run.fail('queue-ids', `${payload} was enqueued as ${model.id} but is listed as ${job.id}`);
      if (model.acks > 0 && job.status !== 'done') return run.fail('queue-acked-stays-done', `${payload} (${job.id}) was acked but is ${job.status}`);
      if (model.taken === true) return run.fail('queue-taken-stays-gone', `${payload} (${job.id}) was taken out while waiting but is listed as ${job.status}`);
      if (job.status === 'claimed') return run.fail('queue-recovery', `${payload} (${job.id}) is still claimed after a fresh open`);
    }
    for (const model of this.jobs.values()) {
      if (model.enqueue !== 'ok' || model.acks > 0 || model.ackMaybe || model.taken !== undefined || model.continued !== undefined || model.continuing > 0) continue;
      if (!seen.has(model.payload)) return run.fail('queue-no-lost-enqueue', `${model.payload} (${model.id}) was enqueued (acknowledged) and never acked, but is gone`);
    }
    for (const model of this.jobs.values()) {
      if (model.acks > 0 && this.keepDone && !seen.has(model.payload)) return run.fail('queue-acked-stays-done', `${model.payload} (${model.id}) was acked with keepDoneMs set, but is gone`);
    }
    // Live counts match the listing; `done` is cumulative: one per ack that applied.
    for (const status of ['pending', 'scheduled', 'claimed', 'dead', ...(this.keepDone ? ['done'] : [])]) {
      if (counts[status] !== stats[status]) return run.fail('queue-counters', `stats() says ${JSON.stringify(stats)} but the listing counts ${JSON.stringify(counts)}`);
    }
    const acked = [...this.jobs.values()].filter((j) => j.acks > 0).length;
    const maybe = [...this.jobs.values()].filter((j) => j.acks === 0 && j.ackMaybe).length;
    if (stats.done! < acked || stats.done! > acked + maybe) {
      return run.fail('queue-counters', `stats().done is ${stats.done} but ${acked} jobs were acked (and ${maybe} more acks may have applied)`);
    }
  }
}
