/**
 * Pending store operations. Every call a simulated process makes on the store is an operation
 * with one or more phases (a put: its effect, then its answer; an append: its write, then its
 * sync and answer), and the simulation delivers one phase at a time, of an operation it picks.
 * That gives latency, reordering between concurrent calls, and a put whose effect lands at some
 * point between the call and the answer.
 */
import type { Prng } from './prng.js';

export interface Phase {
  readonly label: string;
  /** Returns a note for the trace (e.g. why a put did not land). */
  run(): string | void;
}

/** How a crash treats an operation still pending (see SimWorld.crashProcess). */
export type CrashKind = 'process' | 'machine';

export interface PendingOp {
  readonly id: number;
  readonly owner: number;
  readonly label: string;
  /** Relative chance of being picked: a slow operation (weight < 1) tends to land late. */
  readonly weight: number;
  readonly phases: Phase[];
  /** Its owner crashed, but its effect may still land (a request already on the wire). */
  zombie: boolean;
  /** Called when its owner crashes with the operation still pending; may keep it as a zombie. */
  onCrash(kind: CrashKind, prng: Prng): 'drop' | 'zombie';
}

export class Scheduler {
  private readonly ops: PendingOp[] = [];

  add(op: PendingOp): void {
    this.ops.push(op);
  }

  /** Operations whose next phase may run now: not of a paused process (zombies always may). */
  eligible(paused: ReadonlySet<number>): PendingOp[] {
    return this.ops.filter((op) => op.zombie || !paused.has(op.owner));
  }

  /** Runs the next phase of `op`; returns its label. */
  step(op: PendingOp): string {
    const phase = op.phases.shift();
    if (op.phases.length === 0) this.remove(op);
    if (!phase) return `${op.label}: nothing left`;
    const note = phase.run();
    return `${op.label}: ${phase.label}${note ? ` (${note})` : ''}`;
  }

  private remove(op: PendingOp): void {
    const i = this.ops.indexOf(op);
    if (i >= 0) this.ops.splice(i, 1);
  }

  /** Applies a crash to every pending operation of `owner` (all owners for a machine crash). */
  crash(owner: number | undefined, kind: CrashKind, prng: Prng): void {
    for (const op of [...this.ops]) {
      if (owner !== undefined && op.owner !== owner) continue;
      if (op.zombie) {
        if (kind === 'machine') this.remove(op);
        continue;
      }
      if (op.onCrash(kind, prng) === 'zombie') op.zombie = true;
      else this.remove(op);
    }
  }

  get size(): number {
    return this.ops.length;
  }

  /** Every pending operation (for the end of a run). */
  clear(): void {
    this.ops.length = 0;
  }
}
