/**
 * Browser commands of the `browser-persistent` project: open, reload, close and crash real tabs
 * in the test browser's (persistent) context, and call into them. They run in Node with the
 * Playwright context; a tab is a page of test/browser/host/pages/app.html served by the project's
 * own Vite server, so it shares the test iframe's origin (its Web Locks, BroadcastChannels and
 * storage). Tabs are named by the id `openTab` returns.
 */
import type {} from '@vitest/browser-playwright';
import type { Page } from 'playwright';
import type { BrowserCommand } from 'vitest/node';

const APP_PAGE = '/test/browser/host/pages/app.html';
const tabs = new Map<string, Page>();
let opened = 0;

function tab(id: string): Page {
  const page = tabs.get(id);
  if (!page) throw new Error(`no open tab ${id}`);
  return page;
}

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { __tab?: { ready?: boolean } }).__tab?.ready === true, undefined, { timeout: 20_000 });
}

/** Opens a tab of the test app with `query` (e.g. `store=indexeddb&name=x&host=a&log=l`); returns its id. */
const openTab: BrowserCommand<[query: string]> = async (ctx, query) => {
  const { page: runner, context } = ctx;
  const page = await context.newPage();
  await page.goto(`${new URL(runner.url()).origin}${APP_PAGE}?${query}`);
  await ready(page);
  const id = `tab${++opened}`;
  tabs.set(id, page);
  return id;
};

/** Reloads a tab (its worker dies with the old document) and waits for the new document. */
const reloadTab: BrowserCommand<[id: string]> = async (_ctx, id) => {
  const page = tab(id);
  await page.reload();
  await ready(page);
};

/** Closes a tab normally, or crashes its renderer first (`crash`: no unload, no cleanup). */
const closeTab: BrowserCommand<[id: string, mode?: 'close' | 'crash']> = async (ctx, id, mode = 'close') => {
  const page = tab(id);
  tabs.delete(id);
  if (mode === 'crash') {
    const cdp = await ctx.context.newCDPSession(page);
    const crashed = page.waitForEvent('crash', { timeout: 10_000 });
    // The renderer dies at once and never answers the command itself: do not wait for it.
    void cdp.send('Page.crash').catch(() => undefined);
    await crashed;
  }
  await page.close({ runBeforeUnload: false }).catch(() => undefined);
};

/** Calls `window.__tab[method](...args)` in a tab and returns its (JSON) result. */
const tabCall: BrowserCommand<[id: string, method: string, args?: unknown[]]> = async (_ctx, id, method, args = []) => {
  return tab(id).evaluate(
    ([m, a]) => (window as unknown as { __tab: Record<string, (...x: unknown[]) => unknown> }).__tab[m as string](...(a as unknown[])),
    [method, args] as const,
  );
};

/** Closes every tab the commands opened. */
const closeTabs: BrowserCommand<[]> = async () => {
  const pages = [...tabs.values()];
  tabs.clear();
  await Promise.all(pages.map((p) => p.close({ runBeforeUnload: false }).catch(() => undefined)));
};

export const tabCommands = { openTab, reloadTab, closeTab, tabCall, closeTabs };
export type TabCommands = typeof tabCommands;
