/**
 * One simulation run: one integer seed drives the configuration, every client action, every
 * store event delivered (which pending call lands or answers next, which timer fires), every
 * injected failure, crash and damage. A failing seed reproduces exactly (see determinism.ts).
 *
 * A run is `steps` steps, each either a client action (actions.ts) or one delivered event, then
 * a wind-down (live writers close or crash, the world turns calm and quiet) and the checks
 * (final.ts).
 */
import type { SimConfig } from './context.js';
import type { Violation } from './checker.js';
import { installDeterminism, settle } from './determinism.js';
import { chooseAction } from './actions.js';
import { finish } from './final.js';
import { QueueScenario } from './queue-scenario.js';
import type { CommitRecord } from './history.js';
import { Prng, labelHash } from './prng.js';
import { SimRun } from './sim-run.js';

export interface RunOptions {
  /** Override parts of the seed's configuration (shrinking, or the CLI). */
  readonly overrides?: Partial<SimConfig>;
  /** Steps whose action is replaced by a delivery (shrinking). */
  readonly skip?: ReadonlySet<number>;
  readonly damage?: boolean;
  /** 'kv' (default): KvDb writers and readers; 'queue': Queue handles enqueuing, claiming, acking. */
  readonly scenario?: 'kv' | 'queue';
}

/** What a run does at an action step and at its end. */
export interface Scenario {
  act(r: Prng): string | undefined;
  finish(): Promise<void>;
}

export interface SimStats {
  steps: number;
  actions: number;
  deliveries: number;
  commits: number;
  acknowledged: number;
  opens: number;
  crashes: number;
  machineCrashes: number;
  damage: number;
}

export interface SimResult {
  readonly seed: number;
  readonly config: SimConfig;
  readonly violation: Violation | undefined;
  /** Damage runs: the CORRUPT_DATA that reported the damage. */
  readonly detected: string | undefined;
  readonly inconclusive: boolean;
  readonly trace: readonly string[];
  /** Steps at which an action ran (what shrinking may remove). */
  readonly actionSteps: readonly number[];
  readonly stats: SimStats;
  /** What this run was asked to change (to replay it: see formatFailure). */
  readonly options: RunOptions;
}

const CONFIG = labelHash('config');
const STEP = labelHash('step');
const RANDOM = labelHash('random');

/** The configuration a seed picks (varied per seed so runs cover tiny to large memtables, faults or not, ...). */
export function configFor(seed: number, damage = false): SimConfig {
  const r = Prng.of(seed, CONFIG);
  return {
    steps: r.int(150, 700),
    actionRate: r.pick([0.2, 0.3, 0.4]),
    maxWriters: r.int(1, 3),
    readers: r.chance(0.5),
    failRate: r.pick([0, 0, 0.01, 0.03]),
    appendLogs: r.chance(0.8),
    lock: r.chance(0.25),
    zombies: r.chance(0.3),
    crashes: true,
    machineCrashes: r.chance(0.3),
    pauses: r.chance(0.4),
    txns: r.chance(0.5),
    damage,
    keys: r.pick([4, 8, 16, 40]),
    maxPad: r.pick([8, 64, 300]),
    // Drawn last, so the fields above stay what each seed drew before seal flags existed.
    sealFlags: r.chance(0.5),
  };
}

export async function runSimulation(seed: number, options: RunOptions = {}): Promise<SimResult> {
  const config: SimConfig = { ...configFor(seed, options.damage ?? false), ...options.overrides };
  const run = new SimRun(seed, config);
  const scenario: Scenario = options.scenario === 'queue' ? new QueueScenario(run) : { act: (r) => chooseAction(run, r), finish: () => finish(run) };
  const uninstall = installDeterminism(run.time, Prng.of(seed, RANDOM));
  const actionSteps: number[] = [];
  try {
    for (run.step = 0; run.step < config.steps && !run.violation; run.step++) {
      const r = Prng.of(seed, STEP, run.step);
      const wantsAction = r.chance(config.actionRate) && !options.skip?.has(run.step);
      const line = wantsAction ? scenario.act(r) : undefined;
      if (line !== undefined) {
        actionSteps.push(run.step);
        run.stats.actions++;
        run.trace(line);
      } else run.deliver(r);
      await settle();
    }
    if (!run.violation) await scenario.finish();
  } catch (e) {
    run.fail('simulator-error', (e as Error)?.stack ?? String(e));
  } finally {
    run.world.scheduler.clear();
    run.time.clear();
    uninstall();
  }
  if (options.scenario !== 'queue') {
    const commits = run.writers.flatMap((w) => w.commits);
    run.stats.commits = commits.length;
    run.stats.acknowledged = commits.filter((c: CommitRecord) => c.covered || (c.durable && c.outcome.kind === 'ok')).length;
  }
  run.stats.steps = run.step;
  return { seed, config, violation: run.violation, detected: run.detected, inconclusive: run.inconclusive, trace: run.lines, actionSteps, stats: run.stats, options };
}
