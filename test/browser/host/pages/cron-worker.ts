/**
 * The schedules test's worker: `serveWorkflowRuntime({ schedules })` with a minutely schedule that
 * starts `test.tick`. Cron time runs `speed` times faster than real time from a start every tab
 * shares (the worker's name, JSON `CronWorkerConfig`), so the tabs agree on the time and a minute
 * passes in seconds; the runtime itself keeps real time.
 */
import type { Clock } from '../../../../src/core/clock.js';
import { systemClock } from '../../../../src/core/clock.js';
import { serveWorkflowRuntime } from '../../../../src/browser/worker.js';
import { tick } from './cron-workflows.js';

export interface CronWorkerConfig {
  readonly name: string;
  readonly hostId: string;
  /** Cron time at `realStartMs`. */
  readonly cronStartMs: number;
  readonly realStartMs: number;
  readonly speed: number;
}

const config = JSON.parse(self.name) as CronWorkerConfig;

const fastClock: Clock = {
  now: () => config.cronStartMs + (Date.now() - config.realStartMs) * config.speed,
  sleep: (ms, signal) => systemClock.sleep(ms / config.speed, signal),
};

serveWorkflowRuntime({
  store: 'indexeddb',
  name: config.name,
  hostId: config.hostId,
  workflows: [tick],
  schedules: [{ name: 'tick', cron: '* * * * *', timezone: 'Europe/Paris', start: [tick, 'tock'] }],
  cronOptions: { clock: fastClock },
  runtimeOptions: { pollIntervalMs: 50 },
});
