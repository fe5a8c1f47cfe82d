/**
 * Drives one batch in this process: submits its unfinished items (a bounded window of them at a
 * time), learns when each ends, appends every ending to the durable completion log in group
 * commits, applies the failure policy, and feeds progress listeners and result streams.
 *
 * Protocol, from whatever the store holds (a fresh batch, or one a killed process left behind):
 * 1. Load the item markers, the completion log and the stop record. Items with a marker but no
 *    log entry (they ended after the last log commit) are appended first.
 * 2. Stopped batch: every item without a marker is cancelled (below). Otherwise submit each item
 *    without a marker under run id hex(SHA-256(batch + "/" + key)); a run still queued by the
 *    killed process is recognised as a duplicate and simply awaited.
 * 3. An item ends when its marker commits (the item step stages it with its acknowledgement or
 *    dead-letter). The item steps of this process hand the driver the marker once it committed
 *    (an after-commit hook staged with it). A slower sweep over all submitted items catches ends
 *    the steps cannot report (a dead-letter by the lease reaper, a cancel, a settlement that
 *    did not commit, an item run by another process): run gone and no marker ⇒ the driver
 *    writes one (failed with the job's last error, or cancelled).
 * 4. Failure policy: once failures pass `maxFailures` or `maxFailureFraction` of the total, the
 *    stop record is written, no further item is submitted, queued items are cancelled and items
 *    never submitted get cancelled markers; running items finish. On resume the stop holds.
 * 5. When every item has a logged marker the batch is finished; the report sums costs in item
 *    order, so it is identical however the completions interleaved or how often it was resumed.
 * 6. Output sink (when given): every logged item is written to it once per driver, in log order
 *    (the items an earlier run finished first); a failed write stops driving like an
 *    infrastructure error. When driving ends, however it ends, the last write settles and the sink
 *    is flushed; a flush error is the batch run's error unless it already has one.
 * 7. Batch retention (when set): a finished batch records its end (batch-retention.ts), best-effort.
 */
import { decodeValue } from '../codec.js';
import type { Clock } from '../clock.js';
import { invariant, TaqubaError } from '../errors.js';
import type { LogSink } from '../logger.js';
import type { Queue } from '../queue/index.js';
import type { WorkflowRuntime } from '../workflow/runtime.js';
import { recordBatchEnd } from './batch-retention.js';
import { rollupCosts } from './cost.js';
import type { OutputRecord, OutputSink } from './output-sink.js';
import type { BatchProgress, BatchReport, ItemResult } from './progress.js';
import {
  decodeLogEntry,
  decodeMarker,
  decodeStop,
  encodeItemPayload,
  encodeLogEntry,
  encodeMarker,
  encodeStop,
  indexOfKey,
  itemRunId,
  logKey,
  logPrefix,
  markerKey,
  markerPrefix,
  stoppedKey,
  type BatchMeta,
  type ItemMarker,
  type StopRecord,
} from './records.js';

export interface DriverDeps {
  readonly queue: Queue;
  readonly runtime: WorkflowRuntime;
  readonly clock: Clock;
  readonly log: LogSink;
  /** Items submitted and not yet ended, at most. */
  readonly window: number;
  /** The sweep interval over submitted items. */
  readonly sweepMs: number;
  /** Where each item's outcome is written (step 6); none: no writes. */
  readonly sink: OutputSink | undefined;
  /** Batch retention (step 7); null: none. */
  readonly retentionMs: number | null;
}

const enum State {
  Waiting,
  Submitting,
  Queued,
  Running,
  Settling,
  Done,
}

const LOG_COMMIT_MAX = 512;
const SUBMIT_LANES = 16;
/** Queued items cancelled at once after a stop. */
const CANCEL_LANES = 256;

/** Resolves after `ms`, or at once when `signal` aborts. */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

interface PendingEnd {
  readonly index: number;
  readonly marker: ItemMarker;
  readonly write: boolean;
}

