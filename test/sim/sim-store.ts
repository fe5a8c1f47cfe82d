/**
 * One simulated process's handle on the shared SimWorld: an ObjectStore with append logs (and a
 * writer lock when the run has one). Every call becomes a scheduled operation (scheduler.ts):
 * nothing happens until the simulation delivers its phases, a call may fail with
 * STORE_UNAVAILABLE before or after its effect, and a crashed process's calls are cut as the
 * durability model in sim-world.ts says. Once its process is dead a handle answers nothing.
 */
import { PreconditionFailedError, StoreLockedError, StoreUnavailableError } from '../../src/core/errors.js';
import type { AppendLog, AppendLogStore, SealFlag, SealFlagStore } from '../../src/core/objects/append-log.js';
import { validateGetRange, validateListPrefix, validateObjectKey, validatePutData } from '../../src/core/objects/keys.js';
import type { GetOptions, ListOptions, ObjectInfo, ObjectStore, ObjectVersion, PutOptions, StoredObject, WriterLock } from '../../src/core/objects/object-store.js';
import { checkPrecondition } from '../../src/core/objects/preconditions.js';
import { Listing } from './listing.js';
import { Prng, labelHash } from './prng.js';
import type { CrashKind, Phase } from './scheduler.js';
import type { Inode, SimWorld } from './sim-world.js';

type Fault = 'none' | 'before' | 'after';
type CrashHandler = (kind: CrashKind, prng: Prng) => 'drop' | 'zombie';

const OP_STREAM = labelHash('op');
/** A put or delete cut by a crash before it landed: never lands / lands later (zombie) / lands at the crash. */
const CRASH_DROP = 0.4;
const CRASH_ZOMBIE = 0.2;
/** A landed effect whose answer had not come is undone by a machine crash this often. */
const MACHINE_UNDO = 0.5;

export class SimStore implements ObjectStore {
  readonly appendLogs?: AppendLogStore;
  readonly lockWriter?: (path: string) => Promise<WriterLock>;

  constructor(
    readonly world: SimWorld,
    readonly pid: number,
    readonly name: string,
    private readonly seed: number,
  ) {
    if (world.options.appendLogs) {
      const flags: SealFlagStore | undefined = world.options.sealFlags ? { create: (key) => this.createFlag(key), raise: (key) => this.raiseFlag(key) } : undefined;
      this.appendLogs = { createLog: (key) => this.createLog(key), exists: (key) => this.exists(key), sync: (key) => this.sync(key), ...(flags ? { flags } : {}) };
    }
    if (world.options.lock) this.lockWriter = (path) => this.lock(path);
  }

  /** Registers a call with the scheduler (a dead process's calls are never answered). */
  private submit(label: string, prng: Prng, phases: Phase[], onCrash: CrashHandler = () => 'drop'): void {
    if (!this.world.isLive(this.pid)) return;
    const weight = prng.weighted<number>([
      [1, 0.8],
      [0.25, 0.15],
      [0.03, 0.05],
    ])!;
    this.world.scheduler.add({ id: this.world.nextOpId(), owner: this.pid, label: `${this.name} ${label}`, weight, phases, zombie: false, onCrash });
  }

  private opPrng(): Prng {
    return Prng.of(this.seed, OP_STREAM, this.world.nextOpId());
  }

  private drawFault(prng: Prng): Fault {
    if (!prng.chance(this.world.failRate)) return 'none';
    return prng.chance(0.5) ? 'before' : 'after';
  }

  private unavailable(what: string, fault: Fault): StoreUnavailableError {
    return new StoreUnavailableError(`injected store failure (${fault} effect): ${what}`, { injected: true });
  }

  /** The crash rule of puts and deletes: see sim-world.ts. `land` applies the effect. */
  private effectCrash(phases: Phase[], state: { landed: boolean }, land: () => unknown, undo: () => void, allowZombie: boolean): CrashHandler {
    return (kind, prng) => {
      if (!state.landed) {
        const r = prng.float();
        if (r < CRASH_DROP) return 'drop';
        if (allowZombie && this.world.options.zombies && r < CRASH_DROP + CRASH_ZOMBIE) {
          phases.splice(1); // the effect stays; nobody hears the answer
          return 'zombie';
        }
        land();
        return 'drop';
      }
      if (kind === 'machine' && prng.chance(MACHINE_UNDO)) undo();
      return 'drop';
    };
  }

