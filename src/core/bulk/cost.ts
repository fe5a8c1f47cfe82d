/**
 * Costs: what a phase reports it spent (tokens in/out, money, calls), as metric → amount maps.
 * Per item the costs are kept per phase; a batch sums them per phase and in total. Sums are
 * taken in item order (`rollupCosts`), so a resumed batch reports exactly the same floating
 * point totals as an uninterrupted one, whatever order its items completed in.
 */
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';

/** Metric name → amount. */
export type CostReport = Readonly<Record<string, number>>;

/** Phase name → that phase's cost. */
export type PhaseCosts = Readonly<Record<string, CostReport>>;

/** A batch's (or an item's) cost: per phase and the sum over phases. */
export interface CostRollup {
  readonly phases: PhaseCosts;
  readonly total: CostReport;
}

const MAX_METRIC_LEN = 100;

/** Adds `amount` of `metric` into `into`. INVALID_ARGUMENT (reason `invalid_cost`) for a bad metric or amount. */
export function addCost(into: Record<string, number>, metric: string, amount: number): void {
  if (typeof metric !== 'string' || metric.length === 0 || metric.length > MAX_METRIC_LEN) {
    throw new InvalidArgumentError(`cost metric must be a string of 1..${MAX_METRIC_LEN} characters. metric=${show(metric)}`, { reason: 'invalid_cost', metric: show(metric) });
  }
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    throw new InvalidArgumentError(`cost amount must be a finite number. metric=${metric} amount=${show(amount)}`, { reason: 'invalid_cost', metric });
  }
  into[metric] = (into[metric] ?? 0) + amount;
}

/** A copy with metrics in name order (stable display and comparison). */
export function sortedCost(cost: CostReport): CostReport {
  const out: Record<string, number> = {};
  for (const k of Object.keys(cost).sort()) out[k] = cost[k]!;
  return out;
}

/** Whether `value` is a metric → finite number map (a decoded record). */
export function isCostReport(value: unknown): value is CostReport {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'number' && Number.isFinite(v));
}

export function isPhaseCosts(value: unknown): value is PhaseCosts {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(isCostReport);
}

/** Sums item costs in the order given (callers pass item order). Phases and metrics come out name-ordered. */
export function rollupCosts(items: Iterable<PhaseCosts>): CostRollup {
  const phases: Record<string, Record<string, number>> = {};
  const total: Record<string, number> = {};
  for (const item of items) {
    for (const [phase, cost] of Object.entries(item)) {
      const into = (phases[phase] ??= {});
      for (const [metric, amount] of Object.entries(cost)) {
        into[metric] = (into[metric] ?? 0) + amount;
        total[metric] = (total[metric] ?? 0) + amount;
      }
    }
  }
  const ordered: Record<string, CostReport> = {};
  for (const k of Object.keys(phases).sort()) ordered[k] = sortedCost(phases[k]!);
  return { phases: ordered, total: sortedCost(total) };
}
