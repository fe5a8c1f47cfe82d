/** The background form of a `run(signal)` loop, shared by the runtime and the bulk driver. */

/** A running worker started by `spawn`. */
export interface RunnerHandle {
  /** Stops claiming, waits for in-flight steps and background tasks. Resolves like `done`. */
  shutdown(): Promise<void>;
  /** Settles when the worker stops: resolves after a shutdown, rejects if the loop failed. */
  readonly done: Promise<void>;
}

/** Starts `run` with a signal that `shutdown()` (or the caller's `signal`) aborts. */
export function spawnRunner(run: (signal: AbortSignal) => Promise<void>, signal?: AbortSignal): RunnerHandle {
  const stop = new AbortController();
  if (signal?.aborted) stop.abort();
  signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const done = run(stop.signal);
  // Observed here so an unawaited failure is not reported as unhandled; callers see it via done/shutdown.
  done.catch(() => undefined);
  return {
    done,
    shutdown: async () => {
      stop.abort();
      await done;
    },
  };
}