export class BatchDriver {
  private readonly state: Uint8Array;
  /** 1 for items this driver submitted (they hold a slot of the window until they end). */
  private readonly submitted: Uint8Array;
  private readonly markers: (ItemMarker | undefined)[];
  private readonly runIds: (string | undefined)[];
  private readonly jobIds: (string | undefined)[];
  /** Item index by log sequence number; `logged.length` entries are durable (a contiguous prefix). */
  private readonly logged: number[] = [];
  /** The next sequence number to hand out (entries between `logged.length` and this are being committed). */
  private nextSeq = 0;
  private pending: PendingEnd[] = [];
  private flushing: Promise<void> | undefined;
  private stop: StopRecord | undefined;
  private stopWritten = false;
  private readonly counts = { succeeded: 0, failed: 0, cancelled: 0, running: 0 };
  private readonly liveCost: Record<string, number> = {};
  private inFlight = 0;
  private slotWaiters: (() => void)[] = [];
  private changed: { promise: Promise<void>; resolve: () => void } = deferred();
  private readonly listeners = new Set<(p: BatchProgress) => void>();
  private readonly startedAt: number;
  private doneAtStart = 0;
  private failure: unknown;
  private closed = false;
  private loaded = false;
  private readonly closing = new AbortController();
  readonly finished: Promise<BatchReport>;
  /** Resolves once the batch's durable state is loaded (progress is exact from then on); rejects like `finished` if loading fails. */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  private constructor(
    private readonly deps: DriverDeps,
    readonly batchId: string,
    readonly meta: BatchMeta,
    readonly keys: readonly string[],
    private readonly inputs: readonly Uint8Array[],
  ) {
    this.state = new Uint8Array(keys.length);
    this.submitted = new Uint8Array(keys.length);
    this.markers = new Array(keys.length);
    this.runIds = new Array(keys.length);
    this.jobIds = new Array(keys.length);
    this.startedAt = deps.clock.now();
    this.ready = new Promise<void>((resolve) => (this.markReady = resolve));
    this.finished = this.drive();
    this.finished.catch(() => undefined);
    this.ready = Promise.race([this.ready, this.finished.then(() => undefined)]);
  }

  /** Starts driving `batchId` (its manifest already durable). */
  static start(deps: DriverDeps, batchId: string, meta: BatchMeta, keys: readonly string[], inputs: readonly Uint8Array[]): BatchDriver {
    return new BatchDriver(deps, batchId, meta, keys, inputs);
  }

  get total(): number {
    return this.keys.length;
  }

  // ---- what the item steps report ----

  itemStarted(index: number): void {
    const s = this.state[index];
    if (s === State.Queued || s === State.Submitting || s === State.Waiting || s === State.Settling) {
      this.state[index] = State.Running;
      this.counts.running++;
    }
  }

  itemSettling(index: number, jobId: string): void {
    if (this.state[index] === State.Done) return;
    if (this.state[index] === State.Running) this.counts.running--;
    this.state[index] = State.Settling;
    this.jobIds[index] = jobId;
  }

  /** `marker` committed with the item's settlement. */
  itemEnded(index: number, marker: ItemMarker): void {
    if (this.failure !== undefined || this.closed) return;
    // Called from the settlement's after-commit hooks: a throw here must not look like the settlement's.
    try {
      this.end(index, marker, false);
    } catch (e) {
      this.fail(e);
    }
  }

  // ---- views ----

  progress(): BatchProgress {
    const done = this.counts.succeeded + this.counts.failed + this.counts.cancelled;
    const elapsedMs = Math.max(0, this.deps.clock.now() - this.startedAt);
    const here = done - this.doneAtStart;
    const rate = elapsedMs > 0 ? (here * 1000) / elapsedMs : 0;
    const remaining = this.total - done;
    return {
      batchId: this.batchId,
      total: this.total,
      counts: { waiting: this.total - done - this.counts.running, running: this.counts.running, ...this.countsDone() },
      done,
      doneFraction: this.total === 0 ? 1 : done / this.total,
      itemsPerSecond: rate,
      etaMs: remaining === 0 ? 0 : rate > 0 ? Math.round((remaining * 1000) / rate) : null,
      elapsedMs,
      cost: { ...this.liveCost },
      stopReason: this.stop?.reason ?? null,
      finished: this.isFinished(),
    };
  }

