/**
 * `Bulk`: one `Pipeline` over many inputs. Each item is one workflow run with one step that runs
 * the pipeline's phases as memoized calls (item-step.ts); a batch is a durable manifest of items
 * under one batch id plus per-item markers and a completion log in the caller KV (records.ts);
 * the batch is driven by this process (batch-driver.ts) and watched through a `Batch` handle.
 *
 * Submission (`submit`):
 * 1. Check the options and the items: keys (default `item-<i>`) unique, inputs storable by the
 *    value codec, batch id a valid run id (INVALID_ARGUMENT, reasons `invalid_batch_id`,
 *    `duplicate_item_key`, `invalid_item_key`, `invalid_item`, `invalid_policy`, `invalid_spec`).
 * 2. Under a per-batch lock: a batch driven here already ⇒ its handle (same items) or
 *    INPUT_MISMATCH (reason `batch_mismatch`). A stored manifest ⇒ same items: drive it again
 *    (finished items are read back from their markers, not run); other items: INPUT_MISMATCH.
 *    No manifest ⇒ write the items, then the meta record (a meta means a complete manifest).
 * 3. Start the driver and return the handle.
 * The failure policy and headers are those of the first submission (stored with the manifest).
 *
 * Everything survives kill -9: reopen the store, `submit` the same items again (or `resume(id)`),
 * and the batch goes on where the store says it was; item phases already memoized do not run again.
 *
 * Each batch run (a `submit` or `resume` that starts driving) writes every item's outcome to its
 * output sink once (output-sink.ts) and flushes it at the end. With `batchRetentionMs`, a batch is
 * forgotten that long after it first finished, by a sweep of the worker (batch-retention.ts).
 */
import { utf8 } from '../bytes.js';
import type { Clock } from '../clock.js';
import { encodeRecord, encodeValue } from '../codec.js';
import { equalBytes } from '../bytes.js';
import { InvalidArgumentError, InvalidConfigError, NotFoundError, PreconditionFailedError, TaqubaError } from '../errors.js';
import { sha256 } from '../hash.js';
import { KeyedMutex } from '../keyed-mutex.js';
import { resolveLogger, type LoggerOption, type LogSink } from '../logger.js';
import type { ObjectStore } from '../objects/object-store.js';
import { checkOptions, numberRule, optionNames } from '../options.js';
import type { Queue } from '../queue/index.js';
import { show } from '../show.js';
import { createRunIdGenerator } from '../workflow/runs/run-ids.js';
import { WorkflowRuntime } from '../workflow/runtime.js';
import { spawnRunner, type RunnerHandle } from '../workflow/runner-handle.js';
import { NoopTerminalHook } from '../workflow/runs/terminal-hook.js';
import { checkUserHeaders, validateRunId } from '../workflow/validation.js';
import { Batch } from './batch.js';
import { BatchDriver, scanAll } from './batch-driver.js';
import { runBatchSweeps, sweepExpiredBatches, type SweepDeps } from './batch-retention.js';
import type { OutputSink } from './output-sink.js';
import { rollupCosts, type CostRollup } from './cost.js';
import { runItemStep, type ItemObserver } from './item-step.js';
import type { PhaseKv } from './phase-memo.js';
import type { Pipeline } from './pipeline.js';
import {
  batchPrefix,
  decodeManifestItem,
  decodeMarker,
  decodeMeta,
  decodeStop,
  encodeManifestItem,
  encodeMeta,
  indexOfKey,
  itemKey,
  itemRunId,
  markerPrefix,
  metaKey,
  stoppedKey,
  type BatchMeta,
  type FailurePolicy,
  type ItemMarker,
} from './records.js';

export const DEFAULT_BULK_QUEUE_NAME = 'bulk-items';
export const DEFAULT_MAX_CONCURRENT_ITEMS = 64;
export const MAX_ITEM_KEY_LEN = 1000;
const MANIFEST_COMMIT_ITEMS = 500;

