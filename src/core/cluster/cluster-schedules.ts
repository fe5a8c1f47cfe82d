/**
 * Cron schedules in a cluster (`openCluster({ schedules })`). Each schedule lives on one shard,
 * the shard its name hashes to (`scheduleShard`, CRC-32C as for a run id): its record is in that
 * shard's engine, and only the shard's owner fires it, through the scheduler of its runtime host
 * (runtime-host.ts), so a tick fires once across members. A new owner opens the engine (fencing
 * the old one) and goes on from the recorded firing; the firing's command id keeps a retried
 * firing to one run. Hashing spreads the schedules (and their firings' first steps) over the
 * shards instead of loading shard 0 with all of them.
 *
 * A firing's run must live in the shard the cluster routes its run id to (`result`, `readStatus`,
 * `cancel` from any member), and `cron-{name}-{fireMs}` hashes anywhere: `firingRunIdOn` keeps
 * that id when it lands on the schedule's shard, else appends `_{k}` with the least k that does.
 * The id is fixed per fire time (a firing retried after a failover gets the same one); no plain
 * id ends in `_{digits}` after the fire time, so none collides.
 */
import { InternalError, InvalidArgumentError } from '../errors.js';
import { firingRunId } from '../cron/firing.js';
import { checkHostSchedules, type PlannedHost } from '../cron/host-schedules.js';
import type { AnySchedule } from '../cron/index.js';
import { shardOfText } from './layout.js';

/** The shard a schedule lives on. */
export function scheduleShard(name: string, shards: number): number {
  return shardOfText(name, shards);
}

/**
 * Far more tries than any shard count needs: a suffix misses a given shard with probability
 * 1 - 1/shards, so 10^7 tries miss with probability below e^-1000 at 9999 shards. Seven digits
 * keep the longest id (a 100-character name) within the 128 a run id may have.
 */
const MAX_SUFFIX = 9_999_999;

/** The run ids of the firings of schedules on `shard`: each one routed to that shard. */
export function firingRunIdOn(shard: number, shards: number): (name: string, fireMs: number) => string {
  return (name, fireMs) => {
    const base = firingRunId(name, fireMs);
    if (shardOfText(base, shards) === shard) return base;
    for (let k = 1; k <= MAX_SUFFIX; k++) {
      const id = `${base}_${k}`;
      if (shardOfText(id, shards) === shard) return id;
    }
    throw new InternalError(`no firing run id routes to shard ${shard}. schedule=${name}`);
  };
}

/**
 * Checks the `schedules` option as each shard's scheduler will resolve it. Throws what
 * `checkHostSchedules` throws, and INVALID_ARGUMENT (reason `invalid_schedule`) for an `enqueue`
 * target: a cluster runs no worker of plain queue jobs (its shards' queues are its own).
 */
export function checkClusterSchedules(schedules: unknown, plan: PlannedHost): readonly AnySchedule[] {
  for (const resolved of checkHostSchedules(schedules, plan)) {
    if (resolved.target.type === 'enqueue') {
      throw new InvalidArgumentError(`invalid schedule: a cluster runs no plain queue jobs; schedule a workflow start, a run or a typed job. schedule=${resolved.name}`, {
        reason: 'invalid_schedule',
        schedule: resolved.name,
        key: 'enqueue',
      });
    }
  }
  return schedules as readonly AnySchedule[];
}
