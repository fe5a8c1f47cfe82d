import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { LeaseHandle } from '../../../src/core/queue/leases/lease-handle.js';
import { CancelState, CancelTokens, LeaseRegistry } from '../../../src/core/queue/leases/lease-registry.js';

describe('LeaseRegistry', () => {
  it('returns due entries soonest first and leaves them in place, marked', () => {
    const r = new LeaseRegistry();
    r.insert('q', 'b', 1, 200);
    r.insert('q', 'a', 2, 100);
    r.insert('q', 'c', 3, 900);
    const due = r.takeDue(500);
    expect(due.map((e) => e.id)).toEqual(['a', 'b']);
    expect(r.size).toBe(3);
    expect(r.get('q', 'a')?.reaping).toBe(true);
    expect(r.get('q', 'c')?.reaping).toBe(false);
    expect(r.renew('q', 'c', 3, 1000)).toEqual({ ok: true, expiresAt: 1000 });
  });

  it('reorders by expiry after renewal; renewal to the same expiry keeps the entry', () => {
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 100);
    r.insert('q', 'b', 2, 200);
    r.renew('q', 'a', 1, 300);
    expect(r.takeDue(1000).map((e) => e.id)).toEqual(['b', 'a']);
    const r2 = new LeaseRegistry();
    r2.insert('q', 'a', 1, 100);
    expect(r2.renew('q', 'a', 1, 100).ok).toBe(true);
    expect(r2.get('q', 'a')?.expiresAt).toBe(100);
  });

  it('refuses renewal for a wrong token, a missing job or a marked entry', () => {
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 100);
    expect(r.renew('q', 'a', 2, 500).ok).toBe(false);
    expect(r.renew('q', 'zz', 1, 500).ok).toBe(false);
    r.takeDue(100);
    expect(r.renew('q', 'a', 1, 500).ok).toBe(false);
  });

  it('fences removal by token; a re-insert replaces the entry', () => {
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 100);
    r.insert('q', 'a', 2, 200);
    expect(r.remove('q', 'a', 1)).toBe(false);
    expect(r.get('q', 'a')?.token).toBe(2);
    expect(r.remove('q', 'a', 2)).toBe(true);
    expect(r.size).toBe(0);
  });
});

describe('LeaseHandle', () => {
  const bind = (r: LeaseRegistry, clock: MockClock, token: number, cancel = new CancelState('a', token, false)) =>
    LeaseHandle.bind({ registry: r, clock, queue: 'q', id: 'a', token, cancel });

  it('detached handle is a no-op', () => {
    const h = LeaseHandle.detached();
    expect(h.ensureAtLeast(1000)).toBe(Number.POSITIVE_INFINITY);
    expect(h.renew(5)).toBe(Number.POSITIVE_INFINITY);
    expect(h.signal.aborted).toBe(false);
  });

  it('ensureAtLeast extends only when short, to now + remaining + 5 s', () => {
    const clock = new MockClock(1000);
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 1000 + 60_000);
    const h = bind(r, clock, 1);
    expect(h.ensureAtLeast(10_000)).toBe(61_000);
    expect(h.ensureAtLeast(100_000)).toBe(1000 + 100_000 + 5000);
    expect(h.expiresAt).toBe(106_000);
  });

  it('fails CLAIM_LOST after removal or a re-claim with a new token', () => {
    const clock = new MockClock(0);
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 10);
    const h = bind(r, clock, 1);
    r.insert('q', 'a', 2, 10);
    expect(() => h.ensureAtLeast(1000)).toThrow(expect.objectContaining({ code: 'CLAIM_LOST' }));
    r.remove('q', 'a', 2);
    expect(() => h.renew(1000)).toThrow(expect.objectContaining({ code: 'CLAIM_LOST' }));
  });

  it('refuses with CANCELLED once the signal fired, leaving the expiry unchanged', () => {
    const clock = new MockClock(0);
    const r = new LeaseRegistry();
    r.insert('q', 'a', 1, 10);
    const tokens = new CancelTokens();
    const cancel = tokens.install('a', 1, false);
    const h = bind(r, clock, 1, cancel);
    tokens.fire('a');
    expect(() => h.ensureAtLeast(1000)).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
    expect(r.get('q', 'a')?.expiresAt).toBe(10);
    expect(h.signal.aborted).toBe(true);
  });

  it('creates the signal lazily: aborted when made after a fire, fired when made before', () => {
    const tokens = new CancelTokens();
    const late = tokens.install('a', 1, false);
    tokens.fire('a');
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as Error).name).toBe('CancelRequested');
    const early = tokens.install('b', 2, false);
    const signal = early.signal;
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    tokens.fire('b');
    tokens.fire('b');
    expect(fired).toBe(1);
    expect(early.signal).toBe(signal);
    expect(tokens.install('c', 3, true).signal.aborted).toBe(true);
    tokens.clear('b', 2);
    expect(tokens.fire('b')).toBe(false);
  });

  it('rejects negative or non-finite durations with INVALID_ARGUMENT', () => {
    const h = LeaseHandle.detached();
    expect(() => h.ensureAtLeast(-1)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => h.renew(Number.NaN)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
