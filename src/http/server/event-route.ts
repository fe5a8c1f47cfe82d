/**
 * `GET {base}/events?runId=`: one run's events as server-sent events, built from the operations
 * alone, so any host serves them (a `RuntimeHost` or bare `RuntimeOperations`, whatever runtime
 * answers them): the run's state polled with `status` (a `run-status` event when it changes) and
 * its outcome awaited with `runWait` (the `terminal` event, after which the stream ends). A run
 * not submitted yet is waited for (a client subscribes before it starts a run, so nothing is
 * missed); a late subscriber still gets the outcome while the store keeps it.
 *
 * What a worker host reports besides (`step-started`, `step-finished`, `waiting-for-signal`,
 * `retry-scheduled`, `function-call`) comes from wrapping the runtime's runner when the host is
 * built; a host handed to the server already built has no such wrapper, so those are not carried.
 */
import type { ServerResponse } from 'node:http';
import { InvalidArgumentError } from '../../core/errors.js';
import type { FinishedRunView, RuntimeOperations } from '../../core/operations/operations.js';
import { validateRunId } from '../../core/workflow/validation.js';
import { encodeEventData, EVENT_STREAM, pause, type HttpRunEvent, type RunStatusEvent, type TerminalRunEvent } from '../wire.js';
import { sendError } from './responses.js';

/** How long one outcome wait of the stream lasts before it asks again. */
const OUTCOME_WAIT_MS = 20_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

const TERMINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled']);

export interface EventRouteContext {
  readonly operations: RuntimeOperations;
  /** How often a run's state is read. */
  readonly statusPollMs: number;
  /** The `executor` of terminal events: the server's id. */
  readonly executor: string;
  /** Aborts when the server closes: every stream ends. */
  readonly closing: AbortSignal;
}

/** `promise`, or undefined once `signal` aborts (the promise is then left to settle unheard). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    if (signal.aborted) return resolve(undefined);
    const abandon = (): void => resolve(undefined);
    signal.addEventListener('abort', abandon, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abandon));
  });
}

function terminalEvent(run: FinishedRunView, executor: string): TerminalRunEvent {
  return { type: 'terminal', runId: run.runId, executor, at: run.endedAtMs, status: run.status, result: run.result, error: run.error, finalStep: run.finalStep, headers: { ...run.headers } };
}

/** Sends a `run-status` event each time the run's active state or step changes, until `signal` aborts. */
async function followStatus(runId: string, context: EventRouteContext, send: (event: HttpRunEvent) => void, signal: AbortSignal): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      const view = await unlessAborted(context.operations.status(runId), signal);
      if (view && !TERMINAL_STATES.has(view.state)) {
        const seen = `${view.state}:${view.currentStep}`;
        if (seen !== last) send({ type: 'run-status', runId, at: Date.now(), state: view.state as RunStatusEvent['state'], currentStep: view.currentStep });
        last = seen;
      }
    } catch {
      // A failed read is tried again at the next poll.
    }
    await pause(context.statusPollMs, signal);
  }
}

/** Sends the run's `terminal` event once its outcome is there; resolves then, or when `signal` aborts. */
async function followOutcome(runId: string, context: EventRouteContext, send: (event: HttpRunEvent) => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const asked = Date.now();
    try {
      const run = await unlessAborted(context.operations.runWait(runId, OUTCOME_WAIT_MS), signal);
      if (run) return send(terminalEvent(run, context.executor));
    } catch {
      // NOT_FOUND: the run is not submitted yet; anything else may pass. Asked again after a poll.
      await pause(context.statusPollMs, signal);
      continue;
    }
    // A stopping runtime answers its waits (null) at once: no busy loop meanwhile.
    if (Date.now() - asked < context.statusPollMs) await pause(context.statusPollMs, signal);
  }
}

export function serveRunEvents(res: ServerResponse, url: URL, context: EventRouteContext): void {
  const runId = url.searchParams.get('runId');
  try {
    if (runId === null) throw new InvalidArgumentError('the event stream is of one run: pass ?runId=', { reason: 'invalid_run_id' });
    validateRunId(runId);
  } catch (e) {
    return sendError(res, e);
  }
  res.writeHead(200, { 'content-type': EVENT_STREAM, 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  // Sent at once, so the client sees the stream open before the first event.
  res.write(': run events\n\n');
  const stop = new AbortController();
  const end = (): void => stop.abort();
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  // The response closes when the client goes away (or the stream ended).
  res.once('close', end);
  context.closing.addEventListener('abort', end, { once: true });
  stop.signal.addEventListener('abort', () => {
    clearInterval(keepAlive);
    context.closing.removeEventListener('abort', end);
    res.end();
  });
  const send = (event: HttpRunEvent): void => {
    if (!stop.signal.aborted) res.write(`data: ${encodeEventData(event)}\n\n`);
  };
  void followStatus(runId, context, send, stop.signal);
  void followOutcome(runId, context, send, stop.signal).then(end);
}
