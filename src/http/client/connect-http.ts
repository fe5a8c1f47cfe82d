/**
 * `connectHttp`: the worker client's typed API for a store served over HTTP (`serveHttp`), in a
 * page or in Node (global fetch). The operations are the page client's, derived from the core's
 * operation list (browser/remote-operations.ts); workflow functions (`start`, `workflowRun`,
 * `signal(runId, name, value)`) and typed jobs are the page client's own modules over these calls.
 *
 * Sent again after a lost answer: every call that may be (`isResendable`): reads, commands (each
 * call draws one command id and sends it every time, so the server applies it once) and the writes
 * the list marks harmless to repeat. A job submission without an idempotency key is never resent.
 */
import { pushStream } from '../../core/push-stream.js';
import { ClosedError, InvalidArgumentError, StoreUnavailableError } from '../../core/errors.js';
import { systemClock } from '../../core/clock.js';
import { show } from '../../core/show.js';
import { isCommand, isResendable } from '../../core/operations/operation-list.js';
import type { FinishedRunView, JobSubmission, OperationName, WireBatchSubmitOptions, WireJobOutcome } from '../../core/operations/operations.js';
import { createRunIdGenerator, type RunSpec, type RunStatus, type SignalOutcome } from '../../core/workflow/index.js';
import { newCommandId } from '../../core/workflow/commands/ledger.js';
import { awaitInChunks, WAIT_CHUNK_MS } from '../../browser/chunked-wait.js';
import { createJobsClient, type JobsClient } from '../../browser/job-client.js';
import type { HostEvent } from '../../browser/protocol.js';
import { listedOperations, toWireSpec, type EventFilter, type RemoteOperations } from '../../browser/remote-operations.js';
import { createWorkflowClient, type WorkflowFunctionsClient } from '../../browser/workflow-client.js';
import { encodeBody, EVENTS_PATH, MSGPACK, OPERATIONS_PATH, pause, type HttpRunEvent } from '../wire.js';
import { answerOf, NoAnswer } from './answers.js';
import { followRunEvents } from './event-stream.js';

export interface ConnectHttpOptions {
  /** Headers of every request (an `authorization` the server's `authenticate` hook checks). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch to use. Default: the global one. */
  readonly fetch?: typeof fetch;
  /**
   * How many times a call is sent again when no answer came (a network failure, a gateway's
   * 502/503/504, a server closing), for the calls that may be sent again. Default 3.
   */
  readonly retries?: number;
}

/** The run whose events a subscription delivers. */
export interface HttpEventFilter {
  readonly runId: string;
}

/** A store's operations over HTTP (`connectHttp`): the worker client's run operations, workflow functions and typed jobs. */
export interface HttpWorkflowClient extends RemoteOperations, WorkflowFunctionsClient {
  /** The server's URL, as resolved (base path included). */
  readonly url: string;
  /** Typed jobs the server's host runs (`createRuntimeHost({ jobs })`), as the worker client's `client.jobs`. */
  readonly jobs: JobsClient;
  /**
   * Calls `listener` with the run's events from now on: `run-status` when the server sees its
   * state change, then `terminal` (also for a run that ended before, while its outcome is kept),
   * after which the subscription ends. Reconnects after a dropped connection; `onError` hears a
   * refusal (INVALID_ARGUMENT for a bad run id, STORE_PERMISSION when not authenticated), which
   * ends it. Returns the unsubscribe.
   */
  subscribe(listener: (event: HttpRunEvent) => void, filter: HttpEventFilter & { readonly onError?: (error: unknown) => void }): () => void;
  /** The run's events (see `subscribe`) as an async iterator: ends after `terminal`, when `signal` aborts or the client closes; throws a refusal. */
  events(filter: HttpEventFilter & { readonly signal?: AbortSignal }): AsyncIterableIterator<HttpRunEvent>;
  /** Aborts every request and event stream; calls still pending reject with CLOSED, later ones too. Nothing changes on the server. */
  close(): Promise<void>;
}

const DEFAULT_RETRIES = 3;
const FIRST_RETRY_MS = 100;
const LONGEST_RETRY_MS = 2_000;

