/**
 * The writer's bookkeeping for transactions: the snapshots open transactions read at (counted,
 * so the memtable keeps every version one of them may still read), and the sequence number of
 * the last commit of each tracked key, for write-write conflict detection. A key's entry can be
 * dropped once no open transaction reads at a snapshot older than that commit.
 */
import { toHex } from '../bytes.js';
import { ConflictError } from '../errors.js';
import type { PendingWrite } from './transaction.js';

export class ConflictTracker {
  private readonly snapshots = new Map<number, number>();
  private readonly recentWrites = new Map<string, number>();
  private recentWritesLimit = 4096;

  /** Holds `snapshot` open for a transaction; returns it. */
  pin(snapshot: number): number {
    this.snapshots.set(snapshot, (this.snapshots.get(snapshot) ?? 0) + 1);
    return snapshot;
  }

  release(snapshot: number): void {
    const n = this.snapshots.get(snapshot);
    if (n === undefined) return;
    if (n <= 1) this.snapshots.delete(snapshot);
    else this.snapshots.set(snapshot, n - 1);
  }

  /** The oldest snapshot an open transaction reads at, or `lastSeq` when none is open. */
  oldest(lastSeq: number): number {
    let min = lastSeq;
    for (const s of this.snapshots.keys()) if (s < min) min = s;
    return min;
  }

  /** Throws CONFLICT when a tracked write's key was committed after `snapshot` (never for a blind transaction). */
  check(snapshot: number, writes: ReadonlyMap<string, PendingWrite>, blind: boolean): void {
    for (const [id, w] of writes) {
      if (!w.tracked || blind) continue;
      const last = this.recentWrites.get(id);
      if (last !== undefined && last > snapshot) {
        throw new ConflictError(`write-write conflict. key=${toHex(w.key.subarray(0, 32))} snapshot=${snapshot} committed_seq=${last}`, { snapshot, committedSeq: last });
      }
    }
  }

  /** Records a commit of the tracked key `id` at `seq`. */
  noteWrite(id: string, seq: number): void {
    this.recentWrites.set(id, seq);
  }

  /** Forgets the commits no open transaction can conflict with, once there are many. */
  prune(lastSeq: number): void {
    if (this.recentWrites.size <= this.recentWritesLimit) return;
    const floor = this.oldest(lastSeq);
    for (const [id, seq] of this.recentWrites) if (seq <= floor) this.recentWrites.delete(id);
    this.recentWritesLimit = Math.max(4096, this.recentWrites.size * 2);
  }
}
