/**
 * Minimization: re-run the same seed with less (a smaller step budget, fewer kinds of trouble,
 * fewer client actions) and keep every reduction that still fails with the same invariant. Each
 * step draws from its own random stream, so removing one action leaves the other steps' choices
 * as they were (the state they act on changes, so not every removal keeps the failure).
 */
import type { SimConfig } from './context.js';
import { runSimulation, type RunOptions, type SimResult } from './simulation.js';

/** Configuration reductions tried in order (each keeps the failure or is undone). */
const SIMPLER: readonly Partial<SimConfig>[] = [
  { readers: false },
  { failRate: 0 },
  { machineCrashes: false },
  { pauses: false },
  { zombies: false },
  { txns: false },
  { crashes: false },
  { lock: false },
  { maxWriters: 1 },
  { maxWriters: 2 },
];

export async function shrink(failing: SimResult, base: RunOptions, budgetMs: number): Promise<SimResult> {
  const deadline = Date.now() + budgetMs;
  const invariant = failing.violation!.invariant;
  let best = failing;
  let overrides: Partial<SimConfig> = { ...base.overrides };
  let skip = new Set<number>(base.skip ?? []);
  const attempt = async (o: Partial<SimConfig>, s: Set<number>): Promise<SimResult | undefined> => {
    if (Date.now() > deadline) return undefined;
    const result = await runSimulation(failing.seed, { ...base, overrides: o, skip: s });
    return result.violation?.invariant === invariant ? result : undefined;
  };
  const keep = (result: SimResult, o: Partial<SimConfig>, s: Set<number>): void => {
    best = result;
    overrides = o;
    skip = s;
  };

  const shrinkSteps = async (): Promise<void> => {
    // The failure shows by step `best.stats.steps`; find a small budget that still fails.
    let lo = 1;
    let hi = best.stats.steps;
    while (lo < hi && Date.now() < deadline) {
      const mid = Math.floor((lo + hi) / 2);
      const o = { ...overrides, steps: mid };
      const result = await attempt(o, skip);
      if (result) {
        keep(result, o, skip);
        hi = mid;
      } else lo = mid + 1;
    }
  };

  await shrinkSteps();
  for (const change of SIMPLER) {
    const o = { ...overrides, ...change };
    const result = await attempt(o, skip);
    if (result) keep(result, o, skip);
  }
  // Remove client actions: chunks first, then one at a time (ddmin-like).
  for (let chunk = Math.max(1, Math.floor(best.actionSteps.length / 2)); chunk >= 1 && Date.now() < deadline; chunk = Math.floor(chunk / 2)) {
    for (let i = 0; i < best.actionSteps.length && Date.now() < deadline; ) {
      const removed = best.actionSteps.slice(i, i + chunk);
      const s = new Set([...skip, ...removed]);
      const result = await attempt(overrides, s);
      if (result) keep(result, overrides, s);
      else i += chunk;
    }
    if (chunk === 1) break;
  }
  await shrinkSteps();
  return best;
}

/** A failure report: seed, how to reproduce, the invariant, and the trace of the (shrunk) run. */
export function formatFailure(result: SimResult, verbose: boolean): string {
  const v = result.violation!;
  const config = Object.entries(result.config)
    .map(([k, val]) => `${k}=${String(val)}`)
    .join(' ');
  const sets = Object.entries(result.options.overrides ?? {}).map(([k, val]) => ` --set ${k}=${String(val)}`).join('');
  const skip = result.options.skip?.size ? ` --skip ${[...result.options.skip].sort((a, b) => a - b).join(',')}` : '';
  const lines = [
    `=== seed ${result.seed}: ${v.invariant}`,
    v.message,
    `config: ${config}`,
    `${result.actionSteps.length} actions, ${result.stats.steps} steps. Replay: npm run simulate -- --seed ${result.seed}${result.options.scenario === 'queue' ? ' --queue' : ''}${result.options.damage ? ' --damage' : ''}${sets}${skip} --no-shrink --verbose`,
  ];
  const trace = verbose ? result.trace : compact(result.trace);
  lines.push(...trace);
  return lines.join('\n');
}

/** Deliveries folded into counts between the lines that matter (actions, outcomes, crashes). */
function compact(trace: readonly string[]): string[] {
  const out: string[] = [];
  let folded = 0;
  for (const line of trace) {
    const delivery = / (lands|answers|reads|writes|syncs|fails|timer|time ->)/.test(line) && !/VIOLATION/.test(line);
    if (delivery && !/(manifest|log-seal|log-end|log\/)/.test(line)) {
      folded++;
      continue;
    }
    if (folded > 0) out.push(`   .. ${folded} deliveries`);
    folded = 0;
    out.push(line);
  }
  if (folded > 0) out.push(`   .. ${folded} deliveries`);
  return out;
}
