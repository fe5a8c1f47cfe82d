/**
 * The compaction loop: while the manifest has more runs than `maxRuns`, merge the runs
 * compaction.ts picks into one and publish it in their place. It runs in the background,
 * independent of memtable flushes (flush/memtable-flusher.ts), and stops when the engine closes
 * or fails; the replaced tables are deleted once no read can still see them (gc/).
 */
import { invariant } from '../../errors.js';
import type { WriterState } from '../writer-state.js';
import { writeSortedRun } from '../tables/table-writer.js';
import { mergeRuns, pickCompaction } from './compaction.js';

/**
 * Share of the block cache a compaction's output may fill with its own blocks (it replaces tables
 * whose cached blocks are then dropped; it can be far larger than the cache, so only its first
 * part is warmed).
 */
const COMPACTION_WARM_FRACTION = 0.25;

export class Compactor {
  private compacting: Promise<void> | undefined;

  constructor(
    private readonly state: WriterState,
    private readonly poison: (error: unknown) => void,
  ) {}

  /** The compaction loop while it runs. */
  get running(): Promise<void> | undefined {
    return this.compacting;
  }

  /** Starts the loop unless it runs, the engine is closing or it failed. */
  start(): void {
    if (this.compacting || this.state.closing || this.state.failure !== undefined) return;
    this.compacting = this.runCompactions();
  }

  /** Starts the loop when a compaction is due. */
  startIfDue(): void {
    if (pickCompaction(this.state.manifest.data.runs, this.state.options.maxRuns)) this.start();
  }

  private async runCompactions(): Promise<void> {
    await Promise.resolve(); // as in MemtableFlusher.runFlushes
    try {
      while (await this.compactOnce());
    } catch (e) {
      if (!this.state.closing) this.poison(e);
    } finally {
      this.compacting = undefined;
    }
  }

  /** One compaction step if one is due; false when there was nothing to do (or closing). */
  private async compactOnce(): Promise<boolean> {
    const { state } = this;
    const { options, tree } = state;
    if (state.closing || state.failure !== undefined) return false;
    state.gc.deleteUnreadTables();
    const runs = state.manifest.data.runs;
    const pick = pickCompaction(runs, options.maxRuns);
    if (!pick) return false;
    const inputs = runs.slice(0, pick.end);
    const atBottom = pick.end === runs.length;
    const readers = tree.tables.runs.slice(0, pick.end);
    const output = await writeSortedRun(
      state.store,
      options.path,
      mergeRuns(readers, options.mergeOperator, atBottom, () => state.closing),
      {
        blockBytes: options.blockBytes,
        targetBytes: options.targetSstBytes,
        allocateId: () => state.nameTable(),
        warmBytes: tree.warmBytes(COMPACTION_WARM_FRACTION),
        stored: (table) => tree.tableStored(table),
      },
    );
    if (state.closing) return false;
    await options.faults?.('compact:manifest-put', { inputs: inputs.length });
    await state.publish((m) => {
      // Flushes may have added newer runs meanwhile; the inputs are still contiguous.
      const at = m.runs.indexOf(inputs[0]);
      invariant(at >= 0, 'compaction:inputs-still-published');
      const runs = [...m.runs.slice(0, at), ...(output.length > 0 ? [output] : []), ...m.runs.slice(at + inputs.length)];
      return { ...m, runs };
    }, inputs.flat());
    return true;
  }
}
