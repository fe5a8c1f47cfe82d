import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { Broadcast, Notify } from '../../../src/core/queue/workers/notifier.js';

describe('Notify', () => {
  it('stores one permit when nobody waits; the next waiter consumes it at once', async () => {
    const n = new Notify(new MockClock());
    n.notifyOne();
    n.notifyOne();
    expect(await n.register().wait(1000)).toBe(true);
    const w = n.register();
    const p = w.wait(1000);
    await Promise.resolve();
    n.notifyOne();
    expect(await p).toBe(true);
  });

  it('dispose ends a pending wait: it resolves false at once, and leaves no sleeper and no listener on the signal', async () => {
    // A worker loop that stops waiting for another reason (a resumed claim) disposes its waiter;
    // before, the wait slept on until its timeout, one timer and one abort listener per resume
    // (Node warned of a possible EventTarget leak past ten).
    const clock = new MockClock();
    const n = new Notify(clock);
    const loop = new AbortController();
    const waits: Promise<boolean>[] = [];
    for (let i = 0; i < 20; i++) {
      const w = n.register();
      waits.push(w.wait(60_000, loop.signal));
      await Promise.resolve();
      w.dispose();
    }
    expect(await Promise.all(waits)).toEqual(Array(20).fill(false));
    expect(clock.pendingSleepers).toBe(0);
    expect(getEventListeners(loop.signal, 'abort')).toHaveLength(0);
    expect(n.waiting).toBe(0);
    // A notification after that stays a permit for the next waiter.
    n.notifyOne();
    expect(await n.register().wait(0)).toBe(true);
  });

  it('wakes exactly one of several waiters per notification', async () => {
    const clock = new MockClock();
    const n = new Notify(clock);
    const results: boolean[] = [];
    const waits = [0, 1, 2].map(() => n.register().wait(1000).then((r) => results.push(r)));
    n.notifyOne();
    await Promise.race(waits);
    expect(results).toEqual([true]);
    expect(n.waiting).toBe(2); // the one notification took exactly one waiter off
    await clock.advance(1000);
    await Promise.all(waits);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('times out through the clock and passes on a notification it received but never used', async () => {
    const clock = new MockClock();
    const n = new Notify(clock);
    const w = n.register();
    const p = w.wait(50);
    await clock.advance(50);
    expect(await p).toBe(false);
    w.dispose();
    const unused = n.register();
    n.notifyOne();
    unused.dispose();
    expect(await n.register().wait(0)).toBe(true);
  });
});

describe('Broadcast', () => {
  it('wakes every registered listener and stores nothing', async () => {
    const b = new Broadcast();
    b.notifyAll();
    const r1 = b.register();
    const r2 = b.register();
    b.notifyAll();
    await expect(Promise.all([r1.fired, r2.fired])).resolves.toEqual([undefined, undefined]);
  });
});
