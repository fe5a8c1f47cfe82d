/**
 * A faithful-enough S3 test server on 127.0.0.1: s3rver behind a small HTTP front.
 *
 * s3rver speaks the protocol but (1) ignores `If-None-Match` / `If-Match` on PUT, (2) breaks a GET
 * that overlaps a PUT of the same key (it truncates files in place), (3) lists keys in directory
 * walk order rather than key order (`a/b/c` before `a/b-`), and (4) can hand out a wrong ETag when
 * a listing reads a key being written. The front fixes these for our use:
 *   - every object request runs under a per-key mutex; listings and bucket requests run alone (a
 *     listing reads every object's metadata and would race with writes). s3rver removes a key's
 *     directories on delete once empty, which breaks a concurrent put into them: the front keeps
 *     a marker file in every directory it has seen a put into;
 *   - PUT enforces `If-None-Match: *` (412 when the key exists) and `If-Match` (412 on another
 *     ETag, 404 NoSuchKey when the key is missing, as AWS answers), with S3's XML error bodies;
 *   - ListObjectsV2 is answered by the front from s3rver's store, in UTF-8 byte order, with
 *     `start-after`, `max-keys` and continuation tokens;
 *   - a ranged GET of an empty object answers 416 (s3rver sends a broken 206).
 * It accepts only the access key `S3RVER` (s3rver checks no V4 signature, neither does the front).
 * Faults can be injected per request (status codes, dropped connections, hangs), before or after
 * s3rver performed the request.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { KeyedMutex, RwLock } from './s3-locks.js';
import { listObjectsV2Xml, type ListedObject } from './s3-list.js';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** A fault the front injects into matching requests. */
export interface S3Fault {
  /** `status`: answer with an S3 error; `drop`: destroy the connection; `hang`: never answer. */
  readonly type: 'status' | 'drop' | 'hang';
  /** `before` (default): s3rver never sees the request. `after`: s3rver performs it, the client still sees the fault. */
  readonly when?: 'before' | 'after';
  /** For `status`: the HTTP status (default 503) and S3 code (default SlowDown for 503/429, else InternalError). */
  readonly status?: number;
  readonly code?: string;
  /** Only requests with this method (`PUT`, `GET`, `HEAD`, `DELETE`, or `LIST` for ListObjectsV2). */
  readonly method?: string;
  /** Only object requests whose key starts with this (a listing's key is its prefix). */
  readonly keyPrefix?: string;
  /** How many matching requests to hit (default 1; Infinity for all). */
  readonly count?: number;
  /** Fire on every n-th matching request only (default 1: each one). */
  readonly every?: number;
  /** Runs (no lock held) just before the fault: for `after`, once s3rver performed the request. */
  readonly hook?: () => Promise<void>;
}

export interface S3FaultHandle {
  readonly fired: number;
  remove(): void;
}

export interface S3TestServer {
  /** `http://127.0.0.1:<port>` of the front; use path-style addressing. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly credentials: typeof S3RVER_CREDENTIALS;
  /** Requests the front received, by method (`LIST` for ListObjectsV2). */
  readonly requestCounts: Record<string, number>;
  injectFault(fault: S3Fault): S3FaultHandle;
  clearFaults(): void;
  stop(): Promise<void>;
}

export interface S3TestServerOptions {
  readonly bucket?: string;
  /** Largest page a listing returns (S3: 1000). Small values exercise pagination. */
  readonly maxListKeys?: number;
}

interface StoreMeta {
  etag: string;
  'content-length': number | string;
  'last-modified': string;
}
interface S3rverStore {
  getMetadata(bucket: string, key: string): Promise<StoreMeta>;
  getResourcePath(bucket: string, key: string, resource: 'object'): string;
  listObjects(bucket: string, options: { prefix?: string; maxKeys: number }): Promise<{ objects: { key: string; size: number; metadata: StoreMeta }[] }>;
}

interface ActiveFault extends S3Fault {
  matched: number;
  fired: number;
}

