/**
 * The correlation keys of workflow functions' signals, `<runId>#<name>`: made and read here only.
 */
import { isRunId } from '../validation.js';

/**
 * The correlation key of signal `name` of run `runId` (what `runtime.signal(runId, name, value)`
 * sends to; the CLI's `taquba signal <runId>#<name> <text>` too). The run id before the `#` is
 * what a cluster routes a signal by, so the signal reaches the shard of the run.
 */
export const functionSignalKey = (runId: string, name: string): string => `${runId}#${name}`;

/** The run a correlation key `<runId>#<name>` is a signal of; undefined for a key of another shape. */
export function runOfFunctionSignalKey(correlationKey: string): string | undefined {
  const hash = correlationKey.indexOf('#');
  const runId = correlationKey.slice(0, hash);
  return hash > 0 && isRunId(runId) ? runId : undefined;
}
