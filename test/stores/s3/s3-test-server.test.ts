/**
 * The S3 test server itself, through a raw SDK client (no store logic in between): it must answer
 * as S3 does where the store depends on it (conditional writes, digests, ranges, listing order,
 * errors) and refuse what it does not implement. Local only.
 */
import http from 'node:http';
import { CopyObjectCommand, DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3TestServer, type S3TestServer } from '../../setup/s3-server.js';
import { S3_EXTERNAL } from '../../setup/s3-target.js';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

describe.skipIf(S3_EXTERNAL)('S3 test server', () => {
  let server: S3TestServer;
  let client: S3Client;
  let n = 0;
  const fresh = (): string => `server-test/${n++}/`;

  beforeAll(async () => {
    server = await startS3TestServer({ maxListKeys: 3 });
    client = new S3Client({
      endpoint: server.endpoint,
      region: server.region,
      credentials: server.credentials,
      forcePathStyle: true,
      maxAttempts: 1,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  });
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });

  const put = (Key: string, body: string, conditions: { IfNoneMatch?: string; IfMatch?: string } = {}) =>
    client.send(new PutObjectCommand({ Bucket: server.bucket, Key, Body: text(body), ...conditions }));
  const get = async (Key: string): Promise<{ body: string; etag: string }> => {
    const out = await client.send(new GetObjectCommand({ Bucket: server.bucket, Key }));
    return { body: await out.Body!.transformToString(), etag: out.ETag! };
  };
  const failure = async (p: Promise<unknown>): Promise<{ status?: number; code: string }> => {
    try {
      await p;
    } catch (e) {
      if (e instanceof S3ServiceException) return { status: e.$metadata.httpStatusCode, code: e.name };
      throw e;
    }
    throw new Error('expected the request to fail');
  };

  it('32 racing create-only puts: exactly one wins, the others get 412 PreconditionFailed', async () => {
    const key = `${fresh()}race`;
    const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) => put(key, `writer-${i}`, { IfNoneMatch: '*' })));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect([(r.reason as S3ServiceException).$metadata.httpStatusCode, (r.reason as Error).name]).toEqual([412, 'PreconditionFailed']);
    }
    expect((await get(key)).body).toBe(`writer-${winners[0]}`);
  });

  it('8 compare-and-swap increment loops lose no increment', async () => {
    const key = `${fresh()}counter`;
    await put(key, '0');
    const perLoop = 8;
    const loop = async (): Promise<void> => {
      for (let done = 0; done < perLoop; ) {
        const cur = await get(key);
        try {
          await put(key, String(Number(cur.body) + 1), { IfMatch: cur.etag });
          done++;
        } catch (e) {
          if ((e as Error).name !== 'PreconditionFailed') throw e;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, loop));
    expect((await get(key)).body).toBe(String(8 * perLoop));
  });

  it('If-Match on a missing key answers 404 NoSuchKey, as AWS does, and creates nothing', async () => {
    const key = `${fresh()}missing`;
    expect(await failure(put(key, 'x', { IfMatch: '"0123456789abcdef0123456789abcdef"' }))).toEqual({ status: 404, code: 'NoSuchKey' });
    expect(await failure(get(key))).toEqual({ status: 404, code: 'NoSuchKey' });
  });

  it('If-Match with another ETag answers 412 and keeps the object', async () => {
    const key = `${fresh()}cas`;
    const { ETag } = await put(key, 'one');
    await put(key, 'two', { IfMatch: ETag });
    expect(await failure(put(key, 'three', { IfMatch: ETag }))).toEqual({ status: 412, code: 'PreconditionFailed' });
    expect((await get(key)).body).toBe('two');
  });

  it('GETs overlapping PUTs of the same key always see one whole body', async () => {
    const key = `${fresh()}overlap`;
    const bodies = ['a', 'b', 'c'].map((c) => c.repeat(256 * 1024));
    await put(key, bodies[0]);
    const work: Promise<unknown>[] = [];
    const seen: string[] = [];
    // What is checked is each body's integrity. A kept-alive socket the server closed under a
    // loaded machine can reset a request (ECONNRESET, no S3 answer): send that one again.
    const again = async <T>(send: () => Promise<T>): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await send();
        } catch (e) {
          if (e instanceof S3ServiceException || attempt >= 3) throw e;
        }
      }
    };
    for (let i = 0; i < 12; i++) {
      work.push(again(() => put(key, bodies[i % 3]!)));
      work.push(again(() => get(key)).then((g) => seen.push(g.body)));
    }
    await Promise.all(work);
    for (const body of seen) expect(bodies).toContain(body);
  });

  it('lists in UTF-8 key order across pages, with start-after', async () => {
    const prefix = fresh();
    const keys = ['a/b', 'a-c', 'a/b/c', 'a0', 'ab', 'a', 'a/b-', 'a/b0', 'é', 'z'];
    for (const k of keys) await put(prefix + k, k);
    const listAll = async (StartAfter?: string): Promise<string[]> => {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix, StartAfter: token ? undefined : StartAfter, ContinuationToken: token }));
        expect(page.Contents?.length ?? 0).toBeLessThanOrEqual(3);
        out.push(...(page.Contents ?? []).map((c) => c.Key!.slice(prefix.length)));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out;
    };
    const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(await listAll()).toEqual(sorted);
    expect(await listAll(`${prefix}a/b`)).toEqual(sorted.filter((k) => k > 'a/b'));
  });

  it('a deleted key can be created again with If-None-Match, and deleting keeps siblings', async () => {
    const prefix = fresh();
    await put(`${prefix}d/x`, 'x');
    await put(`${prefix}d/y`, 'y');
    await client.send(new DeleteObjectCommand({ Bucket: server.bucket, Key: `${prefix}d/x` }));
    await client.send(new DeleteObjectCommand({ Bucket: server.bucket, Key: `${prefix}d/y` }));
    await put(`${prefix}d/x`, 'again', { IfNoneMatch: '*' });
    expect((await get(`${prefix}d/x`)).body).toBe('again');
  });

  it('a ranged GET of an empty object answers 416', async () => {
    const key = `${fresh()}empty`;
    await put(key, '');
    expect(await failure(client.send(new GetObjectCommand({ Bucket: server.bucket, Key: key, Range: 'bytes=0-9' })))).toEqual({ status: 416, code: 'InvalidRange' });
  });

  it('refuses other credentials with 403 InvalidAccessKeyId', async () => {
    const stranger = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: 'NOPE', secretAccessKey: 'x' } });
    expect(await failure(stranger.send(new PutObjectCommand({ Bucket: server.bucket, Key: `${fresh()}k`, Body: text('x') })))).toEqual({ status: 403, code: 'InvalidAccessKeyId' });
    stranger.destroy();
  });

  it('injects status faults before the request, and after it (the write then landed)', async () => {
    const key = `${fresh()}fault`;
    const before = server.injectFault({ type: 'status', status: 503, method: 'PUT', keyPrefix: key });
    expect(await failure(put(key, 'lost'))).toEqual({ status: 503, code: 'SlowDown' });
    expect(before.fired).toBe(1);
    expect(await failure(get(key))).toEqual({ status: 404, code: 'NoSuchKey' });
    server.injectFault({ type: 'status', status: 500, when: 'after', method: 'PUT', keyPrefix: key });
    expect(await failure(put(key, 'landed'))).toEqual({ status: 500, code: 'InternalError' });
    expect((await get(key)).body).toBe('landed');
  });

  it('injects dropped connections', async () => {
    const key = `${fresh()}drop`;
    server.injectFault({ type: 'drop', method: 'PUT', keyPrefix: key });
    await expect(put(key, 'x')).rejects.toThrow();
    await put(key, 'y');
    expect((await get(key)).body).toBe('y');
  });

  it('ranged GETs answer 206 with Content-Range; a suffix range takes the last bytes; past the end answers 416', async () => {
    const key = `${fresh()}ranges`;
    await put(key, '0123456789');
    const ranged = async (Range: string): Promise<[string, string | undefined]> => {
      const out = await client.send(new GetObjectCommand({ Bucket: server.bucket, Key: key, Range }));
      return [await out.Body!.transformToString(), out.ContentRange];
    };
    expect(await ranged('bytes=2-4')).toEqual(['234', 'bytes 2-4/10']);
    expect(await ranged('bytes=7-100')).toEqual(['789', 'bytes 7-9/10']);
    expect(await ranged('bytes=-3')).toEqual(['789', 'bytes 7-9/10']);
    expect(await failure(ranged('bytes=10-12'))).toEqual({ status: 416, code: 'InvalidRange' });
  });

  it('HEAD answers the size and ETag without a body; DeleteObjects removes only the keys it names', async () => {
    const prefix = fresh();
    const { ETag } = await put(`${prefix}a`, 'alpha');
    await put(`${prefix}b`, 'b');
    await put(`${prefix}c&<d>`, 'c');
    const head = await client.send(new HeadObjectCommand({ Bucket: server.bucket, Key: `${prefix}a` }));
    expect([head.ContentLength, head.ETag]).toEqual([5, ETag]);
    await client.send(new DeleteObjectsCommand({ Bucket: server.bucket, Delete: { Objects: [{ Key: `${prefix}a` }, { Key: `${prefix}c&<d>` }, { Key: `${prefix}absent` }] } }));
    const listed = await client.send(new ListObjectsV2Command({ Bucket: server.bucket, Prefix: prefix }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual([`${prefix}b`]);
  });

  it('refuses a body that does not match its declared digest, and stores nothing', async () => {
    const key = `${fresh()}digest`;
    const body = text('the body');
    expect(await failure(client.send(new PutObjectCommand({ Bucket: server.bucket, Key: key, Body: body, ChecksumCRC32: 'AAAAAA==' })))).toEqual({ status: 400, code: 'BadDigest' });
    // A raw request whose body was cut after the payload hash was computed.
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${server.endpoint}/${server.bucket}/${key}`, {
        method: 'PUT',
        headers: { authorization: `AWS4-HMAC-SHA256 Credential=${server.credentials.accessKeyId}/x/`, 'x-amz-content-sha256': '0'.repeat(64) },
      });
      request.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject);
      request.end('torn');
    });
    expect(status).toBe(400);
    expect(await failure(get(key))).toEqual({ status: 404, code: 'NoSuchKey' });
  });

  it('answers 501 NotImplemented to an operation it does not implement, and 404 NoSuchBucket to another bucket', async () => {
    const key = `${fresh()}copy`;
    await put(key, 'x');
    expect(await failure(client.send(new CopyObjectCommand({ Bucket: server.bucket, Key: `${key}-2`, CopySource: `${server.bucket}/${key}` })))).toEqual({ status: 501, code: 'NotImplemented' });
    expect(await failure(client.send(new PutObjectCommand({ Bucket: 'another-bucket', Key: key, Body: text('x') })))).toEqual({ status: 404, code: 'NoSuchBucket' });
  });
});
