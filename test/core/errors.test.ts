import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  StoreLockedError,
  ClaimLostError,
  ClosedError,
  ConflictError,
  CorruptDataError,
  type ErrorCode,
  FencedError,
  InternalError,
  invariant,
  InvalidArgumentError,
  InvalidConfigError,
  isTaqubaError,
  NotFoundError,
  PreconditionFailedError,
  StorePermissionError,
  StoreUnavailableError,
  TaqubaError,
  UnsupportedPlatformError,
} from '../../src/core/errors.js';

const BRAND = Symbol.for('taquba-workflow.error');

// Every code, once. A code added to or removed from ErrorCode without updating this list is a
// compile error here, so the list stays the reviewed record of the public codes.
const ALL_CODES = {
  INVALID_ARGUMENT: true,
  INVALID_CONFIG: true,
  PRECONDITION_FAILED: true,
  FENCED: true,
  CLOSED: true,
  CONFLICT: true,
  CORRUPT_DATA: true,
  STORE_UNAVAILABLE: true,
  STORE_PERMISSION: true,
  NOT_FOUND: true,
  ALREADY_EXISTS: true,
  LOCKED: true,
  CLAIM_LOST: true,
  INPUT_MISMATCH: true,
  JOB_FAILED: true,
  TIMEOUT: true,
  CANCELLED: true,
  UNSUPPORTED_PLATFORM: true,
  STEP_FAILED: true,
  RUN_FAILED: true,
  NON_DETERMINISTIC: true,
  INTERNAL: true,
} satisfies Record<ErrorCode, true>;

const SUBCLASSES: [new (message: string) => TaqubaError, ErrorCode, string][] = [
  [InvalidArgumentError, 'INVALID_ARGUMENT', 'InvalidArgumentError'],
  [InvalidConfigError, 'INVALID_CONFIG', 'InvalidConfigError'],
  [PreconditionFailedError, 'PRECONDITION_FAILED', 'PreconditionFailedError'],
  [FencedError, 'FENCED', 'FencedError'],
  [ClosedError, 'CLOSED', 'ClosedError'],
  [ConflictError, 'CONFLICT', 'ConflictError'],
  [CorruptDataError, 'CORRUPT_DATA', 'CorruptDataError'],
  [StoreUnavailableError, 'STORE_UNAVAILABLE', 'StoreUnavailableError'],
  [StorePermissionError, 'STORE_PERMISSION', 'StorePermissionError'],
  [NotFoundError, 'NOT_FOUND', 'NotFoundError'],
  [AlreadyExistsError, 'ALREADY_EXISTS', 'AlreadyExistsError'],
  [StoreLockedError, 'LOCKED', 'StoreLockedError'],
  [ClaimLostError, 'CLAIM_LOST', 'ClaimLostError'],
  [InternalError, 'INTERNAL', 'InternalError'],
  [UnsupportedPlatformError, 'UNSUPPORTED_PLATFORM', 'UnsupportedPlatformError'],
];

