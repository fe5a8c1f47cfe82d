/**
 * The simulated store's state, shared by every process: objects (an inode per name, as on a
 * filesystem, so a deleted log that its writer still appends to keeps growing unseen), the
 * existence history every listing is judged against, writer locks, and what a crash keeps.
 *
 * Durability model (no damage injected):
 *  - a put or delete is durable once it answered; its effect is visible from the moment it lands
 *    (between call and answer). A process crash keeps a landed effect; an effect not landed yet is
 *    dropped, landed now, or (object stores) left to land later as a zombie request. A machine
 *    crash may also undo a landed effect whose answer had not come (no directory fsync yet),
 *    unless a later change of the same directory answered (its directory fsync made it durable);
 *  - an append's bytes are visible once written and durable once it answered (fdatasync). A
 *    process crash keeps what was written (page cache) plus any prefix of the rest; a machine
 *    crash cuts every log to any length between its synced end and its written end, and may
 *    zero-fill the part kept past the synced end (the file grew, the data never got there);
 *  - nothing that answered is ever lost: there is no lost fsync beyond what the contract allows.
 */
import type { ObjectInfo } from '../../src/core/objects/object-store.js';
import type { Prng } from './prng.js';
import { Scheduler } from './scheduler.js';

export interface Inode {
  readonly id: number;
  data: Uint8Array;
  /** Bytes known durable (logs: the end of the last answered append). */
  synced: number;
  version: string;
  readonly log: boolean;
  /** Set by a sync: its name (and an object's put) survives a machine crash even if its create never answered. */
  nameDurable?: boolean;
}

/** One stretch of time a name existed. Ticks order every call and every phase. */
export interface Interval {
  readonly created: number;
  readonly inode: Inode;
  deleted?: number;
  /** When the call that deleted it was made (the listing contract counts from there). */
  deleteBegan?: number;
}

export interface WorldOptions {
  /** Chance that a store call fails with STORE_UNAVAILABLE (before or after taking effect). */
  failRate: number;
  /** Requests of a crashed process may land later (object stores); logs never do. */
  zombies: boolean;
  appendLogs: boolean;
  /** With append logs: the stores offer seal flags (as OPFS does), so writers watch a flag instead of looking the seal up. */
  sealFlags: boolean;
  lock: boolean;
}

export class SimWorld {
  tick = 0;
  readonly scheduler = new Scheduler();
  private readonly objects = new Map<string, Inode>();
  private readonly history = new Map<string, Interval[]>();
  private everKeys: string[] = [];
  private everSorted = true;
  private inodes = 0;
  private versions = 0;
  private opSerial = 0;
  /** Writer locks: path -> owning process. */
  readonly locks = new Map<string, number>();
  readonly dead = new Set<number>();
  readonly paused = new Set<number>();
  /** Set while the checker runs: no injected failures. */
  calm = false;

  constructor(readonly options: WorldOptions) {}

  /**
   * Per directory (key up to its last `/`), the latest landing tick of a put or delete whose
   * answer came: the store made it durable, and with it (a directory fsync on the filesystem)
   * every earlier change of that directory. A machine crash can undo only changes that landed
   * after it (see `undoable`).
   */
  private readonly durableThrough = new Map<string, number>();

  /** A put or delete of `key` that landed at `landedTick` answered: durable, with its directory so far. */
  noteDurable(key: string, landedTick: number): void {
    const dir = key.slice(0, key.lastIndexOf('/') + 1);
    this.durableThrough.set(dir, Math.max(landedTick, this.durableThrough.get(dir) ?? 0));
  }

  /** Whether a machine crash may still undo a change of `key` that landed at `landedTick` and never answered. */
  undoable(key: string, landedTick: number): boolean {
    return (this.durableThrough.get(key.slice(0, key.lastIndexOf('/') + 1)) ?? 0) < landedTick;
  }

  nextTick(): number {
    return ++this.tick;
  }

  nextOpId(): number {
    return ++this.opSerial;
  }

  newInode(data: Uint8Array, log: boolean): Inode {
    return { id: ++this.inodes, data, synced: log ? 0 : data.length, version: this.newVersion(), log };
  }

  newVersion(): string {
    return `s${++this.versions}`;
  }

  get failRate(): number {
    return this.calm ? 0 : this.options.failRate;
  }

  lookup(key: string): Inode | undefined {
    return this.objects.get(key);
  }

  /** Makes `key` name `inode` (replacing whatever it named). */
  link(key: string, inode: Inode): void {
    const tick = this.nextTick();
    this.closeInterval(key, tick, tick);
    this.objects.set(key, inode);
    let list = this.history.get(key);
    if (!list) {
      list = [];
      this.history.set(key, list);
      this.everKeys.push(key);
      this.everSorted = false;
    }
    list.push({ created: tick, inode });
  }

  /** Removes `key`; `began` is the tick of the deleting call. */
  unlink(key: string, began: number): Inode | undefined {
    const inode = this.objects.get(key);
    if (!inode) return undefined;
    this.objects.delete(key);
    this.closeInterval(key, this.nextTick(), began);
    return inode;
  }

  private closeInterval(key: string, tick: number, began: number): void {
    const last = this.history.get(key)?.at(-1);
    if (last && last.deleted === undefined) {
      last.deleted = tick;
      last.deleteBegan = began;
    }
  }

  intervals(key: string): readonly Interval[] {
    return this.history.get(key) ?? [];
  }

  /** Every key that ever existed, ascending. */
  allKeys(): readonly string[] {
    if (!this.everSorted) {
      this.everKeys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      this.everSorted = true;
    }
    return this.everKeys;
  }

  /** Current keys with `prefix`, ascending (for the checker and damage). */
  keys(prefix = ''): string[] {
    return this.allKeys().filter((k) => k.startsWith(prefix) && this.objects.has(k));
  }

  info(key: string, inode: Inode): ObjectInfo {
    return { key, size: inode.data.length, version: inode.version };
  }

  isLive(pid: number): boolean {
    return !this.dead.has(pid);
  }

  /** A process dies: its pending calls are cut (see the durability model above), its lock freed. */
  crashProcess(pid: number, prng: Prng): void {
    this.dead.add(pid);
    this.paused.delete(pid);
    this.scheduler.crash(pid, 'process', prng);
    for (const [path, owner] of this.locks) if (owner === pid) this.locks.delete(path);
  }

  /**
   * The machine dies with every process (`pids`): pending calls are cut, then every log keeps any
   * length between its synced and its written end, possibly zero-filled past the synced end.
   */
  crashMachine(pids: readonly number[], prng: Prng): void {
    for (const pid of pids) this.dead.add(pid);
    this.paused.clear();
    this.scheduler.crash(undefined, 'machine', prng);
    this.locks.clear();
    for (const key of this.keys()) {
      const inode = this.objects.get(key)!;
      if (!inode.log || inode.synced >= inode.data.length) continue;
      const keep = prng.int(inode.synced, inode.data.length);
      const data = inode.data.slice(0, keep);
      if (keep > inode.synced && prng.chance(0.3)) data.fill(0, prng.int(inode.synced, keep - 1));
      inode.data = data;
      // What survived is on disk now.
      inode.synced = data.length;
    }
  }

  /** Bytes of `key` for damage injection (undefined when absent). */
  raw(key: string): Inode | undefined {
    return this.objects.get(key);
  }
}
