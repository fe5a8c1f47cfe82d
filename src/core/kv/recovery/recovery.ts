/**
 * Recovery at open (docs/rfcs/0001-kv-engine.md, "Open as writer", steps 4-6; the log steps of
 * docs/rfcs/0002-wal-append-log.md around them). After claimEpoch (fencing/claim-writer.ts,
 * steps 1-3) KvDb runs one Recovery:
 *
 *  - on a store with append logs, our first segment is created before anything can be
 *    acknowledged;
 *  - RFC 0002 open steps 1-2: every older epoch's log is sealed and its end read, or measured and
 *    recorded (sealOlderLogs);
 *  - 4. WAL objects from `walStart` are replayed, noting each epoch's first object (a fence);
 *  - 5. the WAL is fenced (fenceWal) and the ids an older writer stored first are replayed
 *    (replayTaken); the older epochs' logs are replayed in epoch order between them
 *    (replayLogsBefore);
 *  - a last check that no newer writer overtook the open.
 *
 * It leaves the replayed commits in the memtable (or flushed, when too many memtables filled up)
 * and returns where the live WAL starts; KvDb then does the rest of step 6 (starts the WAL writer
 * after the fence, and flushes, compaction and garbage collection in the background).
 */
import { EMPTY_BYTES } from '../../bytes.js';
import { readInOrder } from '../../read-ahead.js';
import { CorruptDataError, FencedError, InvalidConfigError } from '../../errors.js';
import { appendLogsOf, type AppendLogStore } from '../../objects/append-log.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { fenceWal, type TakenId } from '../fencing/claim-writer.js';
import { maxPosition, type MemtableFlusher, type WalMark } from '../flush/memtable-flusher.js';
import { walObjectKey } from '../format.js';
import type { WalKind } from '../kv-options.js';
import { logFlagKey, logSealKey, type LogEnd, type LogPosition } from '../wal/log-format.js';
import { checkSegmentsPresent, decideLogEnd, listLogEndEpochs, listLogSegments, measureLog, readEpochBatches, readLogEnd } from '../wal/log-replay.js';
import { LogWalSink } from '../wal/log-sink.js';
import type { WalCommit, WalObject } from '../wal/wal-format.js';
import { checkNoDeletedWal, denseLength, listWalIds, readWal, WAL_READ_AHEAD } from '../wal/wal-replay.js';
import type { WriterState } from '../writer-state.js';

/** An older epoch's log to replay at open: its segments and its recorded end. */
interface LogToReplay {
  readonly epoch: number;
  readonly segments: readonly number[];
  readonly end: LogEnd;
}

/** What the live writer needs from recovery. */
export interface Recovered {
  /** The first WAL object id past our fence windows, where an object WAL goes on. */
  readonly nextWalId: number;
  /** Maps what the WAL writer's cut resolves with (a WAL id or a segment) to a mark. */
  readonly liveMark: (id: number) => WalMark;
}

export class Recovery {
  /** The log sink when the WAL goes to an append log: created here, its first segment by `run`. */
  readonly logSink: LogWalSink | undefined;
  /** Older epochs' logs not replayed yet, ascending. */
  private logsToReplay: LogToReplay[] = [];
  /** Whether open found any log segment (then even an object-WAL writer retires them). */
  private sawLogs = false;
  /** How far replay has got; the live writer's marks come after it. */
  private replayed: WalMark;

  constructor(
    private readonly state: WriterState,
    private readonly flusher: MemtableFlusher,
    logs: AppendLogStore | undefined,
  ) {
    this.replayed = { walId: state.manifest.data.walStart - 1, log: undefined };
    this.logSink = logs ? new LogWalSink(state.store, logs, state.options.path, state.epoch, state.options.faults) : undefined;
  }