  onProgress(listener: (p: BatchProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Finished items in completion order after `afterSeq`, following new ones until the batch finishes. */
  async *results<O>(afterSeq: number): AsyncGenerator<ItemResult<O>> {
    let seq = afterSeq + 1;
    while (!this.loaded && this.failure === undefined && !this.closed) await this.changed.promise;
    for (;;) {
      const waitFor = this.changed.promise;
      while (seq < this.logged.length) {
        const index = this.logged[seq]!;
        yield this.resultOf<O>(seq, index);
        seq++;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.isFinished() || this.closed) return;
      await waitFor;
    }
  }

  /** Stops following (the process is shutting down); the batch's durable state is kept. */
  close(): void {
    this.closed = true;
    this.closing.abort();
    this.notify();
  }

  private resultOf<O>(seq: number, index: number): ItemResult<O> {
    const m = this.markers[index]!;
    return {
      cursor: String(seq).padStart(10, '0'),
      index,
      key: this.keys[index]!,
      status: m.status,
      ...(m.output === undefined ? {} : { output: decodeValue(m.output) as O }),
      ...(m.error === undefined ? {} : { error: m.error }),
      cost: m.cost,
    };
  }

  private countsDone(): { succeeded: number; failed: number; cancelled: number } {
    return { succeeded: this.counts.succeeded, failed: this.counts.failed, cancelled: this.counts.cancelled };
  }

  private isFinished(): boolean {
    return this.loaded && this.logged.length === this.total && this.pending.length === 0 && (this.stop === undefined || this.stopWritten);
  }

  // ---- driving ----

  private async drive(): Promise<BatchReport> {
    const sink = this.deps.sink;
    const feeding = sink === undefined ? undefined : this.feed(sink);
    let ended: { readonly report: BatchReport } | { readonly error: unknown };
    try {
      ended = { report: await this.driveAll() };
    } catch (e) {
      this.fail(e);
      ended = { error: e };
    }
    await feeding;
    let flushFailed: { readonly error: unknown } | undefined;
    try {
      await sink?.flush();
    } catch (e) {
      flushFailed = { error: e };
    }
    if ('report' in ended && this.deps.retentionMs !== null) await this.markBatchEnded();
    // The first error of the run (an item, a write) wins over the flush's.
    if ('error' in ended) throw ended.error;
    if (this.failure !== undefined) throw this.failure;
    if (flushFailed) throw flushFailed.error;
    return ended.report;
  }

  /** Step 6: writes every logged item to `sink` in log order until driving ends. */
  private async feed(sink: OutputSink): Promise<void> {
    try {
      for await (const result of this.results<unknown>(-1)) await sink.write(outputRecordOf(result));
    } catch (e) {
      // A failed write (or an output that no longer decodes) ends the run; a failure of the
      // driving itself (rethrown by `results`) is already its error.
      this.fail(e);
    }
  }

  /** Step 7, best-effort: a batch not swept is kept, not lost. */
  private async markBatchEnded(): Promise<void> {
    try {
      await recordBatchEnd(this.deps.queue, this.batchId, this.meta.createdAtMs, this.deps.clock.now());
    } catch (e) {
      this.deps.log.warn(`[bulk] recording the end of a batch for its retention failed; it is kept until forgotten. batchId=${this.batchId}`, e);
    }
  }

  private async driveAll(): Promise<BatchReport> {
    await this.load();
    const sweeping = this.sweepLoop();
    try {
      if (this.stop) await this.cancelRest();
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < this.total && !this.stop && !this.closed && this.failure === undefined) {
          const index = next++;
          if (this.state[index] !== State.Waiting) continue;
          while (this.inFlight >= this.deps.window) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
          if (this.stop || this.state[index] !== State.Waiting) continue;
          await this.submit(index);
        }
      };
      await Promise.all(Array.from({ length: SUBMIT_LANES }, lane));
      while (!this.isFinished() && !this.closed && this.failure === undefined) {
        const waitFor = this.changed.promise;
        if (this.pending.length > 0) this.flushSoon();
        await waitFor;
      }
      if (this.failure !== undefined) throw this.failure;
      await this.flushing;
      if (!this.isFinished()) throw new TaqubaError('CANCELLED', `stopped driving the batch before it finished; resume it to go on. batchId=${this.batchId}`, { details: { batchId: this.batchId } });
    } finally {
      this.closed = true;
      this.closing.abort();
      for (const w of this.slotWaiters) w();
      await sweeping;
      this.notify();
    }
    return this.report();
  }

  private report(): BatchReport {
    const failedKeys: string[] = [];
    for (let i = 0; i < this.total; i++) if (this.markers[i]?.status === 'failed') failedKeys.push(this.keys[i]!);
    return {
      batchId: this.batchId,
      outcome: this.stop ? 'stopped' : 'completed',
      stopReason: this.stop?.reason ?? null,
      total: this.total,
      ...this.countsDone(),
      failedKeys,
      cost: rollupCosts(Array.from({ length: this.total }, (_, i) => this.markers[i]?.cost ?? {})),
      elapsedMs: Math.max(0, this.deps.clock.now() - this.startedAt),
    };
  }

