/** The logger option: resolution, the default console format, and what a sink hands a logger. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isTaqubaError } from '../../src/core/errors.js';
import { consoleLogger, resolveLogger, type LogFields } from '../../src/core/logger.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('consoleLogger', () => {
  it('prints warn and error as one line of key=value fields and drops info and debug', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const sink = resolveLogger(undefined);
    sink.debug('noise', { a: 1 });
    sink.info('noise');
    sink.warn('step failed; retrying', { runId: 'r-1', step: 0, error: 'no route to host', nextDelayMs: 1000, missing: undefined, ok: true, obj: { x: 1 } });
    sink.error('gone');
    expect(warn.mock.calls).toEqual([['[taquba] step failed; retrying. runId=r-1 step=0 error="no route to host" nextDelayMs=1000 ok=true obj={"x":1}']]);
    expect(error.mock.calls).toEqual([['[taquba] gone']]);
    expect(log).not.toHaveBeenCalled();
  });

  it('puts a stack field on the lines below, and hands an Error value to the console whole', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    consoleLogger.warn!('runner threw', { error: 'boom', stack: 'Error: boom\n    at here' });
    const e = new Error('disk full');
    consoleLogger.warn!('sweep failed', { error: e });
    expect(warn.mock.calls).toEqual([['[taquba] runner threw. error=boom\nError: boom\n    at here'], ['[taquba] sweep failed. error="disk full"', e]]);
  });
});

describe('resolveLogger', () => {
  it('passes fields objects through, wraps any other detail as { error }, and keeps the logger as this', () => {
    const seen: [string, LogFields | undefined, unknown][] = [];
    const logger = {
      name: 'mine',
      warn(this: { name: string }, message: string, fields?: LogFields) {
        seen.push([message, fields, this.name]);
      },
    };
    const sink = resolveLogger(logger);
    const e = new Error('x');
    sink.warn('plain');
    sink.warn('fields', { runId: 'r' });
    sink.warn('error', e);
    sink.warn('string', 'text');
    sink.error('dropped: no error method');
    expect(seen).toEqual([
      ['plain', undefined, 'mine'],
      ['fields', { runId: 'r' }, 'mine'],
      ['error', { error: e }, 'mine'],
      ['string', { error: 'text' }, 'mine'],
    ]);
  });

  it('false is silent; console itself is accepted', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    resolveLogger(false).warn('nothing');
    expect(warn).not.toHaveBeenCalled();
    resolveLogger(console).warn('through', { a: 1 });
    expect(warn.mock.calls).toEqual([['through', { a: 1 }]]);
  });

  it('swallows what a logger throws', () => {
    const sink = resolveLogger({
      error: () => {
        throw new Error('broken logger');
      },
    });
    expect(() => sink.error('x', { a: 1 })).not.toThrow();
  });

  it.each([
    ['a number', 3, /^logger must be a logger object \(debug\/info\/warn\/error methods\) or false\. logger=3$/],
    ['true', true, /logger=true$/],
    ['a function', () => undefined, /logger must be a logger object/],
    ['a non-function level', { info: 42 }, /^logger\.info must be a function\. logger=object$/],
  ])('rejects %s with INVALID_CONFIG naming the option', (_name, value, message) => {
    let err: unknown;
    try {
      resolveLogger(value, 'logger');
    } catch (e) {
      err = e;
    }
    expect(isTaqubaError(err, 'INVALID_CONFIG')).toBe(true);
    expect((err as Error).message).toMatch(message);
    expect((err as { details: { option: string } }).details.option).toBe('logger');
  });
});
