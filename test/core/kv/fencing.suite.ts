/**
 * Adversarial fencing tests, run on every store (memory, filesystem, S3, IndexedDB, OPFS).
 *
 * The contract (see docs/rfcs/0001-kv-engine.md, "Open as writer"): a newer writer always wins
 * its open; an older writer never acknowledges a write the newer one did not take over; a write
 * rejected with FENCED was not applied, and every later write of that writer is FENCED too; an
 * open never writes before it has proven the store empty or readable.
 *
 * Each scenario holds one protocol step of the older writer (through the `faults` hook) while a
 * newer writer opens, writes and flushes, then lets the held step go on and checks what a fresh
 * open sees. Only the engine's public entry (`src/core/kv/index.ts`) is used.
 */
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../src/core/bytes.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KvDb, type FaultHook, type KvDbOptions } from '../../../src/core/kv/index.js';
import type { ObjectStore } from '../../../src/core/objects/index.js';

export interface FencingStore {
  readonly store: ObjectStore;
  /** Another handle on the same objects, as a second process would open it (default: `store`). */
  readonly another?: () => ObjectStore;
  readonly cleanup?: () => Promise<void>;
}

export type FencingStoreFactory = () => Promise<FencingStore>;

/** Options that make flushes (and, with maxRuns 2, compactions) happen after a few writes. */
export const SMALL: KvDbOptions = { memtableBytes: 1024, flushMaxBytes: 1024, maxRuns: 2, blockBytes: 256 };

const PATH = 'kv';

// ---- helpers -------------------------------------------------------------------------------

export type Outcome = { readonly ok: true } | { readonly ok: false; readonly code: string; readonly error: unknown };

/** The settled outcome of a write: acknowledged, or rejected with a code. */
export function outcome(p: Promise<unknown>): Promise<Outcome> {
  return p.then(
    () => ({ ok: true }) as const,
    (error: unknown) => ({ ok: false, code: isTaqubaError(error) ? error.code : `non-library error: ${String(error)}`, error }) as const,
  );
}

export const codeOf = (o: Outcome): string => (o.ok ? 'acknowledged' : o.code);

/** The code, with the error's message (and its cause's) when it is not FENCED: for failure messages. */
export function explain(o: Outcome): string {
  if (o.ok || o.code === 'FENCED') return codeOf(o);
  const e = o.error as { message?: string; cause?: { message?: string } };
  return `${o.code} (${e?.message ?? String(e)}${e?.cause?.message ? `; cause: ${e.cause.message}` : ''})`;
}

/** Rejects with a message naming `what` when `p` does not settle within `ms`. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function put(key: string, value: string): { type: 'put'; key: Uint8Array; value: Uint8Array } {
  return { type: 'put', key: utf8(key), value: utf8(value) };
}

export async function textOf(db: { get(key: Uint8Array): Promise<Uint8Array | undefined> }, key: string): Promise<string | undefined> {
  const v = await db.get(utf8(key));
  return v === undefined ? undefined : fromUtf8(v);
}

/** Every object of the store as `key@version`, in key order. */
export async function listAll(store: ObjectStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for await (const info of store.list(prefix)) out.push(`${info.key}@${info.version}`);
  return out;
}

interface Hold {
  readonly point: string;
  /** Resolves with the step's details once the step is reached (and held). */
  readonly reached: Promise<Record<string, number | string>>;
  readonly isReached: boolean;
  release(): void;
}

/**
 * A `faults` hook that can hold the next occurrence of a named step until released, and counts
 * every step it sees. Holding is one-shot: later occurrences of the step pass.
 */
export class FaultControl {
  private readonly pending = new Map<string, { reach: (d: Record<string, number | string>) => void; released: Promise<void> }>();
  readonly seen = new Map<string, number>();

  readonly hook: FaultHook = async (point, details) => {
    this.seen.set(point, (this.seen.get(point) ?? 0) + 1);
    const hold = this.pending.get(point);
    if (!hold) return;
    this.pending.delete(point);
    hold.reach(details);
    await hold.released;
  };

  count(point: string): number {
    return this.seen.get(point) ?? 0;
  }

  holdNext(point: string): Hold {
    let reach!: (d: Record<string, number | string>) => void;
    let release!: () => void;
    let isReached = false;
    const reached = new Promise<Record<string, number | string>>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.pending.set(point, {
      reach: (d) => {
        isReached = true;
        reach(d);
      },
      released,
    });
    return {
      point,
      reached,
      get isReached() {
        return isReached;
      },
      release,
    };
  }
}

