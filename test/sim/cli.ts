/**
 * npm run simulate -- [--seeds N] [--from S] [--seed S] [--verbose] [--damage] [--no-shrink]
 *                     [--steps N] [--time-limit SECONDS] [--shrink-seconds SECONDS]
 *                     [--set key=value ...]   (override a SimConfig field for every seed)
 *                     [--skip 3,17,...]       (steps whose action is dropped: replays a shrunk run)
 *                     [--queue]               (the queue scenario instead of the KV engine one)
 *
 * Runs seeds from..from+N-1 (or the one --seed), prints seeds/s and a summary, and for each
 * failing seed its invariant, message and the trace of the smallest run (shrink.ts) that still
 * fails the same way. Exit code 1 when any seed fails. A failing seed reproduces exactly:
 * `npm run simulate -- --seed S --verbose` prints its whole trace.
 */
import type { SimConfig } from './context.js';
import { runSimulation, type SimResult } from './simulation.js';
import { formatFailure, shrink } from './shrink.js';

interface Args {
  seeds: number;
  from: number;
  seed?: number;
  verbose: boolean;
  damage: boolean;
  shrink: boolean;
  steps?: number;
  timeLimit?: number;
  shrinkSeconds: number;
  set: Partial<Record<keyof SimConfig, number | boolean>>;
  skip: Set<number>;
  queue: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { seeds: 100, from: 1, verbose: false, damage: false, shrink: true, shrinkSeconds: 60, set: {}, skip: new Set(), queue: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const num = (): number => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v)) throw new Error(`${a} needs a number`);
      return v;
    };
    if (a === '--seeds') args.seeds = num();
    else if (a === '--from') args.from = num();
    else if (a === '--seed') args.seed = num();
    else if (a === '--verbose') args.verbose = true;
    else if (a === '--damage') args.damage = true;
    else if (a === '--queue') args.queue = true;
    else if (a === '--no-shrink') args.shrink = false;
    else if (a === '--steps') args.steps = num();
    else if (a === '--time-limit') args.timeLimit = num();
    else if (a === '--shrink-seconds') args.shrinkSeconds = num();
    else if (a === '--skip') args.skip = new Set((argv[++i] ?? '').split(',').filter(Boolean).map(Number));
    else if (a === '--set') {
      const [key, raw] = (argv[++i] ?? '').split('=');
      if (!key || raw === undefined) throw new Error('--set needs key=value');
      (args.set as Record<string, number | boolean>)[key] = raw === 'true' ? true : raw === 'false' ? false : Number(raw);
    }
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const overrides = { ...(args.set as Partial<SimConfig>), ...(args.steps === undefined ? {} : { steps: args.steps }) };
  const seeds = args.seed !== undefined ? [args.seed] : Array.from({ length: args.seeds }, (_, i) => args.from + i);
  const started = Date.now();
  const failures: SimResult[] = [];
  let ran = 0;
  let detected = 0;
  let detectedNotFound = 0;
  let inconclusive = 0;
  let steps = 0;
  let commits = 0;
  let acknowledged = 0;
  let lastReport = started;
  for (const seed of seeds) {
    if (args.timeLimit !== undefined && Date.now() - started > args.timeLimit * 1000) break;
    const result = await runSimulation(seed, { damage: args.damage, overrides, skip: args.skip, scenario: args.queue ? ('queue' as const) : ('kv' as const) });
    ran++;
    steps += result.stats.steps;
    commits += result.stats.commits;
    acknowledged += result.stats.acknowledged;
    if (result.detected) detected++;
    if (result.detected?.startsWith('NOT_FOUND')) detectedNotFound++;
    if (result.inconclusive) inconclusive++;
    if (result.violation) {
      failures.push(result);
      console.log(`seed ${seed}: FAIL ${result.violation.invariant}: ${result.violation.message.split('\n')[0]!.slice(0, 200)}`);
    }
    if (args.verbose && args.seed !== undefined) console.log(result.trace.join('\n'));
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      console.log(`.. ${ran} seeds, ${(ran / ((lastReport - started) / 1000)).toFixed(1)} seeds/s, ${failures.length} failing`);
    }
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `\n${ran} seeds (${seeds[0]}..${seeds[0]! + ran - 1}${args.damage ? ', damage runs' : ''}) in ${seconds.toFixed(1)} s: ${(ran / seconds).toFixed(1)} seeds/s, ` +
      `${steps} steps, ${commits} commits (${acknowledged} acknowledged); ${failures.length} failing` +
      (args.damage ? `, ${detected} with damage reported (${detected - detectedNotFound} CORRUPT_DATA, ${detectedNotFound} NOT_FOUND "missing")` : '') +
      (inconclusive ? `, ${inconclusive} inconclusive history searches` : ''),
  );
  const byInvariant = new Map<string, number[]>();
  for (const f of failures) byInvariant.set(f.violation!.invariant, [...(byInvariant.get(f.violation!.invariant) ?? []), f.seed]);
  for (const [invariant, list] of byInvariant) console.log(`  ${invariant}: ${list.length} seeds: ${list.slice(0, 40).join(' ')}${list.length > 40 ? ' ...' : ''}`);
  // Shrink the first failure of each invariant (the others are listed above).
  for (const [, list] of byInvariant) {
    const first = failures.find((f) => f.seed === list[0])!;
    const small = args.shrink ? await shrink(first, { damage: args.damage, overrides, skip: args.skip, scenario: args.queue ? ('queue' as const) : ('kv' as const) }, args.shrinkSeconds * 1000) : first;
    console.log(`\n${formatFailure(small, args.verbose)}`);
  }
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
