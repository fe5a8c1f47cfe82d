/**
 * A KV writer: KvDb.open on the shared path with options varied per open, then blind commits
 * (durable or not), transactions that hold their snapshot across other commits, flush, whenIdle,
 * reads that must show the writer's own answered writes, and a clean close. Outcomes go to the
 * history (history.ts) as they settle.
 */
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { KvDb, type KvDbOptions, type Transaction, type WriteOp } from '../../src/core/kv/index.js';
import { Actor, EXPECTED } from './actor.js';
import type { SimContext } from './context.js';
import { PATH } from './context.js';
import type { CommitRecord, WriterRecord } from './history.js';
import { codeOf, coverUpTo, describeCommit, rejected } from './history.js';
import type { Prng } from './prng.js';
import type { ProcessClock } from './virtual-time.js';

interface OpenTxn {
  readonly txn: Transaction;
  readonly label: string;
}

export class WriterActor extends Actor {
  db: KvDb | undefined;
  readonly record: WriterRecord;
  readonly txns: OpenTxn[] = [];
  readonly options: KvDbOptions;

  constructor(ctx: SimContext, index: number, r: Prng) {
    super(ctx, `W${index}`);
    this.record = { index, name: this.name, commits: [] };
    ctx.writers.push(this.record);
    this.options = writerOptions(r, ctx.config.appendLogs, this.clock);
  }

  describeOptions(): string {
    const o = this.options;
    return `wal=${o.wal} memtable=${o.memtableBytes} flushMax=${o.flushMaxBytes ?? 'default'} frozen=${o.maxFrozenMemtables} block=${o.blockBytes} runs=${o.maxRuns} sst=${o.targetSstBytes ?? 'default'} cache=${o.blockCacheBytes ?? 'default'} interval=${o.flushIntervalMs}`;
  }

  open(): void {
    this.track('open', KvDb.open(this.store, this.options), EXPECTED.open, (result) => {
      if (result.ok) {
        this.db = result.value;
        this.record.epoch = result.value.epoch;
        this.state = 'open';
        this.ctx.trace(`${this.name} opened: epoch ${result.value.epoch}`);
      } else {
        this.state = 'open-failed';
        this.ctx.trace(`${this.name} open failed: ${codeOf(result.error)}`);
      }
    });
  }

  /** Starts a blind commit (db.write) of 1-3 puts or deletes. */
  commit(r: Prng): string {
    const id = this.ctx.nextCommitId();
    return this.startCommit(id, randomOps(r, this.ctx, id), r.chance(0.7), (writes, durable) => this.db!.write(writes, { durable }), 'write');
  }

  /** Begins a transaction that reads 1-2 keys and stays open (a held snapshot) until txnCommit. */
  txnBegin(r: Prng): string {
    const txn = this.db!.begin();
    const keys = Array.from({ length: r.int(1, 2) }, () => keyName(r.int(0, this.ctx.config.keys - 1)));
    const label = `txn@${this.ctx.step}`;
    for (const key of keys) this.track(`${label} get ${key}`, txn.get(utf8(key)), EXPECTED.call, () => undefined);
    this.txns.push({ txn, label });
    return `${this.name} begins ${label}, reads ${keys.join(', ')}`;
  }

  txnCommit(r: Prng): string {
    const { txn, label } = this.txns.splice(r.int(0, this.txns.length - 1), 1)[0]!;
    if (r.chance(0.2)) {
      txn.rollback();
      return `${this.name} rolls back ${label}`;
    }
    const id = this.ctx.nextCommitId();
    return this.startCommit(id, randomOps(r, this.ctx, id), r.chance(0.7), (writes, durable) => {
      for (const w of writes) {
        if (w.type === 'put') txn.put(w.key, w.value);
        else txn.delete(w.key);
      }
      return txn.commit({ durable });
    }, `commit of ${label}`);
  }

  private startCommit(id: number, ops: Map<string, string | null>, durable: boolean, run: (writes: WriteOp[], durable: boolean) => Promise<void>, what: string): string {
    const commit: CommitRecord = { id, writer: this.record.index, ops, durable, step: this.ctx.step, outcome: { kind: 'pending' }, covered: false };
    this.record.commits.push(commit);
    const writes: WriteOp[] = [...ops].map(([k, v]) => (v === null ? { type: 'delete', key: utf8(k) } : { type: 'put', key: utf8(k), value: utf8(v) }));
    let promise: Promise<void>;
    try {
      promise = run(writes, durable);
    } catch (e) {
      promise = Promise.reject(e);
    }
    this.track(`${what} c${commit.id}`, promise, EXPECTED.commit, (result) => {
      if (result.ok) {
        commit.outcome = { kind: 'ok' };
        if (durable) coverUpTo(this.record, this.record.commits.indexOf(commit));
      } else {
        commit.outcome = rejected(result.error);
      }
    });
    return `${this.name} ${what}: ${describeCommit(commit, this.name)}`;
  }

