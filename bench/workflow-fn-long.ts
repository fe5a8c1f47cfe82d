/**
 * The long workflow function of workflow.fn (workflow-fn.ts), shared with its restart child
 * process (workflow-fn-restart.ts): `input.steps` steps, each forwarding a payload, each step's
 * function reporting the time it is called to the probe, and optionally held at one step.
 */
import { defineWorkflow } from '../src/core/workflow/index.js';

export interface LongProbe {
  /** performance.now() when step i's function was called, by i (1-based). */
  calls: number[];
  /** When set (with `hold`), the step of this number returns `hold` instead of its value. */
  holdAt?: number;
  hold?: Promise<Uint8Array>;
  /** Called when step `holdAt` starts. */
  onHold?: () => void;
}

let probe: LongProbe = { calls: [] };

/** Replaces the probe the long function reports to. */
export function setProbe(p: LongProbe): LongProbe {
  probe = p;
  return p;
}

export const LONG_STEPS = 1000;

export const long = defineWorkflow({
  name: 'bench-long',
  async run(ctx, input: { payload: Uint8Array; steps: number }): Promise<number> {
    let p = input.payload;
    for (let i = 1; i <= input.steps; i++) {
      p = await ctx.step(`s${i}`, () => {
        probe.calls[i] = performance.now();
        if (i === probe.holdAt && probe.hold) {
          probe.onHold?.();
          return probe.hold;
        }
        return p;
      });
    }
    return p.length;
  },
});
