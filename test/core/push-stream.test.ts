import { describe, expect, it } from 'vitest';
import { pushStream } from '../../src/core/push-stream.js';

describe('pushStream', () => {
  it('reads pushes in order, drains them after end, and cleans up once', async () => {
    let cleanups = 0;
    const s = pushStream<number>(() => cleanups++);
    s.push(1);
    expect(await s.iterator.next()).toEqual({ value: 1, done: false });
    const waiting = s.iterator.next(); // nothing queued: waits for the next push
    s.push(2);
    s.push(3);
    s.end();
    s.end();
    expect(await waiting).toEqual({ value: 2, done: false });
    expect(await s.iterator.next()).toEqual({ value: 3, done: false });
    expect(await s.iterator.next()).toEqual({ value: undefined, done: true });
    expect(cleanups).toBe(1);
  });

  it('a failure is thrown once, after what was pushed before it; return() ends the stream', async () => {
    const s = pushStream<string>(() => undefined);
    s.push('a');
    s.fail(new Error('gone'));
    expect(await s.iterator.next()).toEqual({ value: 'a', done: false });
    await expect(s.iterator.next()).rejects.toThrow('gone');
    expect(await s.iterator.next()).toEqual({ value: undefined, done: true });
    let cleaned = false;
    const t = pushStream<string>(() => (cleaned = true));
    const collected: string[] = [];
    t.push('x');
    for await (const v of t.iterator) {
      collected.push(v);
      break;
    }
    expect(collected).toEqual(['x']);
    expect(cleaned).toBe(true);
  });
});
