/**
 * Virtual time. Every timer the engine arms (its Clock's sleeps, and zero-delay `setTimeout`s
 * from `yieldToEventLoop`, see determinism.ts) becomes a sleeper here, and fires only when the
 * simulation picks it, so no real timer ever decides an interleaving.
 */
import type { Clock } from '../../src/core/clock.js';

export interface Sleeper {
  readonly at: number;
  readonly seq: number;
  /** The process whose clock armed it; undefined for global timers (setTimeout). */
  readonly owner: number | undefined;
  readonly label: string;
  fire(): void;
}

export class VirtualTime {
  now = 1_700_000_000_000;
  private seq = 0;
  private sleepers: Sleeper[] = [];
  private readonly dead = new Set<number>();
  private readonly paused = new Set<number>();

  add(ms: number, owner: number | undefined, label: string, fire: () => void): Sleeper {
    const sleeper: Sleeper = { at: this.now + (ms > 0 ? ms : 0), seq: this.seq++, owner, label, fire };
    if (owner === undefined || !this.dead.has(owner)) this.sleepers.push(sleeper);
    return sleeper;
  }

  cancel(sleeper: Sleeper): void {
    const i = this.sleepers.indexOf(sleeper);
    if (i >= 0) this.sleepers.splice(i, 1);
  }

  private active(s: Sleeper): boolean {
    return s.owner === undefined || !this.paused.has(s.owner);
  }

  /** The sleeper due first (deadline, then arming order) among those of running processes. */
  private first(): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.sleepers) {
      if (!this.active(s)) continue;
      if (!best || s.at < best.at || (s.at === best.at && s.seq < best.seq)) best = s;
    }
    return best;
  }

  /** The next sleeper that is already due, if any. */
  ready(): Sleeper | undefined {
    const s = this.first();
    return s && s.at <= this.now ? s : undefined;
  }

  /** Whether some running process waits for a future deadline. */
  get waiting(): boolean {
    const s = this.first();
    return s !== undefined && s.at > this.now;
  }

  fire(sleeper: Sleeper): void {
    this.cancel(sleeper);
    sleeper.fire();
  }

  /** Moves time to the next deadline (never backwards). */
  advance(): number {
    const s = this.first();
    if (s && s.at > this.now) this.now = s.at;
    return this.now;
  }

  /** A crashed process's timers never fire. */
  kill(owner: number): void {
    this.dead.add(owner);
    this.sleepers = this.sleepers.filter((s) => s.owner !== owner);
  }

  pause(owner: number): void {
    this.paused.add(owner);
  }

  resume(owner: number): void {
    this.paused.delete(owner);
  }

  /** Drops every timer (end of a run: whatever still waits belongs to abandoned processes). */
  clear(): void {
    this.sleepers = [];
  }

  get pending(): number {
    return this.sleepers.length;
  }
}

/** The Clock a simulated process hands the engine: its sleeps are owned by the process. */
export class ProcessClock implements Clock {
  constructor(
    private readonly time: VirtualTime,
    private readonly owner: number,
  ) {}

  now(): number {
    return this.time.now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper = this.time.add(ms, this.owner, `sleep ${ms}ms`, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = (): void => {
        this.time.cancel(sleeper);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