  private async load(): Promise<void> {
    const { queue } = this.deps;
    for await (const [key, value] of scanAll(queue, markerPrefix(this.batchId))) {
      const index = indexOfKey(key);
      if (index >= this.total) continue;
      this.recordEnd(index, decodeMarker(value, this.batchId));
    }
    const seen = new Uint8Array(this.total);
    for await (const [, value] of scanAll(queue, logPrefix(this.batchId))) {
      const index = decodeLogEntry(value, this.batchId);
      this.logged.push(index);
      seen[index] = 1;
      this.nextSeq++;
    }
    for (let i = 0; i < this.total; i++) if (this.markers[i] && !seen[i]) this.pending.push({ index: i, marker: this.markers[i]!, write: false });
    const stop = await queue.kvGet(stoppedKey(this.batchId));
    if (stop) {
      this.stop = decodeStop(stop, this.batchId);
      this.stopWritten = true;
    }
    this.doneAtStart = this.counts.succeeded + this.counts.failed + this.counts.cancelled;
    this.loaded = true;
    if (this.pending.length > 0) this.flushSoon();
    this.notify();
    this.markReady();
  }

  private async runIdOf(index: number): Promise<string> {
    return (this.runIds[index] ??= await itemRunId(this.batchId, this.keys[index]!));
  }

  private async submit(index: number): Promise<void> {
    // Submitting, not Queued, until the run exists: the sweep reads "no run" as "ended".
    this.state[index] = State.Submitting;
    this.submitted[index] = 1;
    this.inFlight++;
    const runId = await this.runIdOf(index);
    try {
      const outcome = await this.deps.runtime.submit({
        runId,
        input: encodeItemPayload(this.batchId, index, this.keys[index]!, this.inputs[index]!),
        headers: this.meta.headers,
      });
      this.jobIds[index] ??= outcome.jobId;
      if (this.state[index] === State.Submitting) this.state[index] = State.Queued;
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.stop && this.state[index] === State.Queued) await this.cancelQueued(index);
  }

  /** Records an ended item once: counts, cost, the log append, the failure policy. */
  private end(index: number, marker: ItemMarker, write: boolean): void {
    if (this.state[index] === State.Done) return;
    const before = this.state[index];
    if (before === State.Running) this.counts.running--;
    if (before === State.Submitting || before === State.Queued || before === State.Settling || before === State.Running) {
      if (this.submitted[index]) this.inFlight--;
    }
    this.recordEnd(index, marker);
    this.pending.push({ index, marker, write });
    this.flushSoon();
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
    if (marker.status === 'failed' && !this.stop) this.checkPolicy();
  }

  private recordEnd(index: number, marker: ItemMarker): void {
    this.state[index] = State.Done;
    this.markers[index] = marker;
    this.counts[marker.status]++;
    for (const cost of Object.values(marker.cost)) for (const [metric, amount] of Object.entries(cost)) this.liveCost[metric] = (this.liveCost[metric] ?? 0) + amount;
  }

  private checkPolicy(): void {
    const { maxFailures, maxFailureFraction } = this.meta.policy;
    const failed = this.counts.failed;
    let reason: string | undefined;
    if (maxFailures !== undefined && failed > maxFailures) reason = `${failed} items failed, more than maxFailures=${maxFailures}`;
    else if (maxFailureFraction !== undefined && this.total > 0 && failed / this.total > maxFailureFraction) {
      reason = `${failed} of ${this.total} items failed, more than maxFailureFraction=${maxFailureFraction}`;
    }
    if (reason === undefined) return;
    this.stop = { reason, failed, total: this.total };
    this.deps.log.warn(`[bulk] batch stopped by its failure policy: ${reason}. batchId=${this.batchId}`);
    this.flushSoon();
    void this.cancelRest().catch((e: unknown) => this.fail(e));
  }

  /** After a stop: items never submitted get cancelled markers, queued ones are cancelled. */
  private async cancelRest(): Promise<void> {
    const queued: number[] = [];
    for (let i = 0; i < this.total; i++) {
      if (this.state[i] === State.Waiting) this.end(i, { status: 'cancelled', error: 'not started: the batch was stopped by its failure policy', cost: {} }, true);
      else if (this.state[i] === State.Queued) queued.push(i);
    }
    // All at once: their commits share the engine's group commits, so the rest is cancelled in
    // a round or two of store writes while the items already claimed run on.
    for (let at = 0; at < queued.length; at += CANCEL_LANES) await Promise.all(queued.slice(at, at + CANCEL_LANES).map((i) => this.cancelQueued(i)));
  }

  private async cancelQueued(index: number): Promise<void> {
    await this.deps.runtime.cancel(await this.runIdOf(index));
    // A step that was claimed meanwhile runs on and ends through its own settlement.
    await this.resolve(index, 'not started: the batch was stopped by its failure policy');
  }

