/**
 * Reads of a writer that a newer one took over: the newer writer collects the tables it no
 * longer needs, so a read of the older writer can find one of its tables gone. That read is
 * fenced, and says so (FENCED); with no newer writer, the NOT_FOUND naming the table stands (it
 * is damage).
 */
import { FencedError, isTaqubaError } from '../../errors.js';
import type { KvEntry } from '../types.js';
import type { WriterState } from '../writer-state.js';

/**
 * A read that found one of our tables gone: a newer writer took the store over and collected
 * it (we are fenced, and say so), or it is damage (the NOT_FOUND naming the table stands).
 */
export async function tableGone(state: WriterState, e: unknown): Promise<never> {
  // By epoch, not by manifest id: a manifest past ours may be our own publish still in flight.
  if (isTaqubaError(e, 'NOT_FOUND') && ((await state.manifests.latest().catch(() => undefined))?.data.epoch ?? 0) > state.epoch) {
    throw new FencedError(`a newer writer took the store over and collected a table this read needed. epoch=${state.epoch}`, { epoch: state.epoch });
  }
  throw e;
}

/** `entries` with `tableGone` on a failed step (a thin wrapper: scans are the hot read path). */
export function guardTables(state: WriterState, entries: AsyncIterable<KvEntry>): AsyncIterable<KvEntry> {
  const onError = (e: unknown): Promise<never> => tableGone(state, e);
  return {
    [Symbol.asyncIterator]() {
      const it = entries[Symbol.asyncIterator]();
      return {
        next: () => it.next().catch(onError),
        return: async (value?: unknown) => (it.return ? it.return(value) : { done: true as const, value: undefined }),
      };
    },
  };
}