  /**
   * Steps 4-6 of the open protocol, with the log steps of RFC 0002 around them: our first
   * segment exists before anything is acknowledged, older epochs' logs are sealed and their ends
   * decided before replay, and replay goes in epoch order across WAL objects and logs.
   */
  async run(): Promise<Recovered> {
    const { state } = this;
    const { store, options, manifests } = state;
    const { path } = options;
    if (this.logSink) {
      await this.logSink.start();
      // A newer writer that listed the logs before our first segment existed did not seal us,
      // nor raised our seal flag if it sealed before the flag existed: it has claimed a newer
      // manifest, which this listing sees (the newest is never deleted).
      if (await manifests.hasNewer(state.manifest.id)) {
        throw new FencedError(`a newer writer opened while this one was opening. epoch=${state.epoch}`, { epoch: state.epoch });
      }
    }
    await this.sealOlderLogs();
    const walStart = state.manifest.data.walStart;
    const ids = await listWalIds(store, path, walStart);
    const dense = denseLength(ids, walStart);
    await checkNoDeletedWal(store, path, ids, walStart);
    await readInOrder(ids.slice(0, dense), WAL_READ_AHEAD, (id) => readWal(store, path, id), (id, wal) => this.applyWal(id, wal, false));
    const fence = await fenceWal(store, path, state.epoch, walStart + dense, (taken) => this.replayTaken(taken), options.faults);
    state.fences.note(state.epoch, fence.firstOwned);
    // Objects listed past our windows can only be stray fences (see the WAL writer's put).
    await this.replayTaken(ids.slice(dense).filter((id) => id >= fence.nextId).map((id) => ({ id, afterOwn: true })));
    await this.replayLogsBefore(state.epoch);
    // Step 3 checked for a newer manifest before replay; an open slow enough can meanwhile be
    // overtaken by a writer that flushed and retired the very ids our fence then landed on
    // (create-only succeeds on a deleted id), so that fence proves nothing. A newer writer
    // publishes before it retires anything: none now means our fence stands.
    if (await manifests.hasNewer(state.manifest.id)) {
      throw new FencedError(`a newer writer opened while this one was opening. epoch=${state.epoch}`, { epoch: state.epoch });
    }
    const objectsEnd = fence.nextId - 1;
    // Object WAL on a path with logs: the first flush retires the replayed (and garbage) segments.
    const logsSeen = this.sawLogs;
    const liveMark = this.logSink
      ? (segment: number): WalMark => ({ walId: objectsEnd, log: [state.epoch, segment] })
      : (id: number): WalMark => ({ walId: id, log: logsSeen ? [state.epoch, 0] : undefined });
    return { nextWalId: fence.nextId, liveMark };
  }

  /**
   * RFC 0002, open steps 1-2: every older epoch with a log segment is sealed (its writer then
   * acknowledges nothing past the recorded end), and its end is read, or measured and recorded.
   * A log of a newer epoch means a newer writer: FENCED.
   */
  private async sealOlderLogs(): Promise<void> {
    const { store, options } = this.state;
    const { path } = options;
    const ownEpoch = this.state.epoch;
    const found = await listLogSegments(store, path);
    this.sawLogs = found.size > 0;
    for (const epoch of found.keys()) {
      if (epoch > ownEpoch) throw new FencedError(`a newer writer opened while this one was opening. epoch=${ownEpoch} log_epoch=${epoch}`, { epoch: ownEpoch });
      if (epoch === ownEpoch) continue;
      await options.faults?.('open:seal-log', { epoch });
      await createObject(store, logSealKey(path, epoch), EMPTY_BYTES);
      // A writer that watches its flag learns of the seal from it: raised before its log is read,
      // so an append it acknowledges is one this reading sees.
      await appendLogsOf(store)?.flags?.raise(logFlagKey(path, epoch));
      // Listed again after the seal: a segment the old writer created before it is seen now.
      let segments = (await listLogSegments(store, path)).get(epoch) ?? [];
      const end = (await readLogEnd(store, path, epoch)) ?? (await decideLogEnd(store, path, await measureLog(store, path, epoch, segments)));
      // The old writer may have recorded an end in a segment created after our listing.
      if (end.segment > (segments.at(-1) ?? 0)) segments = (await listLogSegments(store, path)).get(epoch) ?? [];
      checkSegmentsPresent(path, epoch, segments, this.state.manifest.data.logStart, end);
      this.logsToReplay.push({ epoch, segments, end });
    }
    // An older epoch with a recorded end but no segment left: fine only when its end is in tables.
    const logStart = this.state.manifest.data.logStart;
    for (const epoch of await listLogEndEpochs(store, path, logStart?.[0] ?? 0)) {
      if (epoch >= ownEpoch || found.has(epoch)) continue;
      const end = await readLogEnd(store, path, epoch);
      if (end) checkSegmentsPresent(path, epoch, [], logStart, end);
    }
  }