describe('TaqubaError', () => {
  it('carries code, message, details and cause', () => {
    const cause = new Error('io');
    const e = new TaqubaError('TIMEOUT', 'took too long', { details: { ms: 5, key: 'a', ok: false, none: null }, cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(TaqubaError);
    expect(e.code).toBe('TIMEOUT');
    expect(e.message).toBe('took too long');
    expect(e.name).toBe('TaqubaError');
    expect(e.details).toEqual({ ms: 5, key: 'a', ok: false, none: null });
    expect(e.cause).toBe(cause);
    expect(typeof e.stack).toBe('string');
  });

  it('defaults details to {} and leaves cause unset', () => {
    const e = new TaqubaError('CANCELLED', 'stop');
    expect(e.details).toEqual({});
    expect('cause' in e).toBe(false);
  });

  it('the brand is a hidden, fixed property', () => {
    const e = new TaqubaError('INTERNAL', 'x');
    expect((e as unknown as Record<symbol, unknown>)[BRAND]).toBe(true);
    expect(Object.keys(e)).not.toContain(BRAND);
    expect(JSON.stringify(Object.keys(e))).not.toContain('taquba');
    expect(() => {
      (e as unknown as Record<symbol, unknown>)[BRAND] = false;
    }).toThrow(TypeError);
  });

  it('lists every code exactly once', () => {
    expect(Object.keys(ALL_CODES)).toHaveLength(22);
    for (const [, code] of SUBCLASSES) expect(ALL_CODES[code]).toBe(true);
  });

  it.each(SUBCLASSES)('%o has its code, name and both instanceof checks', (Cls, code, name) => {
    const e = new Cls('boom');
    expect(e.code).toBe(code);
    expect(e.name).toBe(name);
    expect(e.message).toBe('boom');
    expect(e).toBeInstanceOf(Cls);
    expect(e).toBeInstanceOf(TaqubaError);
    expect(e).toBeInstanceOf(Error);
    expect(isTaqubaError(e)).toBe(true);
    expect(isTaqubaError(e, code)).toBe(true);
    expect(isTaqubaError(e, code === 'CONFLICT' ? 'FENCED' : 'CONFLICT')).toBe(false);
  });

  it('subclasses do not match each other', () => {
    const e = new ConflictError('c');
    expect(e instanceof FencedError).toBe(false);
    expect(new FencedError('f') instanceof ConflictError).toBe(false);
    expect(new TaqubaError('CONFLICT', 'base') instanceof ConflictError).toBe(false);
  });

  it('subclasses pass details and cause through', () => {
    const cause = new Error('disk');
    const e = new StoreUnavailableError('io failed', { key: 'db/wal/1' }, cause);
    expect(e.details).toEqual({ key: 'db/wal/1' });
    expect(e.cause).toBe(cause);
    expect(new ConflictError('c').details).toEqual({});
  });

  it('rejects non-library values', () => {
    for (const v of [null, undefined, 0, 'CONFLICT', {}, { code: 'CONFLICT' }, new Error('x'), Object.assign(new Error('x'), { code: 'CONFLICT' })]) {
      expect(v instanceof TaqubaError).toBe(false);
      expect(isTaqubaError(v)).toBe(false);
    }
    // A brand that is not exactly `true` does not count.
    expect({ [BRAND]: 1 } instanceof TaqubaError).toBe(false);
  });

  it('recognizes a branded object built without the constructor (another copy of the package)', () => {
    const foreign = Object.create(Error.prototype) as Record<string | symbol, unknown>;
    Object.defineProperty(foreign, BRAND, { value: true });
    foreign.code = 'FENCED';
    foreign.message = 'newer writer';
    expect(foreign instanceof TaqubaError).toBe(true);
    expect(isTaqubaError(foreign)).toBe(true);
    expect(isTaqubaError(foreign, 'FENCED')).toBe(true);
    expect(isTaqubaError(foreign, 'CLOSED')).toBe(false);
    // Subclasses keep plain prototype checks.
    expect(foreign instanceof FencedError).toBe(false);

    const bare = Object.create(null) as Record<string | symbol, unknown>;
    bare[BRAND] = true;
    bare.code = 'CLOSED';
    expect(bare instanceof TaqubaError).toBe(true);
    expect(isTaqubaError(bare, 'CLOSED')).toBe(true);
  });

  it('recognizes a branded error from another realm (node:vm context)', () => {
    const foreign = runInNewContext(`
      const e = new Error('from another realm');
      Object.defineProperty(e, Symbol.for('taquba-workflow.error'), { value: true });
      e.code = 'CONFLICT';
      e;
    `) as unknown;
    expect(foreign instanceof Error).toBe(false); // a different realm's Error
    expect(foreign instanceof TaqubaError).toBe(true);
    expect(isTaqubaError(foreign, 'CONFLICT')).toBe(true);
    expect(runInNewContext(`new Error('plain')`) instanceof TaqubaError).toBe(false);
  });

  it('isTaqubaError narrows the type', () => {
    const e: unknown = new NotFoundError('no such job', { job: 'j1' });
    if (!isTaqubaError(e, 'NOT_FOUND')) throw new Error('expected a library error');
    const code: ErrorCode = e.code;
    expect(code).toBe('NOT_FOUND');
    expect(e.details.job).toBe('j1');
  });
});

describe('invariant', () => {
  it('passes on truthy conditions', () => {
    expect(() => invariant(1, 'one')).not.toThrow();
    expect(() => invariant({}, 'object')).not.toThrow();
  });

  it('throws INTERNAL naming the invariant', () => {
    let thrown: unknown;
    try {
      invariant(0, 'seq-monotonic', { seq: 3 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InternalError);
    expect(isTaqubaError(thrown, 'INTERNAL')).toBe(true);
    expect((thrown as InternalError).message).toContain('seq-monotonic');
    expect((thrown as InternalError).details).toEqual({ invariant: 'seq-monotonic', seq: 3 });
  });
});
