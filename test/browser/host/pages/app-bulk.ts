/** The bulk pipeline the test app's worker serves: two phases with costs; inputs `{ n, fail? }`. */
import { pipeline, StepError } from '../../../../src/index.js';

export const squares = pipeline<{ n: number; fail?: boolean }>()
  .phase('square', ({ n, fail }, ctx) => {
    if (fail) throw StepError.permanent(`cannot square ${n}`);
    ctx.cost('calls', 1);
    return n * n;
  })
  .phase('label', (sq, ctx) => {
    ctx.cost('chars', String(sq).length);
    return `square ${sq}`;
  });
