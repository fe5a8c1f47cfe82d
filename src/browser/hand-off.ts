/**
 * `client.handOff(runId, backend)`: a run of the page's own store moves to a Node backend
 * (`serveHttp`, reached with `connectHttp`) and continues there, where it stopped.
 *
 * Protocol (the run is in exactly one place at every point: docs/rfcs/0004-run-archive.md):
 * 1. Export with `handOff` (`to`: the backend's URL) from the local runtime. In the transaction
 *    that takes the run's step out, the local store stops running it and keeps the archive. A run
 *    moves between steps: while its step runs (CONFLICT `step_running`) the export is asked again
 *    until the step settled (a workflow function's run pauses at a sleep or a signal wait).
 * 2. Import into the backend (`importRun`, answered once per archive there, so sending it again
 *    after a lost answer is harmless). When it cannot be delivered (the page is offline, the
 *    network failed, the backend is away: STORE_UNAVAILABLE) the hand-off is pending: the archive
 *    stays retrievable from the local store (a hand-off export of a moved run answers the same
 *    archive), and delivery is tried again when the page comes back online, after a backoff, and
 *    after a reload by `resumeHandOffs(backend)`.
 * 3. Confirm the delivery in the local store (`confirmHandOff`), so a reload does not deliver it
 *    again (which would be harmless, only useless).
 * Until step 1 commits the run runs here; between 1 and 2 it runs nowhere; after 2, at the backend.
 */
import { ClosedError, ConflictError, InvalidArgumentError, isTaqubaError, TaqubaError } from '../core/errors.js';
import { show } from '../core/show.js';
import { describeRunArchive } from '../core/workflow/archive/archive-format.js';
import type { ImportRunOutcome, KvKey } from '../core/workflow/index.js';
import { validateRunId } from '../core/workflow/validation.js';
import type { FinishedRunView, RunView, RuntimeOperations, WireExportRunOptions } from '../core/operations/operations.js';
import type { HttpWorkflowClient } from '../http/client/connect-http.js';
import type { HttpRunEvent } from '../http/wire.js';

/** What a hand-off needs of the backend: a client of `connectHttp` (its `url` is where the run goes). */
export type HandOffBackend = Pick<HttpWorkflowClient, 'url' | 'importRun' | 'status' | 'result' | 'subscribe' | 'events'>;

/** What a hand-off needs of the local store: the page client's operations. */
export type HandOffSource = { [K in 'exportRun' | 'listMovedRuns' | 'confirmHandOff']: (...args: Parameters<RuntimeOperations[K]>) => Promise<Awaited<ReturnType<RuntimeOperations[K]>>> };

export interface HandOffOptions {
  /** Caller-KV keys (outside `workflow/`) the run needs at the backend; they travel with it. */
  readonly kvKeys?: readonly KvKey[];
  /** Stops waiting for a running step to settle (CANCELLED); the run then stays here. */
  readonly signal?: AbortSignal;
}

/** A run handed off to a backend (`client.handOff`), followed there. */
export interface HandedOffRun {
  /** The run's id, the same at the backend. */
  readonly runId: string;
  /** The archive the run moved with. */
  readonly archiveId: string;
  /** The backend's URL. */
  readonly to: string;
  /**
   * Resolves with the backend's import once it has the run (pending while the page is offline or
   * the backend away; tried again meanwhile). Rejects with the backend's refusal (CORRUPT_DATA,
   * ALREADY_EXISTS `run_exists`, INVALID_ARGUMENT `archive_kind`, STORE_PERMISSION), or CLOSED when
   * the client closes before; the run then stays moved and undelivered, and `resumeHandOffs`
   * delivers it later.
   */
  readonly delivered: Promise<ImportRunOutcome>;
  /** Whether the backend has the run (`delivered` resolved). */
  isDelivered(): boolean;
  /** The run's state at the backend (null while the hand-off is pending: the backend does not know it yet). */
  status(): Promise<RunView | null>;
  /** The run's outcome at the backend, once delivered and ended. CANCELLED when `options.signal` aborts; the backend's `result` errors. */
  result(options?: { readonly signal?: AbortSignal }): Promise<FinishedRunView>;
  /** The backend's events of the run (`backend.subscribe`); returns the unsubscribe. */
  subscribe(listener: (event: HttpRunEvent) => void, options?: { readonly onError?: (error: unknown) => void }): () => void;
  /** The backend's events of the run as an async iterator (`backend.events`). */
  events(options?: { readonly signal?: AbortSignal }): AsyncIterableIterator<HttpRunEvent>;
}

