/**
 * A runtime's own inbox: how another process (the CLI, a web server beside a worker process)
 * submits, signals, cancels and retries on a store whose writer is alive. The running runtime
 * (`WorkflowRuntime.run`) serves it; `RuntimeClient` sends to it.
 *
 * Objects (on the runtime's object store, beside the engine at the queue's path):
 *   {path}/commands/{q}/inbox/{batch id}     a sender's batch of commands ({q}: the queue name, URI-encoded)
 *   {path}/commands/{q}/replies/{batch id}   the runtime's answers to it
 */
import type { Clock } from '../../clock.js';
import { isTaqubaError } from '../../errors.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { applyInbox, collectOrphanReplies, MAX_BACKOFF_FACTOR, type InboxTarget } from './inbox.js';
import type { CommandTargets } from './run-command.js';
import { queueSegment } from '../keys.js';

/** The inbox of the runtime whose steps go to `queueName`, on the engine at `path`. */
export function runtimeInbox(path: string, queueName: string): InboxTarget {
  const root = `${path}/commands/${queueSegment(queueName)}/`;
  return { inboxPrefix: `${root}inbox/`, repliesPrefix: `${root}replies/`, describe: `the runtime of queue ${queueName} at ${path}`, details: { path, queueName } };
}

export interface InboxServeOptions {
  readonly clock: Clock;
  /** How soon a new batch is seen while commands come; idle polls back off to 8 times this. */
  readonly pollMs: number;
  /** Replies of batches sent longer ago than this are nobody's any more: deleted. */
  readonly orphanAfterMs: number;
  readonly warn: (message: string, details?: unknown) => void;
}

/**
 * Applies the batches of `inbox` to `targets` until `stop` aborts: one listing per poll, backing
 * off while nothing comes (on S3 a listing is the costly request). A failed pass (store error,
 * CLOSED, FENCED) leaves its batches for the next one.
 */
export async function serveInbox(store: ObjectStore, inbox: InboxTarget, targets: CommandTargets, options: InboxServeOptions, stop: AbortSignal): Promise<void> {
  let waitMs = options.pollMs;
  let nextOrphanSweep = options.clock.now() + options.orphanAfterMs;
  while (!stop.aborted) {
    let found = 0;
    try {
      const keys: string[] = [];
      for await (const info of store.list(inbox.inboxPrefix)) keys.push(info.key);
      found = keys.length;
      if (found > 0) await applyInbox(store, inbox, keys, targets, stop);
      if (options.clock.now() >= nextOrphanSweep) {
        nextOrphanSweep = options.clock.now() + options.orphanAfterMs;
        await collectOrphanReplies(store, inbox, options.clock.now() - options.orphanAfterMs);
      }
    } catch (e) {
      if (stop.aborted) return;
      if (!isTaqubaError(e, 'CLOSED')) options.warn('command inbox pass failed; retrying', { inbox: inbox.inboxPrefix, error: (e as Error)?.message });
    }
    waitMs = found > 0 ? options.pollMs : Math.min(Math.round(waitMs * 1.5), options.pollMs * MAX_BACKOFF_FACTOR);
    try {
      await options.clock.sleep(waitMs, stop);
    } catch {
      return;
    }
  }
}