export interface BulkOptions {
  /** Queue name of the item runs. Default `bulk-items`. */
  readonly queueName?: string;
  /** Object-key prefix of the items' memos (phase values). Default `{queueName}-memo`. */
  readonly memoPrefix?: string;
  /**
   * Items run at once. Default 64 (phases are usually remote calls that wait). An item waiting for
   * a finished phase's record to become durable lends its place to another item meanwhile.
   */
  readonly maxConcurrentItems?: number;
  /** Attempts per item before it fails (transient errors retry with the queue's backoff). Default: the queue's. */
  readonly maxAttempts?: number;
  /** Worker poll interval and the batch driver's sweep interval (ms). Default 250 (sweep at least 1 s). */
  readonly pollIntervalMs?: number;
  readonly clock?: Clock;
  readonly logger?: LoggerOption;
  /** Where every batch run writes its items' outcomes, unless its submission names another sink. Default: none (`NullSink`). */
  readonly output?: OutputSink;
  /**
   * Forget a batch (as `forget` does) this many ms after it first finished, swept by the worker
   * (`spawn`/`run`: at start, then every min(retention, 1 h)). At least 1. Default null: batches
   * are kept until `forget`.
   */
  readonly batchRetentionMs?: number | null;
}

/** Options of `Bulk.resume`. */
export interface BatchResumeOptions {
  /** Where this batch run writes its items' outcomes. Default: the `Bulk`'s `output`. */
  readonly output?: OutputSink;
}

export interface BatchSubmitOptions<I> {
  /** 1..128 characters of `[A-Za-z0-9_-]`; default a fresh time-ordered id. Resubmitting an id with the same items is idempotent. */
  readonly batchId?: string;
  /** The item's key, unique in the batch (1..1000 characters). Default `item-<index>`. */
  readonly key?: (input: I, index: number) => string;
  /** Passed to every phase as `ctx.headers`; `workflow.*` names are reserved. */
  readonly headers?: Readonly<Record<string, string>>;
  /** When to give up on the batch; default never (every item runs). */
  readonly failurePolicy?: FailurePolicy;
  /**
   * Where this batch run writes its items' outcomes (instead of the `Bulk`'s `output`). Ignored
   * when this process already drives the batch (that run keeps its sink).
   */
  readonly output?: OutputSink;
}

/** A batch as the store records it (`Bulk.status`), also when no process drives it. */
export interface BatchStatus {
  readonly batchId: string;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
  /** Items without an outcome yet. */
  readonly pending: number;
  readonly stopReason: string | null;
  readonly failedKeys: string[];
  readonly cost: CostRollup;
}

const BULK_OPTIONS = optionNames<BulkOptions>({
  queueName: true,
  memoPrefix: true,
  maxConcurrentItems: true,
  maxAttempts: true,
  pollIntervalMs: true,
  clock: true,
  logger: true,
  output: true,
  batchRetentionMs: true,
});
const SUBMIT_OPTIONS = optionNames<BatchSubmitOptions<unknown>>({ batchId: true, key: true, headers: true, failurePolicy: true, output: true });
const RESUME_OPTIONS = optionNames<BatchResumeOptions>({ output: true });
const POLICY_OPTIONS = optionNames<FailurePolicy>({ maxFailures: true, maxFailureFraction: true });

export class Bulk<I, O> {
  /** The workflow runtime the items run on (run queries, dead steps). */
  readonly runtime: WorkflowRuntime;
  private readonly drivers = new Map<string, BatchDriver>();
  private readonly locks = new KeyedMutex();
  private readonly log: LogSink;
  private readonly nextBatchId: () => string;
  private readonly window: number;
  private readonly sweepMs: number;
  private readonly output: OutputSink | undefined;
  private readonly batchRetentionMs: number | null;

