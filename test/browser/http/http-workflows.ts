/**
 * The workflow the HTTP browser test starts: defined once, registered by the Node host its global
 * setup serves (test/setup/http-host.ts) and imported by the page, as an app shares its definitions.
 */
import { defineWorkflow } from '../../../src/core/workflow/index.js';

/** Waits for its greeting, then composes it. */
export const pageGreet = defineWorkflow({
  name: 'page-greet',
  async run(ctx, name: string) {
    const answer = await ctx.waitForSignal<string>('greeting', { timeoutMs: 60_000 });
    return ctx.step('compose', () => `${answer.timedOut ? 'Hi' : answer.value}, ${name}!`);
  },
});

/** What the page sends for the server's authentication hook. */
export const PAGE_TOKEN = 'Bearer page-test';