  /** Replays the older epochs' logs below `epoch`, in epoch order (see run). */
  private async replayLogsBefore(epoch: number): Promise<void> {
    const { store, options } = this.state;
    const from = this.state.manifest.data.logStart;
    while (this.logsToReplay.length > 0 && this.logsToReplay[0].epoch < epoch) {
      const log = this.logsToReplay.shift()!;
      for await (const { position, commits } of readEpochBatches(store, options.path, log.epoch, log.segments, from, log.end)) {
        // The mark says which segments a frozen memtable holds whole (a flush retires them): while
        // segment n is being applied, only those before it. Marking n itself would let a freeze
        // partway through n retire it while its later batches live only in the newer memtable.
        const before: LogPosition = [position[0], position[1] - 1];
        this.replayed = { ...this.replayed, log: maxPosition(this.replayed.log, before) };
        await this.applyCommits(commits);
      }
      if (log.end.segment > 0) this.replayed = { ...this.replayed, log: maxPosition(this.replayed.log, [log.epoch, log.end.segment]) };
    }
  }

  /** WAL objects other writers stored inside our fence windows: read at once, applied in order. */
  private async replayTaken(taken: readonly TakenId[]): Promise<void> {
    const wals = await Promise.all(taken.map(({ id }) => readWal(this.state.store, this.state.options.path, id)));
    for (let i = 0; i < taken.length; i++) await this.applyWal(taken[i].id, wals[i], taken[i].afterOwn);
  }

  /**
   * Applies one WAL object found at open. `afterGap`: the id before it was found empty, so it may
   * hold no commits (they would follow a lost object).
   */
  private async applyWal(id: number, wal: WalObject | undefined, afterGap: boolean): Promise<void> {
    if (!wal) return;
    const epoch = this.state.epoch;
    if (wal.epoch > epoch) {
      throw new FencedError(`a newer writer opened while this one was opening. epoch=${epoch} wal_epoch=${wal.epoch}`, { epoch, walId: id });
    }
    if (afterGap && wal.commits.length > 0) {
      const object = walObjectKey(this.state.options.path, id - 1);
      throw new CorruptDataError(`wal object missing before one that holds commits. object=${object}`, { object, problem: 'wal_gap' });
    }
    await this.replayLogsBefore(wal.epoch);
    this.state.fences.note(wal.epoch, id);
    this.replayed = { ...this.replayed, walId: id };
    await this.applyCommits(wal.commits);
  }

  /** Applies replayed commits (those not in tables yet) and freezes a full memtable at the replay mark. */
  private async applyCommits(commits: readonly WalCommit[]): Promise<void> {
    const { state } = this;
    for (const commit of commits) {
      if (commit.seq <= state.manifest.data.lastSeq) continue;
      for (const e of commit.entries) state.tree.memtable.add(e, commit.seq);
      state.lastSeq = Math.max(state.lastSeq, commit.seq);
    }
    if (state.tree.memtable.bytes >= state.options.memtableBytes) {
      this.flusher.freeze(Promise.resolve(this.replayed));
      // Leave frozen memtables to the background flusher unless too many pile up, which keeps
      // open fast and memory bounded on a long replay.
      if (this.flusher.full) await this.flusher.flushOldest();
    }
  }
}

/** The store's append logs when the engine should use them (option `wal`). */
export function chooseLogs(store: ObjectStore, kind: WalKind): AppendLogStore | undefined {
  if (kind === 'objects') return undefined;
  const logs = appendLogsOf(store);
  if (!logs && kind === 'log') {
    throw new InvalidConfigError("wal 'log' needs a store with append logs (the filesystem store); this one has none. option=wal", { option: 'wal' });
  }
  return logs;
}
