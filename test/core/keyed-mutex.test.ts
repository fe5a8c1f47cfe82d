import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../src/core/keyed-mutex.js';

describe('KeyedMutex', () => {
  it('runs holders of one key one at a time in arrival order; other keys do not wait', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    let inside = 0;
    const hold = (key: string, name: string, ticks: number) =>
      m.run(key, async () => {
        inside++;
        expect(inside).toBeLessThanOrEqual(key === 'a' ? 1 : 2);
        log.push(`${name}+`);
        for (let i = 0; i < ticks; i++) await Promise.resolve();
        log.push(`${name}-`);
        inside--;
        return name;
      });
    const results = await Promise.all([hold('a', 'a1', 5), hold('a', 'a2', 1), hold('a', 'a3', 3)]);
    expect(results).toEqual(['a1', 'a2', 'a3']);
    expect(log).toEqual(['a1+', 'a1-', 'a2+', 'a2-', 'a3+', 'a3-']);
    log.length = 0;
    await Promise.all([hold('a', 'x', 5), m.run('b', async () => void log.push('b'))]);
    expect(log.indexOf('b')).toBeLessThan(log.indexOf('x-'));
  });

  it('releases the key when the holder throws, and an uncontended holder starts at once', async () => {
    const m = new KeyedMutex();
    await expect(m.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    let started = false;
    const p = m.run('a', async () => {
      started = true;
    });
    expect(started).toBe(true);
    await p;
  });

  it('holds only keys in use: a key is dropped once its last holder and waiter are done', async () => {
    const m = new KeyedMutex();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = m.run('a', () => gate);
    const second = m.run('a', async () => undefined);
    const other = m.run('b', async () => undefined);
    expect(m.size).toBe(2);
    await other;
    expect(m.size).toBe(1);
    open();
    await Promise.all([first, second]);
    expect(m.size).toBe(0);
  });
});
