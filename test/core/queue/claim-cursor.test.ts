import { describe, expect, it } from 'vitest';
import { ClaimCursor } from '../../../src/core/queue/transitions/claim-cursor.js';

const k = (n: number): Uint8Array => Uint8Array.of(n);

describe('ClaimCursor', () => {
  it('does not consider an unknown queue known-empty', () => {
    expect(new ClaimCursor().begin('q').knownEmpty).toBe(false);
  });

  it('short-circuits after markEmpty until the next insert', () => {
    const c = new ClaimCursor();
    c.markEmpty('q', c.begin('q'));
    expect(c.begin('q').knownEmpty).toBe(true);
    c.noteInserts('q', k(5));
    expect(c.begin('q').knownEmpty).toBe(false);
  });

  it('revokes emptiness when an insert lands between begin and markEmpty', () => {
    const c = new ClaimCursor();
    const observed = c.begin('q');
    c.noteInserts('q', k(5));
    c.markEmpty('q', observed);
    expect(c.begin('q').knownEmpty).toBe(false);
  });

  it('keeps the bound when marking empty', () => {
    const c = new ClaimCursor();
    const o = c.begin('q');
    c.advance('q', k(5), o);
    c.markEmpty('q', c.begin('q'));
    expect(c.begin('q').bound).toEqual({ key: k(5), inclusive: false });
  });

  it('moves the bound back inclusively for an insert behind it, not for one ahead', () => {
    const c = new ClaimCursor();
    c.advance('q', k(5), c.begin('q'));
    c.noteInserts('q', k(7));
    expect(c.begin('q').bound).toEqual({ key: k(5), inclusive: false });
    c.noteInserts('q', k(3));
    expect(c.begin('q').bound).toEqual({ key: k(3), inclusive: true });
  });

  it('makes a reinsert of the claimed key inclusive', () => {
    const c = new ClaimCursor();
    c.advance('q', k(5), c.begin('q'));
    c.noteInserts('q', k(5));
    expect(c.begin('q').bound).toEqual({ key: k(5), inclusive: true });
  });

  it('sets a bound on insert while known empty and none existed', () => {
    const c = new ClaimCursor();
    c.markEmpty('q', c.begin('q'));
    c.noteInserts('q', k(9));
    expect(c.begin('q').bound).toEqual({ key: k(9), inclusive: true });
  });

  it('keeps the front-scan fallback for an insert with an unknown bound', () => {
    const c = new ClaimCursor();
    c.noteInserts('q', k(9));
    expect(c.begin('q').bound).toBeUndefined();
  });

  it('clamps advance to a key inserted ahead during the claim, once', () => {
    const c = new ClaimCursor();
    c.advance('q', k(2), c.begin('q'));
    const o = c.begin('q');
    c.noteInserts('q', k(4)); // ahead of bound 2 (exclusive), behind the key the claim will reach
    c.advance('q', k(6), o);
    expect(c.begin('q').bound).toEqual({ key: k(4), inclusive: true });
    c.advance('q', k(8), c.begin('q'));
    expect(c.begin('q').bound).toEqual({ key: k(8), inclusive: false });
  });

  it('clamps to a reinsert of the claimed key, ignores clamp keys beyond the claimed key', () => {
    const c = new ClaimCursor();
    c.advance('q', k(2), c.begin('q'));
    let o = c.begin('q');
    c.noteInserts('q', k(6));
    c.advance('q', k(6), o);
    expect(c.begin('q').bound).toEqual({ key: k(6), inclusive: true });
    o = c.begin('q');
    c.noteInserts('q', k(20));
    c.advance('q', k(10), o);
    expect(c.begin('q').bound).toEqual({ key: k(10), inclusive: false });
  });

  it('clamps a cold-start claim too', () => {
    const c = new ClaimCursor();
    const o = c.begin('q');
    c.noteInserts('q', k(3));
    c.advance('q', k(7), o);
    expect(c.begin('q').bound).toEqual({ key: k(3), inclusive: true });
  });

  it('drops an advance when an insert moved the bound during the claim', () => {
    const c = new ClaimCursor();
    c.advance('q', k(5), c.begin('q'));
    const o = c.begin('q');
    c.noteInserts('q', k(1));
    c.advance('q', k(9), o);
    expect(c.begin('q').bound).toEqual({ key: k(1), inclusive: true });
  });

  it('restores bound and emptiness; an insert revokes restored emptiness; export omits stateless queues', () => {
    const c = new ClaimCursor();
    c.restore('q', { bound: { key: k(4), inclusive: false }, empty: true });
    expect(c.begin('q')).toMatchObject({ bound: { key: k(4), inclusive: false }, knownEmpty: true });
    c.noteInserts('q', k(2));
    expect(c.begin('q')).toMatchObject({ bound: { key: k(2), inclusive: true }, knownEmpty: false });
    c.begin('other');
    expect([...c.export().keys()]).toEqual(['q']);
  });
});
