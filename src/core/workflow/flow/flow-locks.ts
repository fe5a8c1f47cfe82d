/**
 * What ties a run to its flow-control keys, and the locks that serialise each key.
 *
 * Every step job of a run admitted under a concurrency key, or started by a debounce window,
 * carries the key in a reserved header (copied from step to step, like the run id), so the run's
 * ending knows what to release without a read. Plain runs carry neither header and pay nothing.
 *
 * A key's state is read, decided on and committed under the key's lock: a submission (admit or
 * queue; schedule; open or join a window), an ending (hand the slot on; close the window) and the
 * cancel of a waiting run. The locks belong to the `Queue` handle (the store's single writer), as
 * the signal locks do, so every runtime on the handle takes the same one. A flow lock is always
 * the innermost lock held: nothing waits for another lock while holding one.
 */
import { perHandle } from '../handle-state.js';
import { KeyedMutex } from '../../keyed-mutex.js';
import type { Queue } from '../../queue/index.js';

/** Reserved header of every step job of a run holding a concurrency slot: the key. */
export const HEADER_CONCURRENCY_KEY = 'workflow.concurrency_key';
/** Reserved header of every step job of a run a debounce window started: the key. */
export const HEADER_DEBOUNCE_KEY = 'workflow.debounce_key';

/** The reserved flow headers of a run's step job (what its next step's job carries too, and what its ending releases). */
export type FlowHeaders = Readonly<Record<string, string>>;

/** The flow headers among a step job's headers; undefined for a run without flow control. */
export function flowHeadersOf(headers: Readonly<Record<string, string>> | undefined): FlowHeaders | undefined {
  const concurrency = headers?.[HEADER_CONCURRENCY_KEY];
  const debounce = headers?.[HEADER_DEBOUNCE_KEY];
  if (concurrency === undefined && debounce === undefined) return undefined;
  return {
    ...(concurrency === undefined ? {} : { [HEADER_CONCURRENCY_KEY]: concurrency }),
    ...(debounce === undefined ? {} : { [HEADER_DEBOUNCE_KEY]: debounce }),
  };
}

/** Which state a lock guards: a concurrency key, a rate-limit key or a debounce key. */
export type FlowLockKind = 'concurrency' | 'rate' | 'debounce';

const flowLocksOf = perHandle(() => new KeyedMutex());

/** Runs `fn` holding the lock of `key` of `kind` on the runtime `queueName` of `queue`'s handle. */
export function withFlowLock<T>(queue: Queue, queueName: string, kind: FlowLockKind, key: string, fn: () => Promise<T>): Promise<T> {
  return flowLocksOf(queue).run(`${kind}\u0000${queueName}\u0000${key}`, fn);
}