  get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      validateGetRange(key, options?.range);
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      let seen: StoredObject | undefined;
      const read = (): void => {
        const inode = this.world.lookup(key);
        if (!inode) return void (seen = undefined);
        const range = options?.range;
        const start = range ? Math.min(range.offset, inode.data.length) : 0;
        const end = range ? Math.min(start + range.length, inode.data.length) : inode.data.length;
        seen = { data: inode.data.slice(start, end), version: inode.version };
      };
      const answer = (): void => (fault !== 'none' ? reject(this.unavailable(`get ${key}`, fault)) : resolve(seen));
      // Sometimes the answer travels a while after the read (a stale read).
      const phases: Phase[] = prng.chance(0.25)
        ? [
            { label: 'reads', run: read },
            { label: 'answers', run: answer },
          ]
        : [{ label: 'reads and answers', run: () => (read(), answer()) }];
      this.submit(`get ${key}`, prng, phases);
    });
  }

  put(key: string, data: Uint8Array, options?: PutOptions): Promise<{ version: ObjectVersion }> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      validatePutData(key, data);
      const bytes = data.slice();
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const state = { landed: false };
      let result: { version: ObjectVersion } | Error | undefined;
      let undo = (): void => undefined;
      let landedAt: number | undefined;
      const land = (): string | void => {
        if (fault === 'before' || state.landed) return fault === 'before' ? 'fails before' : undefined;
        const existing = this.world.lookup(key);
        try {
          checkPrecondition(key, options, existing?.version);
        } catch (e) {
          result = e as Error;
          return 'precondition failed';
        }
        const inode = this.world.newInode(bytes, false);
        this.world.link(key, inode);
        state.landed = true;
        const landedTick = this.world.tick;
        landedAt = landedTick;
        result = { version: inode.version };
        undo = () => {
          if (this.world.lookup(key) !== inode || inode.nameDurable || !this.world.undoable(key, landedTick)) return;
          if (existing) this.world.link(key, existing);
          else this.world.unlink(key, this.world.tick);
        };
      };
      const answer = (): string | void => {
        if (landedAt !== undefined) this.world.noteDurable(key, landedAt);
        if (fault !== 'none') reject(this.unavailable(`put ${key}`, fault));
        else if (result instanceof Error) reject(result);
        else resolve(result!);
        return fault !== 'none' ? 'STORE_UNAVAILABLE' : undefined;
      };
      const how = options?.ifNoneMatch ? ' (create)' : options?.ifMatch ? ' (swap)' : '';
      const phases: Phase[] = [
        { label: 'lands', run: land },
        { label: 'answers', run: answer },
      ];
      this.submit(`put ${key}${how}`, prng, phases, this.effectCrash(phases, state, land, () => undo(), true));
    });
  }

  delete(key: string): Promise<void> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      const began = this.world.nextTick();
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const state = { landed: false };
      let removed: Inode | undefined;
      let landedAt: number | undefined;
      const land = (): string | void => {
        if (fault === 'before' || state.landed) return fault === 'before' ? 'fails before' : undefined;
        removed = this.world.unlink(key, began);
        landedAt = this.world.tick;
        state.landed = true;
      };
      const undo = (): void => {
        if (removed && !this.world.lookup(key) && this.world.undoable(key, landedAt ?? 0)) this.world.link(key, removed);
      };
      const answer = (): void => {
        if (landedAt !== undefined) this.world.noteDurable(key, landedAt);
        if (fault !== 'none') reject(this.unavailable(`delete ${key}`, fault));
        else resolve();
      };
      const phases: Phase[] = [
        { label: 'lands', run: land },
        { label: 'answers', run: answer },
      ];
      this.submit(`delete ${key}`, prng, phases, this.effectCrash(phases, state, land, undo, true));
    });
  }

  async *list(prefix: string, options?: ListOptions): AsyncIterable<ObjectInfo> {
    validateListPrefix(prefix);
    const listing = new Listing(this.world, prefix, options?.startAfter, this.world.nextTick());
    while (!listing.done) {
      const page = await this.listPage(prefix, listing);
      for (const info of page) yield info;
    }
  }

  private listPage(prefix: string, listing: Listing): Promise<ObjectInfo[]> {
    return new Promise((resolve, reject) => {
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const size = prng.int(1, 5);
      const answer = (): void => (fault !== 'none' ? reject(this.unavailable(`list ${prefix}`, fault)) : resolve(listing.page(prng, size)));
      this.submit(`list page ${prefix}`, prng, [{ label: 'answers', run: answer }]);
    });
  }

  exists(key: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const answer = (): void => (fault !== 'none' ? reject(this.unavailable(`exists ${key}`, fault)) : resolve(this.world.lookup(key) !== undefined));
      this.submit(`exists ${key}`, prng, [{ label: 'answers', run: answer }]);
    });
  }

  /** fdatasync through any descriptor: every byte of the log or object written so far becomes durable. */
  sync(key: string): Promise<void> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const answer = (): void => {
        if (fault !== 'none') return reject(this.unavailable(`sync ${key}`, fault));
        const inode = this.world.lookup(key);
        if (inode) {
          // A log's bytes so far; for an object, its put (data and name) survives a machine crash
          // even if that put never answered (fs: fdatasync of the file, fsync of its directory).
          if (inode.log) inode.synced = Math.max(inode.synced, inode.data.length);
          inode.nameDurable = true;
        }
        resolve();
      };
      this.submit(`sync ${key}`, prng, [{ label: 'syncs and answers', run: answer }]);
    });
  }

  createLog(key: string): Promise<AppendLog> {
    return this.createOpen(key, 'log', (inode) => new SimAppendLog(this, key, inode));
  }

  /** A seal flag: an empty object kept open (like a log); raised, it holds one byte, 1. */
  createFlag(key: string): Promise<SealFlag> {
    return this.createOpen(key, 'seal flag', (inode) => new SimSealFlag(this, key, inode));
  }

  /** Reads the flag through its open inode (the holder's handle), as a scheduled call. */
  flagRaised(key: string, inode: Inode): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const answer = (): void => (fault !== 'none' ? reject(this.unavailable(`read seal flag ${key}`, fault)) : resolve(inode.data[0] === 1));
      this.submit(`read seal flag ${key}`, prng, [{ label: 'answers', run: answer }]);
    });
  }

  /** Writes 1 into the flag at `key` (absent: nothing) and flushes; like an append, it is durable when it answers. */
  raiseFlag(key: string): Promise<void> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      let inode: Inode | undefined;
      const phases: Phase[] = [];
      if (fault !== 'before') {
        phases.push({
          label: 'raises',
          run: () => {
            inode = this.world.lookup(key);
            if (inode) inode.data = Uint8Array.of(1);
          },
        });
      }
      phases.push({
        label: fault === 'none' ? 'syncs and answers' : 'fails',
        run: () => {
          if (fault !== 'none') return reject(this.unavailable(`raise seal flag ${key}`, fault));
          if (inode) inode.synced = Math.max(inode.synced, inode.data.length);
          resolve();
        },
      });
      this.submit(`raise seal flag ${key}`, prng, phases);
    });
  }

  /** A create-only object kept open by the caller: a log or a seal flag. */
  private createOpen<T>(key: string, what: string, open: (inode: Inode) => T): Promise<T> {
    return new Promise((resolve, reject) => {
      validateObjectKey(key);
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const state = { landed: false };
      let inode: Inode | undefined;
      let error: Error | undefined;
      const land = (): string | void => {
        if (fault === 'before' || state.landed) return fault === 'before' ? 'fails before' : undefined;
        if (this.world.lookup(key)) {
          error = new PreconditionFailedError(`object already exists. key=${key}`, { key });
          return 'exists';
        }
        inode = this.world.newInode(new Uint8Array(0), true);
        this.world.link(key, inode);
        state.landed = true;
      };
      const undo = (): void => {
        if (inode && !inode.nameDurable && this.world.lookup(key) === inode) this.world.unlink(key, this.world.tick);
      };
      const answer = (): void => {
        if (fault !== 'none') reject(this.unavailable(`create ${what} ${key}`, fault));
        else if (error) reject(error);
        else resolve(open(inode!));
      };
      const phases: Phase[] = [
        { label: 'lands', run: land },
        { label: 'answers', run: answer },
      ];
      this.submit(`create ${what} ${key}`, prng, phases, this.effectCrash(phases, state, land, undo, false));
    });
  }

  /** One append to `inode` (called by SimAppendLog; one at a time per log, as the contract says). */
  append(key: string, inode: Inode, data: Uint8Array, done: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const bytes = data.slice();
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      let written = 0;
      const writeUpTo = (n: number): void => {
        if (n <= written) return;
        const next = new Uint8Array(inode.data.length + (n - written));
        next.set(inode.data);
        next.set(bytes.subarray(written, n), inode.data.length);
        inode.data = next;
        written = n;
      };
      const phases: Phase[] = [];
      if (fault === 'before') {
        phases.push({ label: 'fails', run: () => reject(this.unavailable(`append ${key}`, fault)) });
      } else if (fault === 'after') {
        // A failed append leaves any prefix of its bytes (the writer must stop using the log).
        const cut = prng.int(0, bytes.length);
        phases.push({ label: `writes ${cut}/${bytes.length} bytes`, run: () => writeUpTo(cut) });
        phases.push({ label: 'fails', run: () => reject(this.unavailable(`append ${key}`, fault)) });
      } else {
        if (prng.chance(0.3)) {
          const part = prng.int(1, Math.max(1, bytes.length - 1));
          phases.push({ label: `writes ${part}/${bytes.length} bytes`, run: () => writeUpTo(part) });
        }
        phases.push({ label: `writes ${bytes.length} bytes`, run: () => writeUpTo(bytes.length) });
        phases.push({
          label: 'syncs and answers',
          run: () => {
            inode.synced = Math.max(inode.synced, inode.data.length);
            done();
            resolve();
          },
        });
      }
      // A crash mid-append: what was written stays (page cache) plus any prefix of the rest;
      // a machine crash then cuts the unsynced tail (SimWorld.crashMachine).
      const onCrash: CrashHandler = (_kind, p) => {
        if (fault !== 'before') writeUpTo(p.int(written, bytes.length));
        return 'drop';
      };
      this.submit(`append ${key} (${bytes.length} B)`, prng, phases, onCrash);
    });
  }

  private lock(path: string): Promise<WriterLock> {
    return new Promise((resolve, reject) => {
      const prng = this.opPrng();
      const fault = this.drawFault(prng);
      const answer = (): void => {
        if (fault !== 'none') return reject(this.unavailable(`lock ${path}`, fault));
        const holder = this.world.locks.get(path);
        if (holder !== undefined && holder !== this.pid && this.world.isLive(holder)) {
          return reject(new StoreLockedError(`another live writer holds the lock. path=${path}`, { path }));
        }
        this.world.locks.set(path, this.pid);
        resolve({
          release: async () => {
            if (this.world.locks.get(path) === this.pid) this.world.locks.delete(path);
          },
        });
      };
      this.submit(`lock ${path}`, prng, [{ label: 'answers', run: answer }]);
    });
  }
}

class SimAppendLog implements AppendLog {
  size = 0;

  constructor(
    private readonly store: SimStore,
    readonly key: string,
    private readonly inode: Inode,
  ) {}

  append(data: Uint8Array): Promise<void> {
    const length = data.length;
    return this.store.append(this.key, this.inode, data, () => (this.size += length));
  }

  async close(): Promise<void> {}
}

class SimSealFlag implements SealFlag {
  constructor(
    private readonly store: SimStore,
    private readonly key: string,
    private readonly inode: Inode,
  ) {}

  raised(): Promise<boolean> {
    return this.store.flagRaised(this.key, this.inode);
  }

  async close(): Promise<void> {}
}