/** INVALID_ARGUMENT (`invalid_url`) unless `url` is an http(s) URL (relative to the page, in a page). */
function baseUrlOf(url: unknown): string {
  const page = (globalThis as { location?: { href?: string } }).location?.href;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' || url instanceof URL ? new URL(url, page) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new InvalidArgumentError(`connectHttp takes the http(s) URL of a server (serveHttp). url=${show(url)}`, { reason: 'invalid_url' });
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

function checkOptions(options: ConnectHttpOptions): void {
  const { headers, fetch: fetchOption, retries } = options;
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Object.values(headers).some((v) => typeof v !== 'string'))) {
    throw new InvalidArgumentError(`headers must be an object of strings. headers=${show(headers)}`, { reason: 'invalid_option', option: 'headers' });
  }
  if (fetchOption !== undefined && typeof fetchOption !== 'function') throw new InvalidArgumentError(`fetch must be a function. fetch=${show(fetchOption)}`, { reason: 'invalid_option', option: 'fetch' });
  if (retries !== undefined && !(Number.isSafeInteger(retries) && retries >= 0)) {
    throw new InvalidArgumentError(`retries must be a non-negative integer. retries=${show(retries)}`, { reason: 'invalid_option', option: 'retries' });
  }
}

/**
 * A client of the store served at `url` (`serveHttp`). No I/O until a call. INVALID_ARGUMENT
 * (`invalid_url`, `invalid_option`) for a bad URL or option.
 * @example
 * const client = connectHttp('https://api.example.com/taquba', { headers: { authorization: `Bearer ${token}` } });
 * const run = await client.start(review, { topic: 'tides' });
 * await client.signal(run.runId, 'approve', true);
 * const summary = await run.result(); // typed by the workflow's output
 */
