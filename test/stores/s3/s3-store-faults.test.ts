/**
 * S3ObjectStore against injected faults (local test server only): throttling, 5xx, hangs and
 * dropped connections are retried transparently; retried conditional puts recognise their own
 * earlier attempt; refusals map to stable codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTaqubaError, type TaqubaError } from '../../../src/core/errors.js';
import { S3ObjectStore } from '../../../src/stores/s3/index.js';
import { classifyS3Error, S3RequestTimeout } from '../../../src/stores/s3/s3-errors.js';
import { S3_EXTERNAL, openS3Target, type S3Target } from '../../setup/s3-target.js';
import type { S3TestServer } from '../../setup/s3-server.js';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const fromText = (b: Uint8Array): string => new TextDecoder().decode(b);

async function rejection(p: Promise<unknown>): Promise<TaqubaError> {
  try {
    await p;
  } catch (e) {
    if (isTaqubaError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe.skipIf(S3_EXTERNAL)('S3ObjectStore under injected faults', () => {
  let target: S3Target;
  let server: S3TestServer;
  beforeAll(async () => {
    target = await openS3Target();
    server = target.server!;
  });
  afterAll(async () => {
    await target?.close();
  });

  /** A store with a short request deadline, so hangs cost little. */
  const newStore = (): S3ObjectStore => target.newStore({ requestTimeoutMs: 400 });
  const count = (method: string): number => server.requestCounts[method] ?? 0;

  it('retries 503 SlowDown and 500 InternalError transparently', async () => {
    const store = newStore();
    const slowDown = server.injectFault({ type: 'status', status: 503, count: 2, method: 'PUT', keyPrefix: store.prefix });
    const puts = count('PUT');
    const { version } = await store.put('k', text('v'));
    // Two answered 503, then one landed (a loaded machine may add a retry of a request past its deadline).
    expect(slowDown.fired).toBe(2);
    expect(count('PUT') - puts).toBeGreaterThanOrEqual(3);
    server.injectFault({ type: 'status', status: 500, method: 'GET', keyPrefix: store.prefix });
    expect(await store.get('k')).toEqual({ data: text('v'), version });
    server.injectFault({ type: 'status', status: 429, code: 'TooManyRequests', method: 'DELETE', keyPrefix: store.prefix });
    await store.delete('k');
    expect(await store.get('k')).toBeUndefined();
  });

  it('retries a batch delete (DeleteObjects) that is throttled', async () => {
    const store = newStore();
    for (let i = 0; i < 5; i++) await store.put(`m/${i}`, text(String(i)));
    server.injectFault({ type: 'status', status: 503, method: 'POST' });
    const posts = count('POST');
    await store.deleteMany(['m/0', 'm/1', 'm/2', 'm/absent']);
    expect(count('POST') - posts).toBe(2);
    const keys: string[] = [];
    for await (const info of store.list('m/')) keys.push(info.key);
    expect(keys).toEqual(['m/3', 'm/4']);
  });

  it('retries a request that hangs past the deadline', async () => {
    const store = newStore();
    await store.put('k', text('v'));
    const hang = server.injectFault({ type: 'hang', method: 'GET', keyPrefix: store.prefix });
    const start = performance.now();
    expect(fromText((await store.get('k'))!.data)).toBe('v');
    expect(hang.fired).toBe(1);
    expect(performance.now() - start).toBeGreaterThanOrEqual(350);
  });

  it('retries a dropped connection, and a listing page that fails', async () => {
    const store = newStore();
    server.injectFault({ type: 'drop', method: 'PUT', keyPrefix: store.prefix });
    for (let i = 0; i < 5; i++) await store.put(`l/${i}`, text(String(i)));
    server.injectFault({ type: 'status', status: 503, method: 'LIST', keyPrefix: store.prefix });
    const keys: string[] = [];
    for await (const info of store.list('l/')) keys.push(info.key);
    expect(keys).toEqual(['l/0', 'l/1', 'l/2', 'l/3', 'l/4']);
  });

  it('gives up after maxAttempts with STORE_UNAVAILABLE, retryable, keeping the SDK error', async () => {
    const store = target.newStore({ retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const fault = server.injectFault({ type: 'status', status: 503, count: Infinity, method: 'PUT', keyPrefix: store.prefix });
    const e = await rejection(store.put('k', text('v')));
    fault.remove();
    expect(e.code).toBe('STORE_UNAVAILABLE');
    expect(e.details).toMatchObject({ op: 'put', key: 'k', s3Code: 'SlowDown', status: 503, attempts: 3, retryable: true });
    expect((e.cause as Error).name).toBe('SlowDown');
    expect(fault.fired).toBe(3);
  });

  it('a create-only put whose answer was lost is recognised as its own on retry', async () => {
    const store = newStore();
    server.injectFault({ type: 'drop', when: 'after', method: 'PUT', keyPrefix: store.prefix });
    const { version } = await store.put('wal/1', text('mine'), { ifNoneMatch: '*' });
    expect(await store.get('wal/1')).toEqual({ data: text('mine'), version });
    // A genuine second create still fails.
    expect((await rejection(store.put('wal/1', text('mine'), { ifNoneMatch: '*' }))).code).toBe('PRECONDITION_FAILED');
  });

  it('a compare-and-swap whose answer was lost is recognised as its own on retry', async () => {
    const store = newStore();
    const v1 = (await store.put('m', text('1'))).version;
    server.injectFault({ type: 'status', status: 500, when: 'after', method: 'PUT', keyPrefix: store.prefix });
    const { version } = await store.put('m', text('2'), { ifMatch: v1 });
    expect(await store.get('m')).toEqual({ data: text('2'), version });
  });

  it('a retried create-only put that lost the race to another writer fails with PRECONDITION_FAILED', async () => {
    const store = newStore();
    const other = target.newStore({ prefix: store.prefix });
    server.injectFault({ type: 'status', status: 503, method: 'PUT', keyPrefix: `${store.prefix}wal/`, hook: async () => void (await other.put('wal/2', text('theirs'), { ifNoneMatch: '*' })) });
    const e = await rejection(store.put('wal/2', text('mine'), { ifNoneMatch: '*' }));
    expect(e.code).toBe('PRECONDITION_FAILED');
    expect(fromText((await store.get('wal/2'))!.data)).toBe('theirs');
  });

  it('a retried compare-and-swap that cannot tell whether it landed fails with STORE_UNAVAILABLE, outcome unknown', async () => {
    const store = newStore();
    const other = target.newStore({ prefix: store.prefix });
    const v1 = (await store.put('m', text('1'))).version;
    // Ours lands, its answer is lost, and another writer swaps on top before our retry.
    server.injectFault({
      type: 'drop',
      when: 'after',
      method: 'PUT',
      keyPrefix: `${store.prefix}m`,
      hook: async () => {
        const cur = (await other.get('m'))!;
        await other.put('m', text('3'), { ifMatch: cur.version });
      },
    });
    const e = await rejection(store.put('m', text('2'), { ifMatch: v1 }));
    expect(e.code).toBe('STORE_UNAVAILABLE');
    expect(e.details.outcome).toBe('unknown');
  });

  it('maps refusals to stable codes without retrying them', async () => {
    const base = target.clientConfig;
    const stranger = new S3ObjectStore({ bucket: target.bucket, clientConfig: { ...base, credentials: { accessKeyId: 'NOPE', secretAccessKey: 'x' } } });
    const puts = count('PUT');
    const denied = await rejection(stranger.put('k', text('v')));
    expect([denied.code, denied.details.s3Code, denied.details.status]).toEqual(['STORE_PERMISSION', 'InvalidAccessKeyId', 403]);
    expect(count('PUT') - puts).toBe(1);
    stranger.destroy();

    const nowhere = new S3ObjectStore({ bucket: 'no-such-bucket', clientConfig: base });
    const missing = await rejection(nowhere.put('k', text('v')));
    expect([missing.code, missing.details.s3Code]).toEqual(['INVALID_CONFIG', 'NoSuchBucket']);
    const listing = (async () => {
      for await (const _ of nowhere.list('')) break;
    })();
    expect((await rejection(listing)).code).toBe('INVALID_CONFIG');
    nowhere.destroy();

    const store = newStore();
    server.injectFault({ type: 'status', status: 501, code: 'NotImplemented', method: 'PUT', keyPrefix: store.prefix });
    expect((await rejection(store.put('k', text('v'), { ifNoneMatch: '*' }))).code).toBe('UNSUPPORTED_PLATFORM');
    server.injectFault({ type: 'status', status: 400, code: 'InvalidArgument', method: 'PUT', keyPrefix: store.prefix });
    const odd = await rejection(store.put('k', text('v')));
    expect([odd.code, odd.details.s3Code, odd.details.retryable]).toEqual(['STORE_UNAVAILABLE', 'InvalidArgument', false]);
  });
});

