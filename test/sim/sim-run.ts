/**
 * The state of one run (SimContext) and the two ways time moves: `deliver` runs one pending
 * event (a phase of a store call, a due timer, or virtual time jumping to the next deadline), and
 * `until` keeps delivering until a promise settles.
 */
import type { ReaderActor } from './reader-actor.js';
import type { WriterActor } from './writer-actor.js';
import type { Violation } from './checker.js';
import type { SimConfig, SimContext } from './context.js';
import { settle } from './determinism.js';
import type { WriterRecord } from './history.js';
import type { Prng } from './prng.js';
import { SimWorld } from './sim-world.js';
import type { SimStats } from './simulation.js';
import { VirtualTime } from './virtual-time.js';

/** Deliveries allowed while waiting for one promise before calling it stuck. */
const UNTIL_LIMIT = 50_000;

export class SimRun implements SimContext {
  readonly world: SimWorld;
  readonly time = new VirtualTime();
  readonly writers: WriterRecord[] = [];
  readonly writerActors: WriterActor[] = [];
  readonly readerActors: ReaderActor[] = [];
  readonly lines: string[] = [];
  readonly stats: SimStats = { steps: 0, actions: 0, deliveries: 0, commits: 0, acknowledged: 0, opens: 0, crashes: 0, machineCrashes: 0, damage: 0 };
  step = 0;
  damaged = false;
  detected: string | undefined;
  violation: Violation | undefined;
  inconclusive = false;
  private pids = 0;
  private commitIds = 0;

  constructor(
    readonly seed: number,
    readonly config: SimConfig,
  ) {
    this.world = new SimWorld({ failRate: config.failRate, zombies: config.zombies, appendLogs: config.appendLogs, sealFlags: config.sealFlags, lock: config.lock });
  }

  trace(line: string): void {
    this.lines.push(`#${this.step} ${line}`);
  }

  fail(invariant: string, message: string): void {
    if (this.violation) return;
    this.violation = { invariant, message };
    this.trace(`VIOLATION ${invariant}: ${message.split('\n')[0]}`);
  }

  nextPid(): number {
    return ++this.pids;
  }

  nextCommitId(): number {
    return ++this.commitIds;
  }

  /** Runs one event; false when nothing can happen (no call pending, no timer waiting). */
  deliver(r: Prng): boolean {
    const ops = this.world.scheduler.eligible(this.world.paused);
    const timer = this.time.ready();
    const choices: (readonly [number, number])[] = ops.map((op, i) => [i, op.weight] as const);
    if (timer) choices.push([-1, 2]);
    if (this.time.waiting) choices.push([-2, ops.length === 0 && !timer ? 1 : 0.05]);
    const pick = r.weighted(choices);
    if (pick === undefined) return false;
    this.stats.deliveries++;
    if (pick === -1) {
      this.trace(`timer ${timer!.label}${timer!.owner === undefined ? '' : ` of pid ${timer!.owner}`}`);
      this.time.fire(timer!);
    } else if (pick === -2) {
      this.trace(`time -> +${this.time.advance() - 1_700_000_000_000} ms`);
    } else {
      const op = ops[pick]!;
      this.trace(`${op.zombie ? '(zombie) ' : ''}${this.world.scheduler.step(op)}`);
    }
    return true;
  }

  /**
   * Delivers events until `promise` settles. Undefined when it never can (nothing left to run, or
   * endless work): a liveness violation named after `what`.
   */
  async until<T>(promise: Promise<T>, r: Prng, what: string): Promise<{ ok: true; value: T } | { ok: false; error: unknown } | undefined> {
    let result: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    promise.then(
      (value) => (result = { ok: true, value }),
      (error: unknown) => (result = { ok: false, error }),
    );
    await settle();
    for (let n = 0; !result; n++) {
      if (n > UNTIL_LIMIT || !this.deliver(r)) {
        this.fail('liveness', `${what} never settled (${n > UNTIL_LIMIT ? 'endless activity' : 'nothing left to run'})`);
        return undefined;
      }
      await settle();
    }
    return result;
  }

  /** Delivers until nothing is pending; false when the activity does not end. */
  async quiesce(r: Prng): Promise<boolean> {
    await settle();
    for (let n = 0; n < UNTIL_LIMIT; n++) {
      if (!this.deliver(r)) return true;
      await settle();
    }
    return false;
  }
}
