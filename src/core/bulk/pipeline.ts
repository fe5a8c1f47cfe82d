/**
 * `Pipeline`: the work done for each item of a batch, as named phases run in order, each one's
 * output the next one's input. Every phase is a memoized call inside the item's single step: its
 * value and the cost it reported are stored durably before the next phase starts (the last
 * phase's with the item's marker, which commits with its acknowledgement), so a redelivered item
 * (after a crash, a retry) replays finished phases, pays for none of them twice, and still
 * reports their cost.
 */
import { InvalidArgumentError } from '../errors.js';
import type { LeaseHandle } from '../queue/index.js';
import { show } from '../show.js';
import type { EffectsHandle } from '../workflow/steps/effects-handle.js';
import type { KvReadHandle } from '../workflow/steps/step.js';

/** What a phase gets besides the previous phase's output. */
export interface PhaseContext<I> {
  /** The item's input as submitted. */
  readonly item: I;
  /** The item's key in its batch. */
  readonly key: string;
  /** Position of the item in its batch. */
  readonly index: number;
  readonly batchId: string;
  /** This phase's name. */
  readonly phase: string;
  /** 1, plus one per earlier failed try of the item. */
  readonly attempt: number;
  /** Fires when the item is cancelled while it runs. */
  readonly signal: AbortSignal;
  /** Extends the queue lease for a long phase. */
  readonly lease: LeaseHandle;
  /** Caller-KV writes applied only with the item's success. */
  readonly effects: EffectsHandle;
  /** Committed reads of the caller KV namespace. */
  readonly kv: KvReadHandle;
  /** The batch's headers. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Records what this phase spent (`ctx.cost('tokens_in', 812)`); amounts of one metric add up.
   * Stored with the phase's memoized value, so a replayed phase reports the same cost without
   * running. INVALID_ARGUMENT (reason `invalid_cost`) for an empty metric or a non-finite amount.
   */
  cost(metric: string, amount: number): void;
}

/** One phase: the previous output (the item's input for the first phase) in, this phase's output out. */
export type PhaseRun<I, A, B> = (value: A, ctx: PhaseContext<I>) => Promise<B> | B;

/** @internal A phase as the item step runs it. */
export interface PhaseSpec {
  readonly name: string;
  readonly run: (value: unknown, ctx: PhaseContext<unknown>) => Promise<unknown> | unknown;
}

export const MAX_PHASE_NAME_LEN = 100;

/**
 * Phases in order; immutable (each `phase` returns a new pipeline). Values passed between phases
 * and the final output must be storable by the value codec (JSON-like data, Date, Map, Set,
 * BigInt, typed arrays); a phase that returns something else fails its item permanently.
 * @example
 * const summarise = pipeline<{ id: string; text: string }>()
 *   .phase('extract', (doc) => doc.text.split('\n')[0]!)
 *   .phase('summarise', async (line, ctx) => { ctx.cost('tokens_out', line.length); return line.slice(0, 80); });
 */
export class Pipeline<I, O> {
  private constructor(
    /** @internal */
    readonly phases: readonly PhaseSpec[],
  ) {}

  /** An empty pipeline over inputs of type `I` (add phases with `phase`). */
  static start<I>(): Pipeline<I, I> {
    return new Pipeline<I, I>([]);
  }

  /** The phase names in order. */
  get phaseNames(): string[] {
    return this.phases.map((p) => p.name);
  }

  /**
   * A pipeline with `run` appended under `name` (1..100 characters, unique in the pipeline: it is
   * the memo key of the phase, so renaming a phase recomputes it for unfinished items).
   * Throws INVALID_ARGUMENT (reason `invalid_pipeline`).
   */
  phase<N>(name: string, run: PhaseRun<I, O, N>): Pipeline<I, N> {
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_PHASE_NAME_LEN) {
      throw new InvalidArgumentError(`phase name must be a string of 1..${MAX_PHASE_NAME_LEN} characters. name=${show(name)}`, { reason: 'invalid_pipeline', name: show(name) });
    }
    if (typeof run !== 'function') throw new InvalidArgumentError(`phase run must be a function. phase=${name} run=${show(run)}`, { reason: 'invalid_pipeline', name });
    if (this.phases.some((p) => p.name === name)) throw new InvalidArgumentError(`a phase of this name is already in the pipeline. phase=${name}`, { reason: 'invalid_pipeline', name });
    return new Pipeline<I, N>([...this.phases, { name, run: run as PhaseSpec['run'] }]);
  }
}

/** `Pipeline.start<I>()`. */
export function pipeline<I>(): Pipeline<I, I> {
  return Pipeline.start<I>();
}
