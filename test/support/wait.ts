/**
 * Waiting for something to happen instead of sleeping a guessed time: `waitFor` polls a probe
 * until it answers, and fails after a deadline with a message naming what it waited for. Plain
 * timers only, so browser test files can use it too.
 */

export interface WaitForOptions {
  /** Give up after this long (real time). Default 10 s: generous for a loaded 2-core machine. */
  readonly timeoutMs?: number;
  /** Pause between probes. Default 5 ms. */
  readonly intervalMs?: number;
}

/**
 * Calls `probe` until it returns a value other than `undefined`, `null` or `false` (or a promise
 * of one), and resolves with that value. A probe that throws counts as not yet; its last error
 * is named in the timeout failure. Rejects after `timeoutMs` with
 * `timed out after N ms waiting for <what>`.
 */
export async function waitFor<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string, options: WaitForOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 5;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? '' : ` (last probe threw: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`, lastError === undefined ? undefined : { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