/** Writes `count` keys `<prefix>000..` one commit each (durable), about 90 bytes a commit. */
async function writeMany(db: KvDb, prefix: string, count: number, from = 0): Promise<string[]> {
  const keys: string[] = [];
  for (let i = from; i < from + count; i++) {
    const key = `${prefix}${String(i).padStart(3, '0')}`;
    await db.write([put(key, valueOf(key))]);
    keys.push(key);
  }
  return keys;
}

const valueOf = (key: string): string => `${key}:${'v'.repeat(64)}`;

/** Opens a fresh writer and checks the expected keys are present with their values and the absent ones are not. */
async function expectState(store: ObjectStore, present: readonly string[], absent: readonly string[], values: ReadonlyMap<string, string> = new Map()): Promise<void> {
  const db = await within(KvDb.open(store, SMALL), 15_000, 'a fresh open after the schedule');
  try {
    for (const key of present) expect(await textOf(db, key), `acknowledged write ${key} survives`).toBe(values.get(key) ?? valueOf(key));
    for (const key of absent) expect(await textOf(db, key), `FENCED write ${key} was not applied`).toBeUndefined();
    await db.whenIdle();
  } finally {
    await db.close();
  }
}

// ---- the suite -----------------------------------------------------------------------------

export function describeFencingSuite(name: string, makeStore: FencingStoreFactory): void {
  async function withStore(fn: (s: { store: ObjectStore; another: () => ObjectStore }) => Promise<void>): Promise<void> {
    const made = await makeStore();
    try {
      await fn({ store: made.store, another: made.another ?? (() => made.store) });
    } finally {
      await made.cleanup?.();
    }
  }

  describe(`kv fencing over ${name}: an older writer's WAL put held while a newer writer takes over`, () => {
    /**
     * The bug this guards: A's held put lands after B flushed and its GC deleted the WAL ids B
     * had fenced, so the create-only put finds the id free, succeeds, and A acknowledges k2 and
     * k3, which no manifest will ever replay (they sit below B's walStart): lost acknowledged
     * writes.
     */
    it.each([
      ['after the newer writer flushed several times and collected its WAL', 'after-flushes'],
      ['before the newer writer flushes', 'before-flushes'],
    ] as const)('the held write and every later one reject with FENCED and are absent on reopen (released %s)', async (_, when) => {
      await withStore(async ({ store, another }) => {
        const faultsA = new FaultControl();
        const a = await KvDb.open(store, { ...SMALL, faults: faultsA.hook });
        await a.write([put('k1', valueOf('k1'))]);
        const held = faultsA.holdNext('wal:put');
        const k2 = outcome(a.write([put('k2', valueOf('k2'))]));
        await within(held.reached, 5000, "A's WAL put of k2 reaching wal:put");

        const faultsB = new FaultControl();
        const b = await within(KvDb.open(another(), { ...SMALL, faults: faultsB.hook }), 10_000, 'B opening while A holds a WAL put');
        const bKeys: string[] = [];
        if (when === 'before-flushes') {
          held.release();
          expect(explain(await within(k2, 10_000, 'k2 settling')), 'the held write of the fenced writer').toBe('FENCED');
        }
        bKeys.push(...(await writeMany(b, 'b', 60)));
        await b.whenIdle();
        expect(faultsB.count('flush:manifest-put'), 'B flushed its memtable several times').toBeGreaterThanOrEqual(3);
        if (when === 'after-flushes') {
          held.release();
          expect(explain(await within(k2, 10_000, 'k2 settling')), 'the held write of the fenced writer').toBe('FENCED');
        }
        expect(explain(await outcome(a.write([put('k3', valueOf('k3'))]))), 'a later write of the fenced writer').toBe('FENCED');
        expect(explain(await outcome(a.write([put('k4', valueOf('k4'))]))), 'every later write of the fenced writer').toBe('FENCED');

        // B is untouched by A's late put: it keeps writing and flushing.
        bKeys.push(...(await writeMany(b, 'b', 20, 60)));
        await b.whenIdle();
        await b.close();
        await a.close().catch(() => undefined);
        await expectState(store, ['k1', ...bKeys], ['k2', 'k3', 'k4']);
      });
    });

    /**
     * A's held put is let go while B is inside its open (before it bumps the epoch, or before it
     * fences the WAL). Whether k2 lands first (then B takes it over) or is fenced is the
     * protocol's choice; what it may never be is acknowledged and then missing.
     */
    it.each(['open:bump-epoch', 'open:fence-wal'])('a held WAL put let go while the newer writer is at %s is either taken over or FENCED', async (point) => {
      await withStore(async ({ store, another }) => {
        const faultsA = new FaultControl();
        const a = await KvDb.open(store, { ...SMALL, faults: faultsA.hook });
        await a.write([put('k1', valueOf('k1'))]);
        const held = faultsA.holdNext('wal:put');
        const k2 = outcome(a.write([put('k2', valueOf('k2'))]));
        await within(held.reached, 5000, "A's WAL put of k2 reaching wal:put");

        let raced = false;
        const faultsB: FaultHook = async (at) => {
          if (at !== point || raced) return;
          raced = true;
          held.release();
          // Give A's put the chance to land inside B's open; bounded, in case it waits for B.
          await Promise.race([k2, sleep(2000)]);
        };
        const b = await within(KvDb.open(another(), { ...SMALL, faults: faultsB }), 10_000, `B opening (A released at ${point})`);
        expect(raced, `B passed ${point}`).toBe(true);
        const k2Outcome = await within(k2, 10_000, 'k2 settling');
        expect(['acknowledged', 'FENCED'], 'k2 is acknowledged (and taken over) or FENCED').toContain(codeOf(k2Outcome));
        if (k2Outcome.ok) expect(await textOf(b, 'k2'), 'the newer writer took the acknowledged k2 over').toBe(valueOf('k2'));
        else expect(await textOf(b, 'k2')).toBeUndefined();
        expect(explain(await outcome(a.write([put('k3', valueOf('k3'))]))), 'a write after the newer writer opened').toBe('FENCED');

        const bKeys = await writeMany(b, 'b', 60);
        await b.whenIdle();
        expect(explain(await outcome(a.write([put('k4', valueOf('k4'))])))).toBe('FENCED');
        await b.close();
        await a.close().catch(() => undefined);
        await expectState(store, ['k1', ...bKeys, ...(k2Outcome.ok ? ['k2'] : [])], ['k3', 'k4', ...(k2Outcome.ok ? [] : ['k2'])]);
      });
    });
  });

  describe(`kv fencing over ${name}: an older writer held mid-flush while a newer writer takes over`, () => {
    /**
     * A is held at a flush or compaction step when B opens. Once let go, A's step must fail
     * (FENCED) without harming B: A must not publish, must not take a table id B uses, must not
     * delete anything B needs. Guards, among others: A's table put at `flush:sst-put` taking the
     * id B allocated for its own next table (B's create-only put then fails and B dies), or A
     * failing with a non-FENCED error.
     */
    const cases = (['flush:sst-put', 'flush:manifest-put', 'compact:manifest-put'] as const).flatMap((point) =>
      (['before', 'after'] as const).map((release) => [point, release] as const),
    );
    it.each(cases)('held at %s, released %s the newer writer flushes: the older writer is FENCED and the newer one stays intact', async (point, release) => {
      await withStore(async ({ store, another }) => {
        const faultsA = new FaultControl();
        const a = await KvDb.open(store, { ...SMALL, faults: faultsA.hook });
        const held = faultsA.holdNext(point);
        const aAcked: string[] = [];
        for (let i = 0; i < 400 && !held.isReached; i++) {
          const key = `a${String(i).padStart(3, '0')}`;
          // A write can wait behind the held step (a full memtable waits for the flush): once the
          // step is held, stop; that write's outcome is left open (either is fine: it is not checked).
          const o = await within(Promise.race([outcome(a.write([put(key, valueOf(key))])), held.reached.then(() => 'held' as const)]), 10_000, `A writing ${key}`);
          if (o === 'held') break;
          expect(codeOf(o), `A's write ${key} before any newer writer`).toBe('acknowledged');
          aAcked.push(key);
        }
        await within(held.reached, 5000, `A reaching ${point}`);

        const b = await within(KvDb.open(another(), SMALL), 10_000, `B opening while A is held at ${point}`);
        const settleA = async (): Promise<void> => {
          held.release();
          // A's background step fails; whenIdle may reject (A is poisoned) but must not hang.
          await within(a.whenIdle().catch(() => undefined), 10_000, "A's held step finishing");
        };
        if (release === 'before') await settleA();
        const bKeys = await writeMany(b, 'b', 60);
        await b.whenIdle();
        if (release === 'after') await settleA();

        expect(explain(await outcome(a.write([put('late1', valueOf('late1'))]))), "the fenced writer's next write").toBe('FENCED');
        expect(explain(await outcome(a.write([put('late2', valueOf('late2'))]))), "and every later write").toBe('FENCED');
        expect(explain(await outcome(a.flush())), "and its flush").toBe('FENCED');

        // B was not harmed: it keeps writing, flushing and compacting, and reads everything.
        bKeys.push(...(await writeMany(b, 'b', 40, 60)));
        await b.whenIdle();
        for (const key of [...aAcked, ...bKeys]) expect(await textOf(b, key), `B reads ${key}`).toBe(valueOf(key));
        await b.close();
        await a.close().catch(() => undefined);
        await expectState(store, [...aAcked, ...bKeys], ['late1', 'late2']);
        // And a second round (after the first reopen's whenIdle and GC) still has everything.
        await expectState(store, [...aAcked, ...bKeys], ['late1', 'late2']);
      });
    });
  });

  describe(`kv fencing over ${name}: two newer writers racing to open while the old one is alive`, () => {
    type Race = 'same-tick' | 'b-held-at-fence-until-c-fences' | 'b-held-at-bump-until-c-opened' | 'b-held-at-fence-until-c-opened';
    const races: Race[] = ['same-tick', 'b-held-at-fence-until-c-fences', 'b-held-at-bump-until-c-opened', 'b-held-at-fence-until-c-opened'];

    /**
     * B and C open at once while A is committing. Neither open may fail because of another
     * writer, except with FENCED when overtaken during its own open; once both opens settled
     * exactly one of them is the writer: it acknowledges writes and keeps flushing, the other's
     * every write is FENCED (an acknowledged write of the loser would be lost, as the winner has
     * finished its open without it). `b-held-at-fence-until-c-opened` guards B, overtaken after
     * its epoch bump, finishing its open by fencing WAL ids past C's: then C's writes are FENCED
     * while B's manifest swaps fail too, and nobody can write.
     */
    it.each(races)('the last opener wins, none fails with anything but FENCED (%s)', async (race) => {
      await withStore(async ({ store, another }) => {
        const a = await KvDb.open(store, SMALL);
        const aAcked = await writeMany(a, 'a', 5);
        // A keeps committing in the background while B and C open, until it is refused.
        const aLate: { key: string; outcome: Outcome }[] = [];
        const deadline = Date.now() + 20_000;
        const aLoop = (async () => {
          for (let i = 5; Date.now() < deadline; i++) {
            const key = `a${String(i).padStart(3, '0')}`;
            const o = await outcome(a.write([put(key, valueOf(key))]));
            aLate.push({ key, outcome: o });
            if (!o.ok) break;
            await sleep(1); // real time is the subject: A keeps committing at a steady pace while B and C open
          }
        })();

        const faultsB = new FaultControl();
        const faultsC = new FaultControl();
        const bHold =
          race === 'b-held-at-bump-until-c-opened' ? faultsB.holdNext('open:bump-epoch') : race === 'same-tick' ? undefined : faultsB.holdNext('open:fence-wal');
        const cHold = race === 'b-held-at-fence-until-c-fences' ? faultsC.holdNext('open:fence-wal') : undefined;

        const bOpen = KvDb.open(another(), { ...SMALL, faults: faultsB.hook });
        const bOpenSettled = outcome(bOpen);
        if (bHold) await within(bHold.reached, 5000, `B reaching ${bHold.point}`);
        const cOpen = KvDb.open(another(), { ...SMALL, faults: faultsC.hook });
        const cOpenSettled = outcome(cOpen);
        if (cHold) {
          await within(cHold.reached, 5000, 'C reaching open:fence-wal');
          bHold!.release();
          cHold.release();
        } else if (bHold) {
          await within(cOpenSettled, 10_000, `C opening while B is held at ${bHold.point}`);
          bHold.release();
        }
        const opens = await within(Promise.all([bOpenSettled, cOpenSettled]), 15_000, 'both opens settling');
        for (const [who, o] of [['B', opens[0]], ['C', opens[1]]] as const) {
          expect(['acknowledged', 'FENCED'], `${who}'s open succeeds or says FENCED, got ${explain(o)}`).toContain(codeOf(o));
        }
        const dbs: { who: string; db: KvDb }[] = [];
        if (opens[0].ok) dbs.push({ who: 'B', db: await bOpen });
        if (opens[1].ok) dbs.push({ who: 'C', db: await cOpen });
        expect(dbs.length, 'at least one of the racing openers opened').toBeGreaterThan(0);

        await within(aLoop, 20_000, "A's loop ending");
        const aLast = aLate[aLate.length - 1];
        expect(aLast && explain(aLast.outcome), "A's writes end FENCED once it is overtaken").toBe('FENCED');
        expect(explain(await outcome(a.write([put('a-after', 'x')]))), "A's next write").toBe('FENCED');

        // Both write at once, interleaved; then each flushes.
        const results = await Promise.all(
          dbs.map(async ({ who, db }) => {
            const got: { key: string; outcome: Outcome }[] = [];
            for (let i = 0; i < 40; i++) {
              const key = `${who.toLowerCase()}${String(i).padStart(3, '0')}`;
              const o = await outcome(db.write([put(key, valueOf(key))]));
              got.push({ key, outcome: o });
              if (!o.ok) break;
              await Promise.resolve();
            }
            const idle = got.every((g) => g.outcome.ok) ? await outcome(db.whenIdle()) : undefined;
            return { who, db, got, idle };
          }),
        );
        const winners = results.filter((r) => r.got.length === 40 && r.got.every((g) => g.outcome.ok) && r.idle?.ok === true);
        expect(
          winners.map((w) => w.who),
          `exactly one writer remains, and keeps writing and flushing (${results.map((r) => `${r.who}: ${r.got.map((g) => explain(g.outcome)).join(',')} idle=${r.idle && explain(r.idle)}`).join('; ')}; opens: ${opens.map(explain).join(', ')})`,
        ).toHaveLength(1);
        for (const loser of results.filter((r) => r !== winners[0])) {
          expect(
            loser.got.map((g) => codeOf(g.outcome)),
            `${loser.who}, overtaken, acknowledges nothing after both opens settled`,
          ).toEqual(['FENCED']);
          expect(explain(await outcome(loser.db.write([put(`${loser.who}-again`, 'x')])))).toBe('FENCED');
        }
        const acked = [...aAcked, ...aLate.filter((w) => w.outcome.ok).map((w) => w.key), ...results.flatMap((r) => r.got.filter((g) => g.outcome.ok).map((g) => g.key))];
        const fenced = [...aLate, ...results.flatMap((r) => r.got)].filter((w) => !w.outcome.ok && w.outcome.code === 'FENCED').map((w) => w.key);
        for (const { db } of dbs) await db.close().catch(() => undefined);
        await a.close().catch(() => undefined);
        await expectState(store, acked, fenced);
      });
    });
  });

  describe(`kv fencing over ${name}: an open writes nothing before it proved the store readable`, () => {
    async function deleteManifests(store: ObjectStore): Promise<number> {
      const keys: string[] = [];
      for await (const info of store.list(`${PATH}/manifest`)) keys.push(info.key);
      for (const key of keys) await store.delete(key);
      return keys.length;
    }

    /**
     * Guards the open that, finding no manifest, creates an empty one over the WAL and tables a
     * previous writer left: it would either forget them (silent data loss) or fail half-way
     * after writing. Either way the store changed before anyone could look at it.
     */
    it.each([
      ['tables remain (after flushes)', true],
      ['only WAL objects remain (nothing was flushed)', false],
    ] as const)('with the manifest deleted while %s, open rejects with CORRUPT_DATA and changes nothing', async (_, flushed) => {
      await withStore(async ({ store }) => {
        const db = await KvDb.open(store, SMALL);
        if (flushed) {
          await writeMany(db, 'f', 60);
          await db.whenIdle();
        }
        await writeMany(db, 'w', 3, 100);
        await db.close();
        expect(await deleteManifests(store), 'manifest objects deleted').toBeGreaterThan(0);
        const before = await listAll(store);
        if (flushed) expect(before.some((o) => o.startsWith(`${PATH}/sst/`)), 'tables remain').toBe(true);
        else expect(before.some((o) => o.startsWith(`${PATH}/wal/`)), 'WAL objects remain').toBe(true);

        const opening = KvDb.open(store, SMALL);
        const opened = await within(outcome(opening), 10_000, 'open over a store without its manifest');
        const after = await listAll(store);
        if (opened.ok) await (await opening).close().catch(() => undefined);
        expect(codeOf(opened), 'open without a manifest but with data').toBe('CORRUPT_DATA');
        expect(after, 'the failed open wrote or deleted nothing').toEqual(before);
        // Nor does a second attempt.
        expect(codeOf(await outcome(KvDb.open(store, SMALL)))).toBe('CORRUPT_DATA');
        expect(await listAll(store)).toEqual(before);
      });
    });

    it('an empty store still opens (and a second writer then takes over)', async () => {
      await withStore(async ({ store, another }) => {
        const a = await KvDb.open(store, SMALL);
        await a.write([put('x', valueOf('x'))]);
        const b = await KvDb.open(another(), SMALL);
        expect(await textOf(b, 'x')).toBe(valueOf('x'));
        expect(explain(await outcome(a.write([put('y', valueOf('y'))])))).toBe('FENCED');
        await b.close();
        await a.close().catch(() => undefined);
        await expectState(store, ['x'], ['y']);
      });
    });
  });
}
