import { describe, expect, it } from 'vitest';
import { type Clock, MockClock, SystemClock, startTimer, systemClock } from '../../src/core/clock.js';

function settled(p: Promise<unknown>): { done: boolean; error?: unknown } {
  const state: { done: boolean; error?: unknown } = { done: false };
  p.then(
    () => {
      state.done = true;
    },
    (e: unknown) => {
      state.done = true;
      state.error = e;
    },
  );
  return state;
}

describe('MockClock', () => {
  it('starts at the given time and only moves when told', async () => {
    const clock = new MockClock(1000);
    expect(clock.now()).toBe(1000);
    await new Promise((r) => setTimeout(r, 5)); // real time is the subject: it passes, the mock clock does not move
    expect(clock.now()).toBe(1000);
    await clock.advance(250);
    expect(clock.now()).toBe(1250);
    expect(new MockClock().now()).toBe(1_700_000_000_000);
  });

  it('wakes only due sleepers, in deadline order, with now() at each deadline', async () => {
    const clock = new MockClock(0);
    const woke: [string, number][] = [];
    const sleep = (name: string, ms: number) => clock.sleep(ms).then(() => woke.push([name, clock.now()]));
    const all = [sleep('c', 300), sleep('a', 100), sleep('b', 200), sleep('a2', 100), sleep('late', 1000)];
    expect(clock.pendingSleepers).toBe(5);

    await clock.advance(99);
    expect(woke).toEqual([]);
    await clock.advance(201);
    expect(woke).toEqual([
      ['a', 100],
      ['a2', 100],
      ['b', 200],
      ['c', 300],
    ]);
    expect(clock.now()).toBe(300);
    expect(clock.pendingSleepers).toBe(1);
    await clock.advance(700);
    expect(woke.at(-1)).toEqual(['late', 1000]);
    await Promise.all(all);
  });

  it('runs code woken by one timer before the next fires, including sleeps it starts', async () => {
    const clock = new MockClock(0);
    const log: string[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        log.push(`tick ${i} at ${clock.now()}`);
      }
    })();
    void clock.sleep(25).then(() => log.push(`other at ${clock.now()}`));
    await clock.advance(100);
    await loop;
    expect(log).toEqual(['tick 0 at 10', 'tick 1 at 20', 'other at 25', 'tick 2 at 30']);
    expect(clock.now()).toBe(100);
  });

  it('treats zero and negative sleeps as due now', async () => {
    const clock = new MockClock(0);
    const zero = settled(clock.sleep(0));
    const negative = settled(clock.sleep(-50));
    await Promise.resolve();
    expect(zero.done).toBe(false);
    await clock.advance(0);
    expect(zero.done && negative.done).toBe(true);
    expect(clock.now()).toBe(0);
  });

  it('never moves backwards', async () => {
    const clock = new MockClock(1000);
    await clock.advance(-500);
    expect(clock.now()).toBe(1000);
    await clock.set(500);
    expect(clock.now()).toBe(1000);
    const s = settled(clock.sleep(100));
    await clock.set(1100);
    expect(clock.now()).toBe(1100);
    expect(s.done).toBe(true);
  });

  it('overlapping advances never move time backwards', async () => {
    const clock = new MockClock(0);
    void clock.sleep(5);
    const first = clock.advance(10); // parks after waking the 5 ms sleeper
    const second = clock.advance(50); // starts from 5, finishes first
    await second;
    const afterSecond = clock.now();
    expect(afterSecond).toBeGreaterThanOrEqual(50);
    await first; // must not drag the clock back to its own target of 10
    expect(clock.now()).toBe(afterSecond);
  });

  it('abort rejects with the signal reason and removes the sleeper', async () => {
    const clock = new MockClock(0);
    const controller = new AbortController();
    const reason = new Error('stop');
    const p = clock.sleep(100, controller.signal);
    const other = settled(clock.sleep(100));
    expect(clock.pendingSleepers).toBe(2);
    controller.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(clock.pendingSleepers).toBe(1);
    await clock.advance(100);
    expect(other.done).toBe(true);
    expect(other.error).toBeUndefined();
  });

  it('an already aborted signal rejects at once', async () => {
    const clock = new MockClock(0);
    const reason = new Error('already');
    await expect(clock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(clock.pendingSleepers).toBe(0);
    // The default reason is an AbortError DOMException.
    await expect(clock.sleep(10, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a sleep that completed ignores a later abort', async () => {
    const clock = new MockClock(0);
    const controller = new AbortController();
    const p = clock.sleep(10, controller.signal);
    await clock.advance(10);
    await expect(p).resolves.toBeUndefined();
    controller.abort(new Error('late'));
    expect(clock.pendingSleepers).toBe(0);
  });
});

describe('SystemClock', () => {
  it('now() is wall-clock time', () => {
    const before = Date.now();
    const now = new SystemClock().now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    const c: Clock = systemClock;
    expect(c).toBeInstanceOf(SystemClock);
  });

  it('sleep waits about the requested time', async () => {
    const t0 = performance.now();
    await systemClock.sleep(30);
    // Timers may fire up to ~1 ms early after rounding.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(28);
  });

  it('sleep(0) and negative sleeps resolve promptly', async () => {
    await systemClock.sleep(0);
    await systemClock.sleep(-10);
    await systemClock.sleep(Number.NaN);
  });

  it('abort rejects with the reason before the timer fires', async () => {
    const controller = new AbortController();
    const reason = new Error('cancel');
    const t0 = performance.now();
    const p = systemClock.sleep(10_000, controller.signal);
    setTimeout(() => controller.abort(reason), 10); // real time is the subject: abort while the system timer is armed
    await expect(p).rejects.toBe(reason);
    expect(performance.now() - t0).toBeLessThan(5_000);
    await expect(systemClock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('sleeps longer than the 32-bit timer limit do not fire early', async () => {
    const controller = new AbortController();
    const p = settled(systemClock.sleep(2 ** 31 + 1000, controller.signal));
    const forever = settled(systemClock.sleep(Number.POSITIVE_INFINITY, controller.signal));
    await new Promise((r) => setTimeout(r, 5)); // real time is the subject: an overflowed timer fires after 1 ms, before this one
    expect(p.done).toBe(false);
    expect(forever.done).toBe(false);
    controller.abort(new Error('done'));
    await new Promise((r) => setTimeout(r, 0));
    expect(p.done && forever.done).toBe(true);
  });
});

describe('startTimer (Clock.startTimer, or sleep through an AbortController for a clock without it)', () => {
  const sleepOnly = (inner: MockClock): Clock => ({ now: () => inner.now(), sleep: (ms, signal) => inner.sleep(ms, signal) });

  for (const [name, wrap] of [
    ['MockClock.startTimer', (c: MockClock): Clock => c],
    ['a clock with sleep only', sleepOnly],
  ] as const) {
    it(`${name}: fires once at its time, in deadline order with sleeps; a cancelled one never fires and leaves no sleeper`, async () => {
      const mock = new MockClock(0);
      const clock = wrap(mock);
      const fired: string[] = [];
      startTimer(clock, 30, () => fired.push(`t30@${mock.now()}`));
      const cancel = startTimer(clock, 20, () => fired.push('cancelled'));
      void clock.sleep(25).then(() => fired.push(`s25@${mock.now()}`));
      startTimer(clock, -5, () => fired.push(`t0@${mock.now()}`));
      expect(mock.pendingSleepers).toBe(4);
      cancel();
      await Promise.resolve();
      expect(mock.pendingSleepers).toBe(3);
      await mock.advance(100);
      expect(fired).toEqual(['t0@0', 's25@25', 't30@30']);
      expect(mock.pendingSleepers).toBe(0);
      cancel(); // after the fact: nothing
    });
  }

  it('SystemClock: fires after about its time; cancelled, never; past the 32-bit limit, not early', async () => {
    const fired: string[] = [];
    const t0 = Date.now();
    startTimer(systemClock, 20, () => fired.push(`t20 after ${Date.now() - t0 >= 19 ? 'enough' : 'too little'}`));
    const cancel = startTimer(systemClock, 5, () => fired.push('cancelled'));
    const cancelLong = startTimer(systemClock, 2 ** 31 + 1000, () => fired.push('long'));
    cancel();
    await new Promise((r) => setTimeout(r, 60));
    expect(fired).toEqual(['t20 after enough']);
    cancelLong();
  });
});
