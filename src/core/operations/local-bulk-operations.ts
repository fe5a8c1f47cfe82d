/**
 * The serving side of the bulk operations: the host's `Bulk` (runtime-host.ts), the batches it
 * drives, and their progress as updates (throttled per batch; the final snapshot always goes out;
 * the browser host sends them as `batch-progress` events). After a takeover, asking for a batch's
 * progress drives the stored batch again on the new leader.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Batch, BatchProgress, BatchStatus, Bulk, BulkOptions, Pipeline } from '../bulk/index.js';
import type { WireBatchSubmitOptions } from './operations.js';

/** A batch's progress as the serving runtime reports it. */
export interface BatchProgressUpdate {
  readonly batchId: string;
  /** Epoch ms, from the host's clock. */
  readonly at: number;
  readonly progress: BatchProgress;
}

/** A bulk pipeline a host runs (a `Bulk` over the host's queue and store), with the `Bulk`'s options. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface HostBulk<I = any, O = any> {
  readonly pipeline: Pipeline<I, O>;
  readonly options?: BulkOptions;
}

/** Least time between two progress events of one batch (the last one is never held back). */
const EVENT_INTERVAL_MS = 100;

export function noBulkError(): InvalidArgumentError {
  return new InvalidArgumentError('this host serves no bulk pipeline; give it one: { bulk: { pipeline } } (serveWorkflowRuntime, createRuntimeHost)', { reason: 'bulk_not_configured' });
}

export class LocalBulkOperations {
  private readonly batches = new Map<string, Batch<unknown>>();

  constructor(
    private readonly bulk: Bulk<unknown, unknown>,
    private readonly now: () => number,
    private readonly emit: (update: BatchProgressUpdate) => void,
  ) {}

  async submit(inputs: readonly unknown[], options: WireBatchSubmitOptions = {}): Promise<BatchProgress> {
    if (!Array.isArray(inputs)) throw new InvalidArgumentError('bulk inputs must be an array', { reason: 'invalid_spec' });
    const { keys, ...rest } = options ?? {};
    if (keys !== undefined && (!Array.isArray(keys) || keys.length !== inputs.length)) {
      throw new InvalidArgumentError(`keys must be an array with one key per input. inputs=${inputs.length}`, { reason: 'invalid_spec' });
    }
    const batch = await this.bulk.submit(inputs, { ...rest, ...(keys === undefined ? {} : { key: (_input: unknown, i: number) => keys[i]! }) });
    return this.watch(batch);
  }

  async progress(batchId: string): Promise<BatchProgress> {
    const known = this.batches.get(batchId);
    if (known) return known.progress();
    return this.watch(await this.bulk.resume(batchId));
  }

  status(batchId: string): Promise<BatchStatus> {
    return this.bulk.status(batchId);
  }

  /** Forwards a batch's progress as events, at most one per EVENT_INTERVAL_MS, and the last. */
  private watch(batch: Batch<unknown>): BatchProgress {
    if (!this.batches.has(batch.id)) {
      this.batches.set(batch.id, batch);
      let last = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const send = (): void => {
        timer = undefined;
        last = this.now();
        this.emit({ batchId: batch.id, at: last, progress: batch.progress() });
      };
      const stop = batch.onProgress((p) => {
        if (p.finished) {
          clearTimeout(timer);
          return send();
        }
        if (timer === undefined) timer = setTimeout(send, Math.max(0, last + EVENT_INTERVAL_MS - this.now()));
      });
      const end = (): void => {
        stop();
        clearTimeout(timer);
        if (this.batches.get(batch.id) === batch) this.batches.delete(batch.id);
      };
      batch.done().then(() => {
        // A batch already finished when it was submitted sends its final snapshot once.
        if (last === 0) send();
        end();
      }, end);
    }
    return batch.progress();
  }
}