export function connectHttp(url: string | URL, options: ConnectHttpOptions = {}): HttpWorkflowClient {
  const base = baseUrlOf(url);
  checkOptions(options ?? {});
  const headers = { ...options.headers };
  const userFetch = options.fetch;
  // Called bare, never as a method of another object (a browser's fetch refuses that `this`).
  const fetchOf: typeof fetch = (input, init) => (userFetch ?? globalThis.fetch)(input, init);
  const retries = options.retries ?? DEFAULT_RETRIES;
  const closing = new AbortController();
  const nextBatchId = createRunIdGenerator();
  const streams = new Set<() => void>();
  const closedError = (): ClosedError => new ClosedError('the HTTP client is closed', { reason: 'closed' });

  /** One try: the answer's value, the server's typed error, or `NoAnswer`. */
  const send = async (name: OperationName, body: Uint8Array): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetchOf(`${base}${OPERATIONS_PATH}${name}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': MSGPACK, accept: MSGPACK },
        body: body as Uint8Array<ArrayBuffer>,
        signal: closing.signal,
      });
      return await answerOf(response);
    } catch (e) {
      if (closing.signal.aborted) throw closedError();
      // Network failures (the answer lost, or the request never arrived) are fetch's TypeErrors.
      if (e instanceof TypeError) throw new NoAnswer(new StoreUnavailableError(`the HTTP host did not answer: ${e.message}`, { reason: 'no_answer', operation: name }, e));
      throw e;
    }
  };

  const call = async (name: OperationName, args: readonly unknown[]): Promise<unknown> => {
    if (closing.signal.aborted) throw closedError();
    // One command id for every send of this call: the server applies it once.
    const body = encodeBody({ args, ...(isCommand(name) ? { commandId: newCommandId(systemClock) } : {}) });
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(name, body);
      } catch (e) {
        if (!(e instanceof NoAnswer)) throw e;
        if (!isResendable(name) || attempt >= retries) throw e.error;
        await pause(Math.min(FIRST_RETRY_MS * 2 ** attempt, LONGEST_RETRY_MS), closing.signal);
        if (closing.signal.aborted) throw closedError();
      }
    }
  };

  const subscribe: HttpWorkflowClient['subscribe'] = (listener, filter) => {
    const stop = new AbortController();
    const end = (): void => {
      stop.abort();
      streams.delete(end);
    };
    if (closing.signal.aborted) return end;
    streams.add(end);
    followRunEvents({
      url: `${base}${EVENTS_PATH}?runId=${encodeURIComponent(filter?.runId)}`,
      fetch: fetchOf,
      headers,
      signal: stop.signal,
      onEvent: (event) => {
        try {
          listener(event);
        } catch {
          // A listener's failure stays with it.
        }
      },
    }).then(end, (error: unknown) => {
      end();
      filter.onError?.(error);
    });
    return end;
  };

  const events: HttpWorkflowClient['events'] = (filter) => {
    const stream = pushStream<HttpRunEvent>(() => {
      unsubscribe();
      filter.signal?.removeEventListener('abort', stream.end);
      closing.signal.removeEventListener('abort', stream.end);
    });
    const unsubscribe = subscribe(
      (event) => {
        stream.push(event);
        if (event.type === 'terminal') stream.end();
      },
      { runId: filter.runId, onError: (error) => stream.fail(error) },
    );
    // The client's close ends the stream too.
    if (closing.signal.aborted || filter.signal?.aborted) stream.end();
    else {
      filter.signal?.addEventListener('abort', stream.end, { once: true });
      closing.signal.addEventListener('abort', stream.end, { once: true });
    }
    return stream.iterator;
  };

  const operations = listedOperations(call);
  const sendSignal = (correlationKey: string, payload: Uint8Array): Promise<SignalOutcome> => call('signal', [correlationKey, payload]) as Promise<SignalOutcome>;
  const result = (runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<FinishedRunView> =>
    awaitInChunks(() => call('runWait', [runId, WAIT_CHUNK_MS]) as Promise<FinishedRunView | null>, opts.signal, `the run. runId=${runId}`, { runId });

  // Workflow functions follow a run's outcome: the `terminal` event is the one they know (the worker host's step events are not carried).
  const terminalEvents = (listener: (event: HostEvent) => void, filter?: EventFilter): (() => void) =>
    subscribe((event) => event.type === 'terminal' && listener(event), { runId: filter?.runId as string });
  async function* terminalEventsOf(source: AsyncIterableIterator<HttpRunEvent>): AsyncGenerator<HostEvent, void, undefined> {
    try {
      for await (const event of source) if (event.type === 'terminal') yield event;
    } finally {
      await source.return?.();
    }
  }

  const client: HttpWorkflowClient = {
    ...operations,
    url: base,
    submit: (spec: RunSpec) => call('submit', [typeof spec === 'object' && spec !== null ? toWireSpec(spec) : spec]) as ReturnType<HttpWorkflowClient['submit']>,
    signal: ((keyOrRunId: string, payloadOrName: Uint8Array | string, value?: unknown): Promise<SignalOutcome> =>
      typeof payloadOrName === 'string' ? functions.signalRun(keyOrRunId, payloadOrName, value) : sendSignal(keyOrRunId, payloadOrName)) as HttpWorkflowClient['signal'],
    // A batch id drawn here, so a resend after a lost answer finds the same batch.
    bulkSubmit: (inputs: readonly unknown[], batchOptions: WireBatchSubmitOptions = {}) =>
      call('bulkSubmit', [inputs, typeof batchOptions === 'object' && batchOptions !== null && batchOptions.batchId === undefined ? { ...batchOptions, batchId: nextBatchId() } : batchOptions]) as ReturnType<HttpWorkflowClient['bulkSubmit']>,
    result,
    start: (workflow, input, startOptions) => functions.start(workflow, input, startOptions),
    workflowRun: (workflow, runId) => functions.workflowRun(workflow, runId),
    signalRun: (runId, name, value) => functions.signalRun(runId, name, value),
    jobs: createJobsClient({
      jobSubmit: (name, input, opts) => call('jobSubmit', [name, input, opts]) as Promise<JobSubmission>,
      jobWait: (name, id, waitMs) => call('jobWait', [name, id, waitMs]) as Promise<WireJobOutcome | null>,
      jobFetch: (name, id) => call('jobFetch', [name, id]) as Promise<WireJobOutcome | null>,
      jobStatus: (id) => call('jobStatus', [id]) as Promise<RunStatus | null>,
      jobCancel: (id) => call('jobCancel', [id]) as Promise<boolean>,
    }),
    subscribe,
    events,
    async close() {
      closing.abort();
      for (const end of [...streams]) end();
    },
  };
  // Over the client's own calls (closed with it); the server's runtime checks the workflow on submit.
  const functions = createWorkflowClient({
    submit: (spec) => client.submit(spec),
    result,
    status: (runId) => client.status(runId),
    cancel: (runId) => client.cancel(runId),
    signal: sendSignal,
    subscribe: terminalEvents,
    events: (filter) => terminalEventsOf(events({ runId: filter?.runId as string, ...(filter?.signal === undefined ? {} : { signal: filter.signal }) })),
  });
  return client;
}