  /**
   * Ends `index` if its run ended: by its marker, else (run gone) with a marker of the driver's
   * own. Leaves it in flight while the run is active.
   */
  private async resolve(index: number, cancelledReason = 'the item run was cancelled'): Promise<boolean> {
    if (this.state[index] === State.Done) return true;
    const { queue, runtime } = this.deps;
    const marker = await queue.kvGet(markerKey(this.batchId, index));
    if (marker) {
      this.end(index, decodeMarker(marker, this.batchId), false);
      return true;
    }
    if ((await runtime.getRun(await this.runIdOf(index))) !== null) return false;
    const jobId = this.jobIds[index];
    const job = jobId === undefined ? undefined : await queue.getJob(jobId);
    const again = await queue.kvGet(markerKey(this.batchId, index));
    if (again) this.end(index, decodeMarker(again, this.batchId), false);
    else if (job?.status === 'dead') this.end(index, { status: 'failed', error: job.lastError ?? 'dead-lettered without an outcome', cost: {} }, true);
    else this.end(index, { status: 'cancelled', error: cancelledReason, cost: {} }, true);
    return true;
  }

  private async sweepLoop(): Promise<void> {
    while (!this.closed && this.failure === undefined) {
      await delay(this.deps.sweepMs, this.closing.signal);
      if (this.closed) return;
      for (let i = 0; i < this.total && !this.closed; i++) {
        const s = this.state[i];
        if (s !== State.Queued && s !== State.Running && s !== State.Settling) continue;
        try {
          await this.resolve(i);
        } catch (e) {
          this.fail(e);
        }
      }
    }
  }

  private fail(e: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = e;
    if (!(e instanceof TaqubaError && e.code === 'CANCELLED')) this.deps.log.error(`[bulk] driving the batch failed; its durable state is kept. batchId=${this.batchId}`, e);
    this.notify();
  }

  // ---- the completion log ----

  private flushSoon(): void {
    if (this.flushing) return;
    let release!: () => void;
    // Set before flushAll starts, so nothing it calls synchronously can start a second one.
    this.flushing = new Promise<void>((r) => (release = r));
    void this.flushAll().catch((e: unknown) => this.fail(e)).finally(() => {
      this.flushing = undefined;
      release();
      // Not after a failure: flushAll would return at once and this would spin without yielding.
      if (this.failure === undefined && (this.pending.length > 0 || (this.stop && !this.stopWritten))) this.flushSoon();
      else this.notify();
    });
  }

  private async flushAll(): Promise<void> {
    while ((this.pending.length > 0 || (this.stop && !this.stopWritten)) && this.failure === undefined) {
      const batch = this.pending.splice(0, LOG_COMMIT_MAX);
      const first = this.nextSeq;
      this.nextSeq += batch.length;
      invariant(first === this.logged.length, 'bulk log commits run one at a time', { batchId: this.batchId });
      const writes: [Uint8Array, Uint8Array][] = [];
      batch.forEach((e, i) => {
        writes.push([logKey(this.batchId, first + i), encodeLogEntry(e.index)]);
        if (e.write) writes.push([markerKey(this.batchId, e.index), encodeMarker(e.marker)]);
      });
      const stop = this.stop && !this.stopWritten ? this.stop : undefined;
      if (stop) writes.push([stoppedKey(this.batchId), encodeStop(stop)]);
      try {
        await this.deps.queue.commitEffects({ kvWrites: writes });
      } catch (e) {
        this.fail(e);
        return;
      }
      if (stop) this.stopWritten = true;
      for (const e of batch) this.logged.push(e.index);
      this.notify();
    }
  }

  private notify(): void {
    const { resolve } = this.changed;
    this.changed = deferred();
    resolve();
    if (this.listeners.size === 0) return;
    const snapshot = this.progress();
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (e) {
        this.deps.log.warn(`[bulk] a progress listener threw. batchId=${this.batchId}`, e);
      }
    }
  }
}

function outputRecordOf(result: ItemResult<unknown>): OutputRecord {
  return {
    key: result.key,
    status: result.status,
    ...(result.output === undefined ? {} : { output: result.output }),
    ...(result.error === undefined ? {} : { error: result.error }),
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Every caller-KV entry under `prefix`, page by page. */
export async function* scanAll(queue: Queue, prefix: Uint8Array): AsyncGenerator<readonly [Uint8Array, Uint8Array]> {
  let cursor: Uint8Array | undefined;
  do {
    const page = await queue.kvScan(prefix, { limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    yield* page.entries;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}