describe('S3ObjectStore options', () => {
  it('rejects bad options with INVALID_CONFIG naming the option', () => {
    const bad: [unknown, string][] = [
      [{}, 'bucket'],
      [{ bucket: '' }, 'bucket'],
      [{ bucket: 'b', prefix: '/abs/' }, 'prefix'],
      [{ bucket: 'b', prefix: 'a//' }, 'prefix'],
      [{ bucket: 'b', retry: { maxAttempts: 0 } }, 'retry.maxAttempts'],
      [{ bucket: 'b', retry: { maxAttempts: 1.5 } }, 'retry.maxAttempts'],
      [{ bucket: 'b', retry: { baseDelayMs: -1 } }, 'retry.baseDelayMs'],
      [{ bucket: 'b', requestTimeoutMs: Number.NaN }, 'requestTimeoutMs'],
      [{ bucket: 'b', client: {}, clientConfig: {} }, 'client'],
    ];
    for (const [options, option] of bad) {
      expect(() => new S3ObjectStore(options as never), option).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', details: { option } }));
    }
  });

  it('creates no client and sends nothing until the first call', async () => {
    const store = new S3ObjectStore({ bucket: 'b', prefix: 'p/', clientConfig: { region: 'us-east-1', endpoint: 'http://127.0.0.1:1' } });
    expect((store as unknown as { clientInstance: unknown }).clientInstance).toBeUndefined();
    // Key checks happen before any request.
    expect((await rejection(store.get('a//b'))).code).toBe('INVALID_ARGUMENT');
    expect((store as unknown as { clientInstance: unknown }).clientInstance).toBeUndefined();
    store.destroy();
  });
});