  /** flush / close: on success every commit answered before the call is durable. */
  private coverOnSuccess(label: string, promise: Promise<void>): void {
    const answered = lastIndex(this.record.commits, (c) => c.outcome.kind === 'ok');
    this.track(label, promise, EXPECTED.call, (result) => {
      if (result.ok) coverUpTo(this.record, answered + 1);
      if (label === 'close') this.state = 'closed';
    });
  }

  flush(): string {
    this.coverOnSuccess('flush', this.db!.flush());
    return `${this.name} flush`;
  }

  whenIdle(): string {
    this.track('whenIdle', this.db!.whenIdle(), EXPECTED.call, () => undefined);
    return `${this.name} whenIdle`;
  }

  /** Reads a key: it must show this writer's latest answered write to it (or a newer own one). */
  get(r: Prng): string {
    const key = keyName(r.int(0, this.ctx.config.keys - 1));
    const mine = this.record.commits.filter((c) => c.ops.has(key));
    const answered = lastIndex(mine, (c) => c.outcome.kind === 'ok');
    const allowed = answered < 0 ? undefined : mine.slice(answered).map((c) => c.ops.get(key) ?? undefined);
    this.track(`get ${key}`, this.db!.get(utf8(key)), EXPECTED.call, (result) => {
      if (!result.ok || !allowed) return;
      const value = result.value === undefined ? undefined : fromUtf8(result.value);
      if (!allowed.includes(value)) {
        this.ctx.fail('read-your-writes', `${this.name} get ${key} returned ${value ?? '(nothing)'}; its own answered writes allow only ${allowed.map((v) => v ?? '(deleted)').join(' | ')}`);
      }
    });
    return `${this.name} get ${key}`;
  }

  close(): string {
    this.state = 'closing';
    for (const { txn } of this.txns.splice(0)) txn.rollback();
    // A close that starts after a failure skips the final flush: it proves nothing then.
    if (this.db!.failed === undefined) this.coverOnSuccess('close', this.db!.close());
    else this.track('close', this.db!.close(), EXPECTED.call, () => (this.state = 'closed'));
    return `${this.name} close${this.db!.failed === undefined ? '' : ' (engine failed before)'}`;
  }

  override crash(r: Prng): void {
    super.crash(r);
    this.txns.length = 0;
  }
}

export function keyName(n: number): string {
  return `k${String(n).padStart(3, '0')}`;
}

/**
 * 1-3 puts or deletes over the shared key space, plus (usually) a key of the commit's own that
 * nothing overwrites, so a lost commit stays visible even when later ones rewrite its other keys.
 * A value carries its commit's id, so every value names its commit.
 */
function randomOps(r: Prng, ctx: SimContext, id: number): Map<string, string | null> {
  const ops = new Map<string, string | null>();
  const count = r.int(1, 3);
  for (let i = 0; i < count; i++) {
    const key = keyName(r.int(0, ctx.config.keys - 1));
    ops.set(key, r.chance(0.2) ? null : `c${id}.${'x'.repeat(r.int(0, ctx.config.maxPad))}`);
  }
  if (r.chance(0.8)) ops.set(`u${String(id).padStart(5, '0')}`, `c${id}.`);
  return ops;
}

function lastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

function writerOptions(r: Prng, appendLogs: boolean, clock: ProcessClock): KvDbOptions {
  return {
    path: PATH,
    clock,
    wal: appendLogs ? r.pick(['auto', 'log', 'objects'] as const) : r.pick(['auto', 'objects'] as const),
    memtableBytes: r.pick([1024, 1024, 2048, 4096, 16384, 65536]),
    flushMaxBytes: r.pick([1024, 4096, undefined]),
    maxFrozenMemtables: r.int(1, 3),
    blockBytes: r.pick([256, 512, 4096]),
    maxRuns: r.int(2, 6),
    targetSstBytes: r.pick([4096, 16384, undefined]),
    blockCacheBytes: r.pick([0, 8192, undefined]),
    flushIntervalMs: r.pick([0, 0, 0, 1, 4]),
  };
}
