/**
 * The page's side of a waiting operation (`runWait`, `jobWait`): it asks in chunks, because each
 * call answers null after its wait (or when its leader stops), so a wait follows the leader from
 * tab to tab. Stops with CANCELLED when the caller's signal aborts; the awaited work goes on.
 */
import { TaqubaError } from '../core/errors.js';

/** How long one waiting call waits before the page asks again. */
export const WAIT_CHUNK_MS = 20_000;

/**
 * Calls `ask` until it answers something other than null. `what` names the awaited thing in the
 * CANCELLED message (`stopped waiting for <what>`) and its details.
 */
export async function awaitInChunks<T>(ask: () => Promise<T | null>, signal: AbortSignal | undefined, what: string, details: Record<string, string> = {}): Promise<T> {
  const cancelled = (): TaqubaError => new TaqubaError('CANCELLED', `stopped waiting for ${what}`, { details });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(cancelled());
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  try {
    for (;;) {
      if (signal?.aborted) throw cancelled();
      const answer = await Promise.race([ask(), aborted]);
      if (answer !== null) return answer;
    }
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
