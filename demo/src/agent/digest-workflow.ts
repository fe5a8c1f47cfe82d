/**
 * The daily digest, a scheduled workflow: every morning at 08:00 in this browser's time zone the
 * tab that executes the steps starts it (`serveWorkflowRuntime({ schedules })`), and it counts the
 * agent runs this browser started and the model calls made over the past day. Whichever tab
 * leads fires it, once per morning; a browser closed at 08:00 makes that one firing up when a tab
 * next opens (not one per missed morning). The page and the inspector show its next firing.
 */
import { defineWorkflow, type Schedule } from 'taquba-workflow';
import type { StoreKind } from '../shared/agent-state.js';
import { modelCalls, runsOf } from '../shared/demo-db.js';

export const DIGEST_SCHEDULE = 'daily-digest';
const DAY_MS = 24 * 3600_000;

export interface Digest {
  readonly since: number;
  readonly runs: number;
  readonly modelCalls: number;
}

export const digest = defineWorkflow({
  name: 'daily-digest',
  run: (ctx, input: { readonly store: StoreKind }) =>
    ctx.step('count', async (): Promise<Digest> => {
      const since = Date.now() - DAY_MS;
      const [runs, calls] = await Promise.all([runsOf(input.store), modelCalls(input.store)]);
      return { since, runs: runs.filter((r) => r.createdAt >= since).length, modelCalls: calls.filter((c) => c.at >= since && !c.memoHit).length };
    }),
});

/** This browser's IANA time zone; UTC when it names none the runtime knows. */
function localZone(): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** The digest's schedule for the runtime on `store`. */
export function digestSchedule(store: StoreKind): Schedule<{ readonly store: StoreKind }> {
  return { name: DIGEST_SCHEDULE, cron: '0 8 * * *', timezone: localZone(), start: [digest, { store }] };
}