  /**
   * Builds a bulk runner over `queue` with item memos in `store`. Pure: no I/O until `submit`,
   * `resume` or `spawn`. Throws INVALID_CONFIG for bad options, INVALID_ARGUMENT (reason
   * `invalid_pipeline`) for a pipeline without phases.
   * @example
   * const bulk = new Bulk(queue, store, summarise);
   * const worker = bulk.spawn();
   * const batch = await bulk.submit(docs, { batchId: 'docs-2026-12', failurePolicy: { maxFailureFraction: 0.1 } });
   * for await (const r of batch.results()) console.log(r.key, r.status);
   * console.log(await batch.done());
   */
  constructor(
    private readonly queue: Queue,
    store: ObjectStore,
    pipeline: Pipeline<I, O>,
    options: BulkOptions = {},
  ) {
    checkOptions(options, BULK_OPTIONS, 'Bulk options');
    if (!Array.isArray((pipeline as { phases?: unknown })?.phases) || pipeline.phases.length === 0) {
      throw new InvalidArgumentError(`pipeline must be a Pipeline with at least one phase. pipeline=${show(pipeline)}`, { reason: 'invalid_pipeline' });
    }
    const max = options.maxConcurrentItems ?? DEFAULT_MAX_CONCURRENT_ITEMS;
    const rule = numberRule(max, { integer: true, min: 1 });
    if (rule) throw new InvalidConfigError(`maxConcurrentItems ${rule}. maxConcurrentItems=${show(max)}`, { option: 'maxConcurrentItems' });
    this.output = options.output === undefined ? undefined : checkSink(options.output, 'INVALID_CONFIG');
    this.batchRetentionMs = checkBatchRetention(options.batchRetentionMs);
    this.log = resolveLogger(options.logger);
    const queueName = options.queueName ?? DEFAULT_BULK_QUEUE_NAME;
    const phases = pipeline.phases;
    const observer: ItemObserver = {
      started: (batchId, index) => this.drivers.get(batchId)?.itemStarted(index),
      settling: (batchId, index, jobId) => this.drivers.get(batchId)?.itemSettling(index, jobId),
      ended: (batchId, index, marker) => this.drivers.get(batchId)?.itemEnded(index, marker),
    };
    const phaseKv: PhaseKv = {
      get: async (key) => (await queue.kvGet(key)) ?? null,
      put: (key, value) => queue.kvPut(key, value),
    };
    const warn = (m: string): void => this.log.warn(`[bulk] ${m}`);
    this.runtime = new WorkflowRuntime(queue, store, (step) => runItemStep(phases, step, observer, phaseKv, warn), new NoopTerminalHook(), {
      queueName,
      memoPrefix: options.memoPrefix ?? `${queueName}-memo`,
      memoRetentionMs: null,
      // Items are submitted by the pipeline itself, and their markers record how they ended.
      commandPollMs: null,
      outcomeRetentionMs: 0,
      maxConcurrentSteps: max,
      ...(options.maxAttempts === undefined ? {} : { stepMaxAttempts: options.maxAttempts }),
      ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
    this.nextBatchId = createRunIdGenerator(this.runtime.clock);
    this.window = Math.max(2 * max, 64);
    this.sweepMs = Math.max(1000, options.pollIntervalMs ?? 250);
  }

  get queueName(): string {
    return this.runtime.queueName;
  }

  /**
   * Works items until `signal` aborts (see `WorkflowRuntime.run`), and sweeps expired batches with
   * `batchRetentionMs`; then stops driving batches (their `done()` rejects with CANCELLED).
   */
  async run(signal?: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const retention = this.batchRetentionMs;
    const sweeping = retention === null ? undefined : runBatchSweeps(this.sweepDeps(), retention, stop.signal);
    try {
      await this.runtime.run(signal);
    } finally {
      stop.abort();
      await sweeping;
      for (const d of this.drivers.values()) d.close();
    }
  }

  /**
   * Runs one batch-retention pass now: forgets the batches that first finished more than
   * `batchRetentionMs` ago (none without retention). Returns how many. A batch this process drives
   * right now is left for a later pass. Rejects with CLOSED or store errors.
   */
  async sweepBatchesNow(): Promise<number> {
    return this.batchRetentionMs === null ? 0 : sweepExpiredBatches(this.sweepDeps(), this.batchRetentionMs);
  }

  private sweepDeps(): SweepDeps {
    return { queue: this.queue, clock: this.runtime.clock, forget: (id) => this.forget(id), warn: (m, e) => this.log.warn(`[bulk] ${m}`, e) };
  }

  /** `run` in the background; `shutdown()` stops it and waits. */
  spawn(signal?: AbortSignal): RunnerHandle {
    return spawnRunner((stop) => this.run(stop), signal);
  }


  /**
   * Submits `inputs` as one batch (see the module comment) and starts driving it; idempotent per
   * batch id. Rejects with INVALID_ARGUMENT (bad options or items), INPUT_MISMATCH (reason
   * `batch_mismatch`: the id has other items), CLOSED or store errors.
   */
  async submit(inputs: Iterable<I>, options: BatchSubmitOptions<I> = {}): Promise<Batch<O>> {
    checkOptions(options, SUBMIT_OPTIONS, 'batch submit', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
    const batchId = options.batchId ?? this.nextBatchId();
    checkBatchId(batchId);
    if (options.key !== undefined && typeof options.key !== 'function') throw new InvalidArgumentError(`key must be a function (input, index) => string. key=${show(options.key)}`, { reason: 'invalid_spec' });
    const headers = options.headers ?? {};
    if (typeof headers !== 'object' || headers === null) throw new InvalidArgumentError(`headers must be an object of strings. headers=${show(headers)}`, { reason: 'invalid_spec' });
    checkUserHeaders(headers);
    const policy = checkPolicy(options.failurePolicy);
    const output = options.output === undefined ? this.output : checkSink(options.output, 'INVALID_ARGUMENT');
    if (inputs === null || typeof (inputs as Iterable<I>)?.[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError(`inputs must be an iterable (an array, say). inputs=${show(inputs)}`, { reason: 'invalid_spec' });
    }
    const keys: string[] = [];
    const encoded: Uint8Array[] = [];
    const seen = new Set<string>();
    let index = 0;
    for (const input of inputs) {
      const key = options.key ? options.key(input, index) : `item-${index}`;
      if (typeof key !== 'string' || key.length === 0 || key.length > MAX_ITEM_KEY_LEN) {
        throw new InvalidArgumentError(`item key must be a string of 1..${MAX_ITEM_KEY_LEN} characters. index=${index} key=${show(key)}`, { reason: 'invalid_item_key', index });
      }
      if (seen.has(key)) throw new InvalidArgumentError(`two items of the batch have the same key. key=${show(key)} index=${index}`, { reason: 'duplicate_item_key', key, index });
      seen.add(key);
      try {
        encoded.push(encodeValue(input));
      } catch (e) {
        throw new InvalidArgumentError(`item input cannot be stored: ${e instanceof Error ? e.message : String(e)}. key=${show(key)} index=${index}`, { reason: 'invalid_item', key, index });
      }
      keys.push(key);
      index++;
    }
    const itemsHash = await sha256(encodeRecord(keys.map((k, i) => [k, encoded[i]])));
    return this.locks.run(batchId, async () => {
      const live = this.drivers.get(batchId);
      if (live) {
        if (!equalBytes(live.meta.itemsHash, itemsHash)) throw batchMismatch(batchId);
        return new Batch<O>(live);
      }
      const stored = await this.queue.kvGet(metaKey(batchId));
      let meta: BatchMeta;
      if (stored) {
        meta = decodeMeta(stored, batchId);
        if (!equalBytes(meta.itemsHash, itemsHash)) throw batchMismatch(batchId);
      } else {
        meta = { total: keys.length, itemsHash, createdAtMs: this.runtime.clock.now(), policy, headers: { ...headers } };
        for (let start = 0; start < keys.length; start += MANIFEST_COMMIT_ITEMS) {
          const writes: [Uint8Array, Uint8Array][] = [];
          for (let i = start; i < Math.min(keys.length, start + MANIFEST_COMMIT_ITEMS); i++) writes.push([itemKey(batchId, i), encodeManifestItem(keys[i]!, encoded[i]!)]);
          await this.queue.commitEffects({ kvWrites: writes });
        }
        await this.queue.kvPut(metaKey(batchId), encodeMeta(meta));
      }
      return this.startDriver(batchId, meta, keys, encoded, output);
    });
  }

  /**
   * Drives a batch submitted earlier (by this process or one before a restart) from its stored
   * manifest; the handle of the batch if this process drives it already. Rejects with
   * INVALID_ARGUMENT (batch id, options), NOT_FOUND (reason `batch_not_found`), CORRUPT_DATA,
   * CLOSED or store errors.
   */
  async resume(batchId: string, options: BatchResumeOptions = {}): Promise<Batch<O>> {
    checkBatchId(batchId);
    checkOptions(options, RESUME_OPTIONS, 'batch resume', 'INVALID_ARGUMENT', { reason: 'invalid_spec' });
    const output = options.output === undefined ? this.output : checkSink(options.output, 'INVALID_ARGUMENT');
    return this.locks.run(batchId, async () => {
      const live = this.drivers.get(batchId);
      if (live) return new Batch<O>(live);
      const meta = await this.readMeta(batchId);
      const { keys, inputs } = await this.readManifest(batchId, meta.total);
      return this.startDriver(batchId, meta, keys, inputs, output);
    });
  }

  /**
   * The batch as the store records it, without driving it (works from any process holding the
   * store, and while another handle drives it here). Rejects with INVALID_ARGUMENT, NOT_FOUND
   * (reason `batch_not_found`), CORRUPT_DATA or store errors.
   */
  async status(batchId: string): Promise<BatchStatus> {
    checkBatchId(batchId);
    const meta = await this.readMeta(batchId);
    const { keys } = await this.readManifest(batchId, meta.total);
    const markers: (ItemMarker | undefined)[] = new Array(meta.total);
    for await (const [key, value] of scanAll(this.queue, markerPrefix(batchId))) {
      const i = indexOfKey(key);
      if (i < meta.total) markers[i] = decodeMarker(value, batchId);
    }
    let pending = 0;
    for (let i = 0; i < meta.total; i++) if (markers[i] === undefined) pending++;
    const count = (s: string): number => markers.filter((m) => m?.status === s).length;
    const stop = await this.queue.kvGet(stoppedKey(batchId));
    const failedKeys = keys.filter((_k, i) => markers[i]?.status === 'failed');
    return {
      batchId,
      total: meta.total,
      succeeded: count('succeeded'),
      failed: count('failed'),
      cancelled: count('cancelled'),
      pending,
      stopReason: stop ? decodeStop(stop, batchId).reason : null,
      failedKeys,
      cost: rollupCosts(Array.from({ length: meta.total }, (_, i) => markers[i]?.cost ?? {})),
    };
  }

  /**
   * Deletes a batch: its items' memos, markers, log and manifest; a later submission of the id
   * starts from scratch. False when there was no such batch. Rejects with PRECONDITION_FAILED
   * (reason `batch_running`) while this process drives it, INVALID_ARGUMENT, or store errors.
   */
  async forget(batchId: string): Promise<boolean> {
    checkBatchId(batchId);
    return this.locks.run(batchId, async () => {
      if (this.drivers.has(batchId)) throw new PreconditionFailedError(`the batch is being driven by this process; wait for done() first. batchId=${batchId}`, { reason: 'batch_running', batchId });
      const stored = await this.queue.kvGet(metaKey(batchId));
      if (!stored) return false;
      const meta = decodeMeta(stored, batchId);
      const { keys } = await this.readManifest(batchId, meta.total);
      for (const key of keys) {
        const runId = await itemRunId(batchId, key);
        // An item still queued (by an earlier process) would otherwise run and leave a marker behind.
        await this.runtime.cancel(runId);
        await this.runtime.memoStore.clearMemosForRun(runId);
      }
      // Meta first: a crash part-way leaves no half batch that `resume` would accept.
      await this.queue.kvDelete(metaKey(batchId));
      const all: Uint8Array[] = [];
      for await (const [key] of scanAll(this.queue, batchPrefix(batchId))) all.push(key);
      for (let start = 0; start < all.length; start += MANIFEST_COMMIT_ITEMS) {
        await this.queue.commitEffects({ kvDeletes: all.slice(start, start + MANIFEST_COMMIT_ITEMS) });
      }
      return true;
    });
  }

  private async startDriver(batchId: string, meta: BatchMeta, keys: readonly string[], inputs: readonly Uint8Array[], sink: OutputSink | undefined): Promise<Batch<O>> {
    const deps = { queue: this.queue, runtime: this.runtime, clock: this.runtime.clock, log: this.log, window: this.window, sweepMs: this.sweepMs, sink, retentionMs: this.batchRetentionMs };
    const driver = BatchDriver.start(deps, batchId, meta, keys, inputs);
    this.drivers.set(batchId, driver);
    const forget = (): void => {
      if (this.drivers.get(batchId) === driver) this.drivers.delete(batchId);
    };
    driver.finished.then(forget, forget);
    await driver.ready;
    return new Batch<O>(driver);
  }

  private async readMeta(batchId: string): Promise<BatchMeta> {
    const stored = await this.queue.kvGet(metaKey(batchId));
    if (!stored) throw new NotFoundError(`no batch under this id. batchId=${batchId}`, { reason: 'batch_not_found', batchId });
    return decodeMeta(stored, batchId);
  }

  private async readManifest(batchId: string, total: number): Promise<{ keys: string[]; inputs: Uint8Array[] }> {
    const keys: string[] = new Array(total);
    const inputs: Uint8Array[] = new Array(total);
    let found = 0;
    for await (const [key, value] of scanAll(this.queue, utf8(`workflow/bulk/${batchId}/items/`))) {
      const i = indexOfKey(key);
      if (i >= total) continue;
      const item = decodeManifestItem(value, batchId);
      keys[i] = item.key;
      inputs[i] = item.input;
      found++;
    }
    if (found !== total) throw new TaqubaError('CORRUPT_DATA', `batch manifest is incomplete. batchId=${batchId} expected=${total} found=${found}`, { details: { reason: 'inconsistent_batch', batchId } });
    return { keys, inputs };
  }
}


function checkBatchId(batchId: unknown): asserts batchId is string {
  try {
    validateRunId(batchId);
  } catch {
    throw new InvalidArgumentError(`invalid batch id; expected 1..128 characters of [A-Za-z0-9_-]. batchId=${show(batchId)}`, { reason: 'invalid_batch_id', batchId: show(batchId) });
  }
}

/** A sink as the options give it: INVALID_CONFIG (option `output`) or INVALID_ARGUMENT (reason `invalid_spec`) unless it has `write` and `flush`. */
function checkSink(sink: unknown, code: 'INVALID_CONFIG' | 'INVALID_ARGUMENT'): OutputSink {
  const candidate = sink as Partial<OutputSink> | null;
  if (typeof candidate === 'object' && candidate !== null && typeof candidate.write === 'function' && typeof candidate.flush === 'function') return candidate as OutputSink;
  const message = `output must be an OutputSink (write and flush methods), e.g. a JsonlSink. output=${show(sink)}`;
  throw code === 'INVALID_CONFIG' ? new InvalidConfigError(message, { option: 'output' }) : new InvalidArgumentError(message, { reason: 'invalid_spec', option: 'output' });
}

/** `batchRetentionMs`: null/absent, or an integer ≥ 1 (INVALID_CONFIG otherwise). */
function checkBatchRetention(ms: unknown): number | null {
  if (ms === undefined || ms === null) return null;
  const rule = numberRule(ms, { integer: true, min: 1 });
  if (rule) throw new InvalidConfigError(`batchRetentionMs ${rule}. batchRetentionMs=${show(ms)}`, { option: 'batchRetentionMs' });
  return ms as number;
}

function checkPolicy(policy: FailurePolicy | undefined): FailurePolicy {
  if (policy === undefined) return {};
  checkOptions(policy, POLICY_OPTIONS, 'failurePolicy', 'INVALID_ARGUMENT', { reason: 'invalid_policy' });
  const { maxFailures, maxFailureFraction } = policy;
  if (maxFailures !== undefined) {
    const rule = numberRule(maxFailures, { integer: true });
    if (rule) throw new InvalidArgumentError(`failurePolicy.maxFailures ${rule}. maxFailures=${show(maxFailures)}`, { reason: 'invalid_policy', option: 'maxFailures' });
  }
  if (maxFailureFraction !== undefined) {
    const rule = numberRule(maxFailureFraction) ?? (maxFailureFraction > 1 ? 'must be at most 1' : undefined);
    if (rule) throw new InvalidArgumentError(`failurePolicy.maxFailureFraction ${rule}. maxFailureFraction=${show(maxFailureFraction)}`, { reason: 'invalid_policy', option: 'maxFailureFraction' });
  }
  return { ...(maxFailures === undefined ? {} : { maxFailures }), ...(maxFailureFraction === undefined ? {} : { maxFailureFraction }) };
}

function batchMismatch(batchId: string): TaqubaError {
  return new TaqubaError('INPUT_MISMATCH', `batch id already submitted with other items. batchId=${batchId}`, { details: { reason: 'batch_mismatch', batchId } });
}