describe('classifyS3Error', () => {
  const service = (name: string, status: number): Error => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status, attempts: 1 } });
  const errno = (code: string): Error => Object.assign(new Error(`connect ${code}`), { code });

  it.each([
    ['NoSuchKey 404', service('NoSuchKey', 404), 'not-found'],
    ['bare 404 from HEAD', service('NotFound', 404), 'not-found'],
    ['NoSuchBucket 404', service('NoSuchBucket', 404), 'config'],
    ['PreconditionFailed 412', service('PreconditionFailed', 412), 'precondition'],
    ['ConditionalRequestConflict 409', service('ConditionalRequestConflict', 409), 'precondition'],
    ['InvalidRange 416', service('InvalidRange', 416), 'invalid-range'],
    ['SlowDown 503', service('SlowDown', 503), 'transient'],
    ['429 without a code', service('Unknown', 429), 'transient'],
    ['RequestTimeout 400', service('RequestTimeout', 400), 'transient'],
    ['502 from a proxy', service('Unknown', 502), 'transient'],
    ['AccessDenied 403', service('AccessDenied', 403), 'permission'],
    ['any other 403', service('Forbidden', 403), 'permission'],
    ['PermanentRedirect 301', service('PermanentRedirect', 301), 'config'],
    ['NotImplemented 501', service('NotImplemented', 501), 'unsupported'],
    ['KeyTooLongError 400', service('KeyTooLongError', 400), 'invalid-argument'],
    ['InvalidArgument 400', service('InvalidArgument', 400), 'other'],
    ['ECONNRESET', errno('ECONNRESET'), 'transient'],
    ['browser fetch failure', new TypeError('Failed to fetch'), 'transient'],
    ['our deadline', new S3RequestTimeout(100), 'transient'],
    ['missing credentials', Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }), 'permission'],
    ['missing region', new Error('Region is missing'), 'config'],
  ])('%s is %s', (_, error, kind) => {
    expect(classifyS3Error(error)).toBe(kind);
  });
});
