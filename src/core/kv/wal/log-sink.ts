/**
 * The WAL writer's sink on a store with append logs (docs/rfcs/0002-wal-append-log.md, "Commit"):
 * each batch is one record appended to this epoch's open segment, durable when the append
 * resolves. Before a batch is acknowledged the sink checks that no newer writer sealed this
 * epoch; when one did, the recorded end decides: a batch inside it was taken over and is
 * acknowledged (and the writer is fenced from then on), one past it fails with FENCED and is
 * never replayed. On a store with seal flags the check reads this epoch's flag, which every
 * opener raises right after creating the seal (RFC 0002, "Seal flags"), instead of asking the
 * store whether the seal exists.
 */
import { EMPTY_BYTES } from '../../bytes.js';
import { FencedError } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { AppendLog, AppendLogStore, SealFlag } from '../../objects/append-log.js';
import type { ObjectStore } from '../../objects/object-store.js';
import type { FaultHook } from '../kv-options.js';
import { encodeBatchRecord, encodeSegmentHeader, logFlagKey, logSealKey, logSegmentKey } from './log-format.js';
import { covers, decideLogEnd, readLogEnd } from './log-replay.js';
import type { WalSink } from './wal-writer.js';

export class LogWalSink implements WalSink {
  private log: AppendLog | undefined;
  private segment = 0;
  /** Batches stored in the current segment. */
  private batches = 0;
  private readonly sealKey: string;
  /** This epoch's seal flag, when the store has flags and this context can hold one open. */
  private flag: SealFlag | undefined;

  constructor(
    private readonly objects: ObjectStore,
    private readonly logs: AppendLogStore,
    private readonly path: string,
    private readonly epoch: number,
    private readonly faults: FaultHook | undefined,
  ) {
    this.sealKey = logSealKey(path, epoch);
  }

  /**
   * Creates the first segment, then this epoch's seal flag when the store has flags. Open does
   * this before anything can be acknowledged, and then looks for a newer manifest: an opener that
   * sealed this epoch before its flag existed (and so raised nothing) had claimed its manifest
   * before that, and the look finds it. One sealing later finds the flag (never deleted).
   */
  async start(): Promise<void> {
    await this.create(1);
    this.flag = await this.logs.flags?.create(logFlagKey(this.path, this.epoch));
  }

  /** Whether a newer writer sealed this epoch, asked after a record became durable. */
  private sealed(): Promise<boolean> {
    return this.flag ? this.flag.raised() : this.logs.exists(this.sealKey);
  }

  async store(commits: readonly Uint8Array[]): Promise<{ id: number; fencedAfter?: unknown }> {
    await this.faults?.('wal:put', { id: this.segment });
    const log = this.log!;
    await log.append(encodeBatchRecord(commits));
    this.batches++;
    const recordEnd = log.size;
    if (!(await this.sealed())) return { id: this.segment };
    // Sealed by a newer writer: the recorded end decides; when none is recorded yet, propose
    // ours (every byte of the segment so far is a whole, durable record).
    const end = (await readLogEnd(this.objects, this.path, this.epoch)) ?? (await decideLogEnd(this.objects, this.path, { epoch: this.epoch, segment: this.segment, length: recordEnd }));
    const fenced = new FencedError(`a newer writer sealed this writer's log. epoch=${this.epoch} segment=${this.segment}`, { epoch: this.epoch, segment: this.segment });
    if (covers(end, this.segment, recordEnd)) return { id: this.segment, fencedAfter: fenced };
    throw fenced;
  }

  async roll(): Promise<void> {
    if (this.batches === 0) return;
    await this.log?.close();
    await this.create(this.segment + 1);
  }

  async close(): Promise<void> {
    await this.log?.close();
    await this.flag?.close();
  }

  /**
   * At a clean close: seals our own epoch and records where its log ends, so the next open
   * replays exactly that and reports a damaged record as CORRUPT_DATA instead of taking it for a
   * torn tail (and skips measuring). Best effort: without it the next open measures.
   */
  async recordOwnEnd(): Promise<void> {
    const log = this.log;
    if (!log) return;
    await createObject(this.objects, this.sealKey, EMPTY_BYTES);
    await decideLogEnd(this.objects, this.path, { epoch: this.epoch, segment: this.segment, length: log.size });
  }

  private async create(segment: number): Promise<void> {
    this.log = undefined;
    const log = await this.logs.createLog(logSegmentKey(this.path, this.epoch, segment));
    try {
      await log.append(encodeSegmentHeader(this.epoch, segment));
    } catch (e) {
      await log.close();
      throw e;
    }
    this.log = log;
    this.segment = segment;
    this.batches = 0;
  }
}
