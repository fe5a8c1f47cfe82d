/**
 * A simulated process: its own store handle (SimStore, tagged with its pid) and clock, the calls
 * it has not heard back from, and what a crash or pause does to it. Writers, readers and queue
 * handles build on it. A crash abandons the instance: its pending calls are cut (sim-world.ts)
 * and nothing it does later reaches the store.
 */
import type { SimContext } from './context.js';
import { codeOf, reportsDamage } from './history.js';
import type { Prng } from './prng.js';
import { SimStore } from './sim-store.js';
import { ProcessClock } from './virtual-time.js';

export type ActorState = 'opening' | 'open' | 'open-failed' | 'closing' | 'closed' | 'crashed';

/** Codes each kind of call may answer with when no damage was injected (anything else is a bug). */
export const EXPECTED = {
  open: ['FENCED', 'LOCKED', 'STORE_UNAVAILABLE', 'NOT_FOUND'],
  commit: ['FENCED', 'CLOSED', 'CONFLICT', 'STORE_UNAVAILABLE'],
  call: ['FENCED', 'CLOSED', 'STORE_UNAVAILABLE', 'CONFLICT'],
  reader: ['NOT_FOUND', 'STORE_UNAVAILABLE'],
} as const;

/** Base of writers, readers and queue handles: a process with a store handle and a list of unsettled calls. */
export abstract class Actor {
  readonly pid: number;
  readonly store: SimStore;
  readonly clock: ProcessClock;
  state: ActorState = 'opening';
  /** Labels of calls that have not settled (a live actor's must all settle once the world is quiet). */
  readonly pending = new Map<number, string>();
  private calls = 0;

  constructor(
    protected readonly ctx: SimContext,
    readonly name: string,
  ) {
    this.pid = ctx.nextPid();
    this.store = new SimStore(ctx.world, this.pid, name, ctx.seed);
    this.clock = new ProcessClock(ctx.time, this.pid);
  }

  get alive(): boolean {
    return this.state !== 'crashed' && this.state !== 'closed';
  }

  /** Follows a call: records it as pending, then reports its outcome (unless the process died). */
  track<T>(label: string, promise: Promise<T>, expected: readonly string[], settled: (result: { ok: true; value: T } | { ok: false; error: unknown }) => void): void {
    const id = ++this.calls;
    this.pending.set(id, label);
    promise.then(
      (value) => {
        this.pending.delete(id);
        if (this.state !== 'crashed') settled({ ok: true, value });
      },
      (error: unknown) => {
        this.pending.delete(id);
        if (this.state === 'crashed') return;
        this.judge(label, error, expected);
        settled({ ok: false, error });
      },
    );
  }

  /** An unexpected rejection is a violation (CORRUPT_DATA after damage is the detection we want). */
  protected judge(label: string, error: unknown, expected: readonly string[]): void {
    const code = codeOf(error);
    if (this.ctx.damaged && reportsDamage(error)) {
      this.ctx.detected ??= `${code} at ${this.name} ${label}: ${(error as Error).message}`;
      return;
    }
    if (!expected.includes(code)) this.ctx.fail('expected-errors-only', `${this.name} ${label} rejected with ${code}: ${(error as Error)?.stack ?? String(error)}`);
  }

  crash(r: Prng): void {
    this.state = 'crashed';
    this.ctx.world.crashProcess(this.pid, r);
    this.ctx.time.kill(this.pid);
    this.pending.clear();
  }

  pause(): void {
    this.ctx.world.paused.add(this.pid);
    this.ctx.time.pause(this.pid);
  }

  resume(): void {
    this.ctx.world.paused.delete(this.pid);
    this.ctx.time.resume(this.pid);
  }

  get paused(): boolean {
    return this.ctx.world.paused.has(this.pid);
  }
}
