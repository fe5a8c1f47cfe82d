/**
 * The rest of `ctx`: `runId`, `version`, `log` (the runtime's logger with the run id, silent while
 * the function replays what an earlier execution ran) and `replaying`.
 */
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '../../../../src/core/workflow/index.js';
import { fnWorld, resultOf, sleeping, type StoreFactory } from './fn-harness.js';

export function defineContextSuite(name: string, factory: StoreFactory): void {
  describe(`workflow functions: ctx (${name})`, () => {
    it('runId, version, log with the run id once per message across a replay, replaying while the history answers', async () => {
      const w = await fnWorld(factory);
      const lines: { message: string; fields: unknown }[] = [];
      const replaying: [string, boolean][] = [];
      const wf = defineWorkflow({
        name: 'ctx',
        version: 3,
        async run(ctx) {
          replaying.push(['start', ctx.replaying]);
          ctx.log.info('starting', { at: 'top' });
          await ctx.step('a', () => 1);
          replaying.push(['after a', ctx.replaying]);
          await ctx.sleep(10);
          replaying.push(['after sleep', ctx.replaying]);
          ctx.log.info('woke');
          return { runId: ctx.runId, version: ctx.version };
        },
      });
      const logger = { info: (message: string, fields?: unknown) => lines.push({ message, fields }) };
      const runtime = w.start([wf], { logger });
      const run = await runtime.start(wf, undefined, { runId: 'ctx-run' });
      await sleeping(runtime, 'ctx-run');
      await w.advance(10);
      expect(await resultOf(run)).toEqual({ runId: 'ctx-run', version: 3 });
      const mine = lines.filter((l) => l.message.endsWith('starting') || l.message.endsWith('woke'));
      expect(mine).toEqual([
        { message: expect.stringContaining('starting'), fields: { runId: 'ctx-run', at: 'top' } },
        { message: expect.stringContaining('woke'), fields: { runId: 'ctx-run' } },
      ]);
      expect(replaying).toEqual([
        ['start', false],
        ['after a', false],
        ['start', true],
        ['after a', true],
        ['after sleep', false],
      ]);
    });
  });
}
