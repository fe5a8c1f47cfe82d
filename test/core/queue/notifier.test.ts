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
