import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from '../../src/core/event-loop.js';

describe('yieldToEventLoop', () => {
  it('lets a due timer run within two turns', async () => {
    let fired = false;
    setTimeout(() => (fired = true), 0);
    // Node runs setTimeout(0) after 1 ms: make sure the timer is due.
    const start = performance.now();
    while (performance.now() - start < 3) {
      /* busy */
    }
    // From a timer's callback Node reaches its check phase (setImmediate) before its timers again.
    await yieldToEventLoop();
    await yieldToEventLoop();
    expect(fired).toBe(true);
  });

  it("takes Node's setImmediate, looked up at each call (no 1 ms timer; the simulator stands in for it)", async () => {
    const g = globalThis as unknown as { setImmediate: (f: () => void) => unknown; setTimeout: (f: () => void, ms?: number) => unknown };
    const saved = { setImmediate: g.setImmediate, setTimeout: g.setTimeout };
    const calls: string[] = [];
    g.setImmediate = (f) => (calls.push('setImmediate'), saved.setImmediate(f));
    g.setTimeout = (f, ms) => (calls.push('setTimeout'), saved.setTimeout(f, ms));
    try {
      await yieldToEventLoop();
    } finally {
      g.setImmediate = saved.setImmediate;
      g.setTimeout = saved.setTimeout;
    }
    expect(calls).toEqual(['setImmediate']);
  });
});