export interface HandOffs {
  handOff(runId: string, backend: HandOffBackend, options?: HandOffOptions): Promise<HandedOffRun>;
  resumeHandOffs(backend: HandOffBackend): Promise<readonly HandedOffRun[]>;
  /** Stops every pending delivery (their `delivered` rejects with CLOSED; the runs stay moved and undelivered). */
  close(): void;
}

/** Export refusals that pass: the step settles, the run stops moving, a concurrency slot frees. */
const TRANSIENT_EXPORT_REASONS: ReadonlySet<unknown> = new Set(['step_running', 'run_moving', 'run_queued']);
const FIRST_EXPORT_RETRY_MS = 100;
const LONGEST_EXPORT_RETRY_MS = 1_000;
const FIRST_DELIVERY_RETRY_MS = 1_000;
const LONGEST_DELIVERY_RETRY_MS = 30_000;

function checkBackend(backend: unknown): asserts backend is HandOffBackend {
  const b = backend as Partial<HandOffBackend> | null;
  if (typeof backend !== 'object' || b === null || typeof b.url !== 'string' || typeof b.importRun !== 'function' || typeof b.result !== 'function') {
    throw new InvalidArgumentError(`a run is handed off to a backend client of connectHttp(url). backend=${show(backend)}`, { reason: 'invalid_backend' });
  }
}

