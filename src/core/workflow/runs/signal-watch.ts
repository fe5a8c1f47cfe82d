/**
 * Which runs are known, in this process, to have no buffered signal: a workflow function's ending
 * deletes the signals buffered for its run, and looking for them is a prefix scan that finds
 * nothing for most runs yet costs a seek in every table. A run submitted through this queue handle
 * is watched from before its submission commits; every signal buffered through the handle for a
 * watched run marks it first (by the run id in front of the key's `#`, whichever runtime sends it).
 * This handle's process is the store's only writer, so a watched run without a mark has none: its
 * ending may skip the scan. A run not watched (submitted by an earlier process, created as a child
 * or by an import, or past the cap) is scanned as before.
 *
 * Not seen: a signal buffered under `<runId>#<name>` before that run was submitted. A function
 * runtime answers such a signal `run-not-active`; only a StepRunner runtime on the same store,
 * whose correlation keys are the caller's, would buffer it. Its run's ending then leaves it (the
 * run may still have taken it by that name).
 */
import { runOfFunctionSignalKey } from '../functions/signal-key.js';
import { perHandle } from '../handle-state.js';

/** Runs watched at once at most; past it a submission is not watched (its ending scans). */
const MAX_WATCHED = 100_000;

export class SignalWatch {
  /** Watched runs: true once a signal was buffered for it. */
  private readonly runs = new Map<string, boolean>();

  /** Starts watching `runId` before its submission commits; false when it was not (already watched, or the cap). */
  watch(runId: string): boolean {
    if (this.runs.has(runId) || this.runs.size >= MAX_WATCHED) return false;
    this.runs.set(runId, false);
    return true;
  }

  /** A submission that `watch` answered true for did not create the run. */
  unwatch(runId: string): void {
    this.runs.delete(runId);
  }

  /** A signal of `correlationKey` is about to be buffered: its run, if watched, has one now. */
  buffering(correlationKey: string): void {
    const runId = runOfFunctionSignalKey(correlationKey);
    if (runId !== undefined && this.runs.has(runId)) this.runs.set(runId, true);
  }

  /** The run is ending: whether it is known to have no buffered signal. Stops watching it. */
  ending(runId: string): boolean {
    const signalled = this.runs.get(runId);
    this.runs.delete(runId);
    return signalled === false;
  }
}

export const signalWatchOf = perHandle(() => new SignalWatch());
