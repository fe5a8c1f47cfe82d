/**
 * Writer liveness: a durable beat record `{counter, atMs, intervalMs, writerEpoch, closed}` under
 * the heartbeat key. The first beat is written during open, then one per interval, and a final
 * `closed` beat at clean close. The counter never repeats a value: a new writer continues from
 * the stored counter + 1, and a failed beat still consumes its value. A beat proves the owning
 * process is alive, not that its workers are.
 */
import { decodeRecord, encodeRecord } from '../../codec.js';
import { CorruptDataError } from '../../errors.js';
import type { KvDb } from '../../kv/kv-db.js';
import type { KvReadable } from '../../kv/types.js';
import { HEARTBEAT_KEY } from '../records/keys.js';
import type { QueueContext } from '../queue-context.js';
import { runTransaction } from '../storage/staged-txn.js';

export interface WriterHeartbeat {
  readonly counter: number;
  /** Queue-clock time of the beat. */
  readonly atMs: number;
  readonly intervalMs: number;
  /** Engine writer epoch of the beating process; below the store's current epoch ⇒ superseded. */
  readonly writerEpoch: number;
  /** The writer closed cleanly. */
  readonly closed: boolean;
}

export async function readHeartbeat(reader: KvReadable): Promise<WriterHeartbeat | undefined> {
  const raw = await reader.get(HEARTBEAT_KEY);
  if (raw === undefined) return undefined;
  const r = decodeRecord(raw) as Record<string, unknown>;
  if (typeof r !== 'object' || r === null || typeof r.counter !== 'number' || typeof r.atMs !== 'number') {
    throw new CorruptDataError('undecodable heartbeat record', { reason: 'heartbeat' });
  }
  return {
    counter: r.counter,
    atMs: r.atMs,
    intervalMs: typeof r.intervalMs === 'number' ? r.intervalMs : 0,
    writerEpoch: typeof r.writerEpoch === 'number' ? r.writerEpoch : 0,
    closed: r.closed === true,
  };
}

export class Heartbeat {
  private counter = 0;

  private constructor(
    private readonly ctx: QueueContext,
    private readonly db: KvDb,
    private readonly intervalMs: number,
  ) {}

  /** Reads the stored counter and writes the first beat durably (open fails if it cannot). */
  static async start(ctx: QueueContext, db: KvDb, intervalMs: number): Promise<Heartbeat> {
    const hb = new Heartbeat(ctx, db, intervalMs);
    hb.counter = (await readHeartbeat(db))?.counter ?? 0;
    await hb.beat(false);
    return hb;
  }

  /** Writes the next beat durably. Rejects with the engine's error (FENCED, CLOSED, …). */
  async beat(closed: boolean): Promise<void> {
    this.counter++;
    const record = { counter: this.counter, atMs: this.ctx.clock.now(), intervalMs: this.intervalMs, writerEpoch: this.db.epoch, closed };
    await runTransaction(this.db, async (s) => s.put(HEARTBEAT_KEY, encodeRecord(record)));
  }

  /** Beats every interval until `signal` aborts; failures are logged and the loop goes on. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.ctx.clock.sleep(this.intervalMs, signal);
      } catch {
        return;
      }
      try {
        await this.beat(false);
      } catch (e) {
        this.ctx.logger.warn('heartbeat write failed', e);
      }
    }
  }
}