const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Starts s3rver (temp directory, silent) and the front, both on 127.0.0.1 and free ports. */
export async function startS3TestServer(options: S3TestServerOptions = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'taquba-test';
  const maxListKeys = options.maxListKeys ?? 1000;
  const directory = await mkdtemp(join(tmpdir(), 'taquba-s3rver-'));
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const upstreamAddress = await s3rver.run();
  const store = (s3rver as unknown as { store: S3rverStore }).store;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const keys = new KeyedMutex();
  const global = new RwLock();
  const faults: ActiveFault[] = [];
  const requestCounts: Record<string, number> = {};

  const sendError = (res: http.ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}): void => {
    const requestId = randomUUID();
    const fields = Object.entries(extra)
      .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
      .join('');
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>${fields}<RequestId>${requestId}</RequestId><HostId>taquba-front</HostId></Error>`;
    res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': requestId });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  };

  const drain = (incoming: http.IncomingMessage): Promise<void> =>
    new Promise((resolve) => {
      if (incoming.complete) return resolve();
      incoming.on('end', resolve).on('error', () => resolve()).on('close', resolve).resume();
    });

  const takeFault = (method: string, key: string | undefined, when: 'before' | 'after'): ActiveFault | undefined => {
    for (const f of faults) {
      if ((f.when ?? 'before') !== when || f.fired >= (f.count ?? 1)) continue;
      if (f.method !== undefined && f.method !== method) continue;
      if (f.keyPrefix !== undefined && (key === undefined || !key.startsWith(f.keyPrefix))) continue;
      f.matched++;
      if ((f.matched - 1) % (f.every ?? 1) !== 0) continue;
      f.fired++;
      return f;
    }
    return undefined;
  };

  /** Applies a fault (after its hook); true when it consumed the response. */
  const applyFault = async (fault: ActiveFault | undefined, res: http.ServerResponse): Promise<boolean> => {
    if (!fault) return false;
    await fault.hook?.();
    if (fault.type === 'drop') res.socket?.destroy();
    else if (fault.type === 'status') {
      await drain(res.req);
      const status = fault.status ?? 503;
      const code = fault.code ?? (status === 503 || status === 429 ? 'SlowDown' : 'InternalError');
      sendError(res, status, code, 'injected fault');
    } // hang: leave the request open until the client gives up or the server stops
    return true;
  };

  /** The whole request body; rejects if the client goes away first (so s3rver never stores a torn upload). */
  const readBody = (incoming: http.IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (c: Buffer) => chunks.push(c));
      incoming.on('end', () => resolve(Buffer.concat(chunks)));
      incoming.on('error', reject);
      incoming.on('close', () => {
        if (!incoming.complete) reject(new Error('client closed the request before its body ended'));
      });
    });

  /** Sends the request with its buffered body to s3rver and buffers its whole answer (so the key lock covers all of it). */
  const forward = (incoming: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const upstream = http.request(
        { host: '127.0.0.1', port: upstreamAddress.port, method: incoming.method, path: incoming.url, headers: incoming.headers, agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => resolve({ status: response.statusCode ?? 500, headers: response.headers, body: Buffer.concat(chunks) }));
          response.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });

  // s3rver deletes a key's directories once they are empty, which breaks a concurrent put into
  // them. A marker file (never listed: it lacks s3rver's object suffix) keeps them non-empty.
  const keptDirectories = new Set<string>();
  const keepDirectories = async (key: string): Promise<void> => {
    const parts = key.split('/').slice(0, -1);
    for (let depth = 1; depth <= parts.length; depth++) {
      const dir = join(directory, bucket, ...parts.slice(0, depth));
      if (keptDirectories.has(dir)) continue;
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, '.taquba-keep'), '');
      keptDirectories.add(dir);
    }
  };

  // s3rver answers a PUT of a buffered body before its write stream has opened and filled the
  // object file; under load a listing or GET right after the answer misses the object. Wait
  // (inside the key lock) until the file holds the whole body.
  const objectWritten = async (key: string, length: number): Promise<void> => {
    const path = store.getResourcePath(bucket, key, 'object');
    for (let i = 0; i < 400; i++) {
      if ((await stat(path).then((st) => st.size, () => -1)) === length) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  const metaOf = async (key: string): Promise<StoreMeta | undefined> => {
    try {
      return await store.getMetadata(bucket, key);
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return undefined;
      throw e;
    }
  };

  /** The front's own answer for a PUT precondition, or undefined when s3rver may proceed. */
  const checkPut = async (incoming: http.IncomingMessage, key: string): Promise<[number, string, Record<string, string>] | undefined> => {
    const ifNoneMatch = incoming.headers['if-none-match'];
    const ifMatch = incoming.headers['if-match'];
    if (ifNoneMatch === undefined && ifMatch === undefined) return undefined;
    const meta = await metaOf(key);
    if (ifNoneMatch !== undefined && meta) return [412, 'PreconditionFailed', { Condition: 'If-None-Match' }];
    if (ifMatch !== undefined) {
      if (!meta) return [404, 'NoSuchKey', { Key: key }];
      const strip = (s: string): string => s.replace(/"/g, '').trim();
      if (ifMatch.trim() !== '*' && strip(ifMatch) !== strip(meta.etag)) return [412, 'PreconditionFailed', { Condition: 'If-Match' }];
    }
    return undefined;
  };

  const listObjects = async (url: URL): Promise<string> => {
    const prefix = url.searchParams.get('prefix') ?? '';
    const token = url.searchParams.get('continuation-token');
    const startAfter = token !== null ? Buffer.from(token, 'base64url').toString('utf8') : (url.searchParams.get('start-after') ?? '');
    const maxKeys = Math.min(maxListKeys, Number(url.searchParams.get('max-keys') ?? 1000));
    const { objects } = await store.listObjects(bucket, { prefix: prefix || undefined, maxKeys: Infinity });
    const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
    const listed: ListedObject[] = objects
      .filter((o) => o.key.startsWith(prefix) && Buffer.compare(utf8(o.key), utf8(startAfter)) > 0)
      .sort((a, b) => Buffer.compare(utf8(a.key), utf8(b.key)))
      .map((o) => ({ key: o.key, size: o.size, etag: o.metadata.etag, lastModified: new Date(o.metadata['last-modified']) }));
    const page = listed.slice(0, maxKeys);
    const truncated = listed.length > page.length;
    return listObjectsV2Xml({
      bucket,
      prefix,
      maxKeys,
      startAfter: token === null ? (url.searchParams.get('start-after') ?? undefined) : undefined,
      continuationToken: token ?? undefined,
      nextContinuationToken: truncated ? Buffer.from(page[page.length - 1].key, 'utf8').toString('base64url') : undefined,
      objects: page,
    });
  };

  const handle = async (incoming: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(incoming.url ?? '/', 'http://front');
    const [, bucketPart = '', ...rest] = url.pathname.split('/');
    const key = rest.length > 0 && rest.join('/') !== '' ? decodeURIComponent(rest.join('/')) : undefined;
    // Requests for other buckets go to s3rver untouched (it answers NoSuchBucket).
    const ours = bucketPart === bucket;
    const isList = ours && incoming.method === 'GET' && key === undefined && url.searchParams.get('list-type') === '2';
    const method = isList ? 'LIST' : (incoming.method ?? 'GET');
    const faultKey = isList ? (url.searchParams.get('prefix') ?? '') : key;
    requestCounts[method] = (requestCounts[method] ?? 0) + 1;

    if (await applyFault(takeFault(method, faultKey, 'before'), res)) return;
    const body = await readBody(incoming);
    const accessKey = /Credential=([^/]+)\//.exec(incoming.headers.authorization ?? '')?.[1];
    if (accessKey !== S3RVER_CREDENTIALS.accessKeyId) {
      return sendError(res, 403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKey ?? '' });
    }

    const exclusive = key === undefined || !ours;
    const releaseGlobal = await global.acquire(exclusive);
    let answer: { status: number; headers: http.OutgoingHttpHeaders; body: Buffer } | [number, string, Record<string, string>];
    try {
      if (isList) {
        const body = Buffer.from(await listObjects(url), 'utf8');
        answer = { status: 200, headers: { 'content-type': 'application/xml' }, body };
      } else if (exclusive || key === undefined) {
        answer = await forward(incoming, body);
      } else {
        answer = await keys.run(key, async () => {
          if (incoming.method === 'PUT') {
            await keepDirectories(key);
            const refusal = await checkPut(incoming, key);
            if (refusal) return refusal;
          }
          if ((incoming.method === 'GET' || incoming.method === 'HEAD') && incoming.headers.range !== undefined && Number((await metaOf(key))?.['content-length']) === 0) {
            return [416, 'InvalidRange', { RangeRequested: String(incoming.headers.range), ActualObjectSize: '0' }];
          }
          const answered = await forward(incoming, body);
          if (incoming.method === 'PUT' && answered.status === 200 && !/[?&](partNumber|uploadId)=/.test(incoming.url ?? '') && incoming.headers['x-amz-copy-source'] === undefined) await objectWritten(key, Number(incoming.headers['x-amz-decoded-content-length'] ?? body.length));
          return answered;
        });
      }
    } finally {
      releaseGlobal();
    }

    if (await applyFault(takeFault(method, faultKey, 'after'), res)) return;
    if (Array.isArray(answer)) {
      const [status, code, extra] = answer;
      const messages: Record<string, string> = {
        PreconditionFailed: 'At least one of the pre-conditions you specified did not hold',
        NoSuchKey: 'The specified key does not exist.',
        InvalidRange: 'The requested range is not satisfiable',
      };
      return sendError(res, status, code, messages[code] ?? code, extra);
    }
    const headers = { ...answer.headers };
    for (const hop of ['connection', 'keep-alive', 'transfer-encoding']) delete headers[hop];
    if (incoming.method !== 'HEAD') headers['content-length'] = answer.body.length;
    res.writeHead(answer.status, headers);
    res.end(incoming.method === 'HEAD' ? undefined : answer.body);
  };

  const sockets = new Set<Socket>();
  const front = http.createServer({ keepAlive: true }, (incoming, res) => {
    handle(incoming, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'InternalError', `front: ${String(e)}`);
      else res.destroy();
    });
  });
  front.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    credentials: S3RVER_CREDENTIALS,
    requestCounts,
    injectFault(fault: S3Fault): S3FaultHandle {
      const active: ActiveFault = { ...fault, matched: 0, fired: 0 };
      faults.push(active);
      return {
        get fired() {
          return active.fired;
        },
        remove: () => {
          const i = faults.indexOf(active);
          if (i >= 0) faults.splice(i, 1);
        },
      };
    },
    clearFaults(): void {
      faults.length = 0;
    },
    async stop(): Promise<void> {
      faults.length = 0;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      agent.destroy();
      await s3rver.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
