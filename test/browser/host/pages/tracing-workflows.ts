/** The workflows of the browser tracing test, imported by its worker (which runs them) and its page (which starts them). */
import { defineWorkflow } from '../../../../src/core/workflow/index.js';

export const rounded = defineWorkflow({ name: 'test.rounded', run: (ctx, n: number) => ctx.step('round', () => Math.round(n)) });

/** Two steps around a signal wait, then a child run. */
export const traced = defineWorkflow({
  name: 'test.traced',
  async run(ctx, n: number) {
    const doubled = await ctx.step('double', () => n * 2);
    const extra = await ctx.waitForSignal<number>('extra');
    const sum = await ctx.step('add', () => doubled + (extra.timedOut ? 0 : extra.value));
    return ctx.invoke(rounded, sum);
  },
});