function isOffline(): boolean {
  return (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine === false;
}

function cancelled(runId: string): TaqubaError {
  return new TaqubaError('CANCELLED', `stopped waiting for the run's step to settle; the run stays here. runId=${runId}`, { details: { runId } });
}

interface Delivery {
  readonly runId: string;
  readonly archiveId: string;
  readonly backend: HandOffBackend;
  readonly promise: Promise<ImportRunOutcome>;
  done: boolean;
}

/** The hand-offs of one page client over `source` (its local operations). */
export function createHandOffs(source: HandOffSource): HandOffs {
  const deliveries = new Map<string, Delivery>();
  const sleepers = new Set<() => void>();
  let closed = false;
  const wakeAll = (): void => {
    for (const wake of [...sleepers]) wake();
  };
  const target = globalThis as { addEventListener?: (type: string, listener: () => void) => void; removeEventListener?: (type: string, listener: () => void) => void };
  target.addEventListener?.('online', wakeAll);

  /** Resolves after `ms`, when the page comes back online, or when the hand-offs close. */
  const pauseOrOnline = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  const deliver = async (runId: string, archiveId: string, archive: Uint8Array, backend: HandOffBackend): Promise<ImportRunOutcome> => {
    let retryMs = FIRST_DELIVERY_RETRY_MS;
    while (!closed) {
      if (isOffline()) {
        await pauseOrOnline(LONGEST_DELIVERY_RETRY_MS);
        continue;
      }
      try {
        const outcome = await backend.importRun(archive);
        // Not confirmed (the worker closed, ...): a reload delivers it again, which the backend answers once.
        await source.confirmHandOff(runId, archiveId).catch(() => undefined);
        return outcome;
      } catch (e) {
        // The HTTP client already sent it again a few times: the backend is away, or the page offline.
        if (closed) break;
        if (!isTaqubaError(e, 'STORE_UNAVAILABLE')) throw e;
      }
      await pauseOrOnline(retryMs);
      retryMs = Math.min(retryMs * 2, LONGEST_DELIVERY_RETRY_MS);
    }
    throw new ClosedError(`the client closed before the hand-off was delivered; resumeHandOffs delivers it later. runId=${runId}`, { reason: 'closed', runId, archiveId });
  };

  const follow = (runId: string, archiveId: string, archive: Uint8Array, backend: HandOffBackend): HandedOffRun => {
    const key = `${backend.url}\n${runId}\n${archiveId}`;
    let delivery = deliveries.get(key);
    if (delivery === undefined) {
      const promise = deliver(runId, archiveId, archive, backend);
      const started: Delivery = { runId, archiveId, backend, promise, done: false };
      delivery = started;
      deliveries.set(key, started);
      // Observed here: a caller that never asks for `delivered` still has the hand-off retried, without an unhandled rejection.
      promise.then(
        () => (started.done = true),
        () => undefined,
      ).finally(() => deliveries.delete(key));
    }
    const { promise } = delivery;
    const settled = delivery;
    return {
      runId,
      archiveId,
      to: backend.url,
      delivered: promise,
      isDelivered: () => settled.done,
      status: async () => (settled.done ? backend.status(runId) : null),
      async result(options = {}) {
        const { signal } = options;
        if (!settled.done) {
          await new Promise<void>((resolve, reject) => {
            const abort = (): void => reject(new TaqubaError('CANCELLED', `stopped waiting for the hand-off's delivery. runId=${runId}`, { details: { runId } }));
            if (signal?.aborted) return abort();
            signal?.addEventListener('abort', abort, { once: true });
            promise.then(
              () => resolve(),
              (e: unknown) => reject(e),
            ).finally(() => signal?.removeEventListener('abort', abort));
          });
        }
        return backend.result(runId, signal === undefined ? {} : { signal });
      },
      subscribe: (listener, options = {}) => backend.subscribe(listener, { runId, ...(options.onError === undefined ? {} : { onError: options.onError }) }),
      events: (options = {}) => backend.events({ runId, ...(options.signal === undefined ? {} : { signal: options.signal }) }),
    };
  };

  /** The hand-off export, asked again while the run's step runs (or the run moves, or waits for a slot). */
  const exportForHandOff = async (runId: string, to: string, options: HandOffOptions): Promise<Uint8Array> => {
    // The runtime checks the keys (INVALID_ARGUMENT naming the bad one).
    const exportOptions: WireExportRunOptions = { handOff: true, to, ...(options.kvKeys === undefined ? {} : { kvKeys: options.kvKeys }) };
    let retryMs = FIRST_EXPORT_RETRY_MS;
    for (;;) {
      if (options.signal?.aborted) throw cancelled(runId);
      if (closed) throw new ClosedError('the workflow client is closed', { reason: 'closed' });
      try {
        return await source.exportRun(runId, exportOptions);
      } catch (e) {
        if (!isTaqubaError(e, 'CONFLICT') || !TRANSIENT_EXPORT_REASONS.has(e.details['reason'])) throw e;
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', wake);
          resolve();
        };
        const timer = setTimeout(wake, retryMs);
        options.signal?.addEventListener('abort', wake, { once: true });
      });
      retryMs = Math.min(retryMs * 2, LONGEST_EXPORT_RETRY_MS);
    }
  };

  return {
    async handOff(runId, backend, options = {}) {
      validateRunId(runId);
      checkBackend(backend);
      if (typeof options !== 'object' || options === null) throw new InvalidArgumentError(`handOff options must be an object. options=${show(options)}`, { reason: 'invalid_options' });
      const archive = await exportForHandOff(runId, backend.url, options);
      const summary = await describeRunArchive(archive);
      // A run moved earlier answers the archive it left with: delivering it elsewhere would run it twice.
      if (summary.to !== backend.url) {
        throw new ConflictError(`the run was handed off elsewhere already; it continues there. runId=${runId} movedTo=${summary.to ?? 'none'} backend=${backend.url}`, {
          reason: 'handed_off_elsewhere',
          runId,
          movedTo: summary.to,
        });
      }
      return follow(runId, summary.archiveId, archive, backend);
    },

    async resumeHandOffs(backend) {
      checkBackend(backend);
      const resumed: HandedOffRun[] = [];
      let cursor: Uint8Array | undefined;
      do {
        const page = await source.listMovedRuns({ undelivered: true, ...(cursor === undefined ? {} : { cursor }) });
        for (const moved of page.runs) {
          if (moved.movedTo !== backend.url) continue;
          let archive: Uint8Array;
          try {
            archive = await source.exportRun(moved.runId, { handOff: true, to: backend.url });
          } catch (e) {
            // The kept archive was swept with the run's memo entries: nothing left to deliver from here.
            if (isTaqubaError(e, 'NOT_FOUND')) continue;
            throw e;
          }
          resumed.push(follow(moved.runId, moved.archiveId, archive, backend));
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return resumed;
    },

    close() {
      closed = true;
      target.removeEventListener?.('online', wakeAll);
      wakeAll();
    },
  };
}
