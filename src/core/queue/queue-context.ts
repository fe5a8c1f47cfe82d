/**
 * The state one open `Queue` shares between its modules. Only the facade builds it; no entry point
 * exports it.
 */
import type { Clock } from '../clock.js';
import { ClosedError } from '../errors.js';
import type { KvDb } from '../kv/kv-db.js';
import type { LogSink } from '../logger.js';
import type { ClaimCursor } from './transitions/claim-cursor.js';
import { MAX_WAKEUPS_PER_BATCH } from './constants.js';
import type { JobIdGenerator } from './records/job-id.js';
import type { CancelTokens, LeaseRegistry } from './leases/lease-registry.js';
import type { Broadcast, QueueNotifiers } from './workers/notifier.js';
import type { PayloadOffload } from './storage/payload-offload.js';
import type { QueueConfigs } from './queue-options.js';

export interface QueueContext {
  readonly db: KvDb;
  readonly path: string;
  readonly clock: Clock;
  readonly configs: QueueConfigs;
  readonly ids: JobIdGenerator;
  readonly leases: LeaseRegistry;
  readonly cancelTokens: CancelTokens;
  readonly cursor: ClaimCursor;
  readonly notifiers: QueueNotifiers;
  readonly completion: Broadcast;
  readonly payloads: PayloadOffload;
  readonly logger: LogSink;
  /** A token unique to one claim within this handle. */
  nextToken(): number;
  /** Throws CLOSED once the handle is closed. */
  checkOpen(): void;
}

/** After a commit that made `count` Pending keys of `queue` live, the smallest being `minKey`. */
export function notePendingInserts(ctx: QueueContext, queue: string, minKey: Uint8Array, count = 1): void {
  ctx.cursor.noteInserts(queue, minKey);
  const notify = ctx.notifiers.get(queue);
  for (let i = 0; i < Math.min(count, MAX_WAKEUPS_PER_BATCH); i++) notify.notifyOne();
}

export function closedError(path: string): ClosedError {
  return new ClosedError(`queue is closed. path=${path}`, { path, reason: 'closed' });
}
