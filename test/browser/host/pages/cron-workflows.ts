/** The workflow the schedules test's worker fires every (fast) minute; the page imports it too. */
import { defineWorkflow } from '../../../../src/core/workflow/index.js';

export const tick = defineWorkflow({ name: 'test.tick', run: (ctx, word: string) => ctx.step('tick', () => `${word} ${ctx.runId}`) });
