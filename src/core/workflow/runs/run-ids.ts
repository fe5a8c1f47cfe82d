/** Run ids drawn ahead of submission (the browser host gives every forwarded submission one). */
import { systemClock, type Clock } from '../../clock.js';
import { defaultRandom } from '../../queue/queue-options.js';
import { JobIdGenerator } from '../../queue/records/job-id.js';

/**
 * A source of run ids of the kind `submit` draws for a spec without one: ULIDs (26 characters of
 * Crockford base32, valid run ids) that sort in generation order, strictly increasing per
 * generator. Pure: touches the clock and the random source only when called.
 * @example
 * const nextRunId = createRunIdGenerator();
 * await runtime.submit({ runId: nextRunId(), input }); // safe to send again with the same id
 */
export function createRunIdGenerator(clock: Clock = systemClock, random: (bytes: Uint8Array) => void = defaultRandom): () => string {
  const ids = new JobIdGenerator(clock, random);
  return () => ids.next();
}
