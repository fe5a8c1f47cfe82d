/**
 * An S3-protocol test server on 127.0.0.1, objects held in memory. The S3 store's tests drive it
 * through the real AWS SDK over HTTP. It speaks the part of the protocol the store uses and is
 * strict where S3 is:
 *   - PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects, ListObjectsV2, HeadBucket;
 *     anything else answers 501 NotImplemented, so a new use shows up instead of passing unchecked;
 *   - PUT honours `If-None-Match: *` (412 when the key exists) and `If-Match` (412 on another ETag,
 *     404 NoSuchKey when the key is missing, as AWS answers);
 *   - bodies are checked as S3 checks them: `x-amz-content-sha256`, `Content-MD5` and the
 *     `x-amz-checksum-*` headers or trailers (aws-chunked bodies are decoded), so a torn upload is
 *     refused, never stored;
 *   - ETags are the body's MD5; ranged GETs answer 206 with `Content-Range`, 416 past the end (and
 *     for any range of an empty object);
 *   - listings are in UTF-8 byte order, with `start-after`, `max-keys` and continuation tokens;
 *   - errors carry S3's XML bodies and codes.
 * Each operation applies in one turn of the event loop once its request body has arrived, so
 * operations are atomic, as they are on S3. It accepts only the access key of
 * `S3_TEST_CREDENTIALS` (signatures are not checked). Faults can be injected per request (status
 * codes, dropped connections, hangs), before or after the operation is applied.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { crc32 } from 'node:zlib';
import { listObjectsV2Xml, type ListedObject } from './s3-list.js';

export const S3_TEST_CREDENTIALS = { accessKeyId: 'taquba-test', secretAccessKey: 'taquba-test' } as const;

/** A fault the server injects into matching requests. */
export interface S3Fault {
  /** `status`: answer with an S3 error; `drop`: destroy the connection; `hang`: never answer. */
  readonly type: 'status' | 'drop' | 'hang';
  /** `before` (default): the operation is not applied. `after`: it is applied, the client still sees the fault. */
  readonly when?: 'before' | 'after';
  /** For `status`: the HTTP status (default 503) and S3 code (default SlowDown for 503/429, else InternalError). */
  readonly status?: number;
  readonly code?: string;
  /** Only requests with this method (`PUT`, `GET`, `HEAD`, `DELETE`, `POST`, or `LIST` for ListObjectsV2). */
  readonly method?: string;
  /** Only object requests whose key starts with this (a listing's key is its prefix). */
  readonly keyPrefix?: string;
  /** How many matching requests to hit (default 1; Infinity for all). */
  readonly count?: number;
  /** Fire on every n-th matching request only (default 1: each one). */
  readonly every?: number;
  /** Runs just before the fault: for `after`, once the operation was applied. */
  readonly hook?: () => Promise<void>;
}

export interface S3FaultHandle {
  readonly fired: number;
  remove(): void;
}

export interface S3TestServer {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly credentials: typeof S3_TEST_CREDENTIALS;
  /** Requests received, by method (`LIST` for ListObjectsV2). */
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

interface StoredObject {
  readonly body: Buffer;
  /** Quoted MD5 of the body, as S3 sends it. */
  readonly etag: string;
  readonly lastModified: Date;
  readonly contentType: string;
  /** The key as UTF-8, the order S3 lists in. */
  readonly sortKey: Buffer;
}

interface ActiveFault extends S3Fault {
  matched: number;
  fired: number;
}

/** An S3 error answer: status, code and extra XML fields. */
class S3Refusal {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly message: string,
    readonly extra: Record<string, string> = {},
  ) {}
}

interface Answer {
  readonly status: number;
  readonly headers: http.OutgoingHttpHeaders;
  readonly body?: Buffer;
}

const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const xmlUnescape = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (e[0] !== '#') return named[e.toLowerCase()]!;
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });

const notImplemented = (what: string): S3Refusal => new S3Refusal(501, 'NotImplemented', `the S3 test server does not implement ${what}`);
const noSuchKey = (key: string): S3Refusal => new S3Refusal(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });

/** Checks a body against the digests the request declares (S3 refuses a mismatch and stores nothing). */
function verifyDigests(body: Buffer, headers: Record<string, string | undefined>, payloadHash: string | undefined): void {
  const bad = (code: string, what: string): S3Refusal => new S3Refusal(400, code, `The ${what} you specified did not match the calculated checksum.`);
  if (payloadHash !== undefined && /^[0-9a-f]{64}$/.test(payloadHash) && createHash('sha256').update(body).digest('hex') !== payloadHash) {
    throw new S3Refusal(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  const md5 = headers['content-md5'];
  if (md5 !== undefined && createHash('md5').update(body).digest('base64') !== md5) throw bad('BadDigest', 'Content-MD5');
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('x-amz-checksum-') || name === 'x-amz-checksum-type' || value === undefined) continue;
    const algorithm = name.slice('x-amz-checksum-'.length);
    let actual: string;
    if (algorithm === 'crc32') {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(crc32(body));
      actual = b.toString('base64');
    } else if (algorithm === 'sha256' || algorithm === 'sha1') actual = createHash(algorithm).update(body).digest('base64');
    else throw notImplemented(`the ${algorithm} checksum`);
    if (actual !== value) throw new S3Refusal(400, 'BadDigest', `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`);
  }
}

/** Decodes an aws-chunked body (`size[;chunk-signature=..]\r\n data \r\n ... 0\r\n trailers \r\n`). */
function decodeAwsChunked(raw: Buffer): { body: Buffer; trailers: Record<string, string> } {
  const malformed = (): S3Refusal => new S3Refusal(400, 'IncompleteBody', 'The request body is not a complete aws-chunked body.');
  const chunks: Buffer[] = [];
  let at = 0;
  const line = (): string => {
    const end = raw.indexOf('\r\n', at);
    if (end < 0) throw malformed();
    const text = raw.subarray(at, end).toString('latin1');
    at = end + 2;
    return text;
  };
  for (;;) {
    const size = parseInt(line().split(';')[0]!, 16);
    if (!Number.isFinite(size) || size < 0) throw malformed();
    if (size === 0) break;
    if (at + size + 2 > raw.length) throw malformed();
    chunks.push(raw.subarray(at, at + size));
    at += size;
    if (line() !== '') throw malformed();
  }
  const trailers: Record<string, string> = {};
  for (let l = line(); l !== ''; l = at < raw.length ? line() : '') {
    const colon = l.indexOf(':');
    if (colon < 0) throw malformed();
    trailers[l.slice(0, colon).trim().toLowerCase()] = l.slice(colon + 1).trim();
  }
  return { body: Buffer.concat(chunks), trailers };
}

/** The object's bytes a `Range` header asks for, or the whole body when there is none (or S3 would ignore it). */
function rangeOf(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined; // S3 ignores a range it cannot parse
  const unsatisfiable = new S3Refusal(416, 'InvalidRange', 'The requested range is not satisfiable', { RangeRequested: header, ActualObjectSize: String(size) });
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) throw unsatisfiable;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Number(m[2]);
  if (end < start) return undefined;
  if (start >= size) throw unsatisfiable;
  return { start, end: Math.min(end, size - 1) };
}

/** Starts the server on 127.0.0.1 and a free port. */
export async function startS3TestServer(options: S3TestServerOptions = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'taquba-test';
  const maxListKeys = options.maxListKeys ?? 1000;
  const objects = new Map<string, StoredObject>();
  /** The keys in listing order; rebuilt on the next listing after a key is added or removed. */
  let sortedKeys: string[] | undefined;
  const faults: ActiveFault[] = [];
  const requestCounts: Record<string, number> = {};

  const storeObject = (key: string, body: Buffer, contentType: string | undefined): StoredObject => {
    const object: StoredObject = {
      body,
      etag: `"${createHash('md5').update(body).digest('hex')}"`,
      lastModified: new Date(),
      contentType: contentType ?? 'application/octet-stream',
      sortKey: Buffer.from(key, 'utf8'),
    };
    if (!objects.has(key)) sortedKeys = undefined;
    objects.set(key, object);
    return object;
  };
  const deleteObject = (key: string): void => {
    if (objects.delete(key)) sortedKeys = undefined;
  };

  const sendError = (res: http.ServerResponse, refusal: S3Refusal): void => {
    const requestId = randomUUID();
    const fields = Object.entries(refusal.extra)
      .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
      .join('');
    const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${xmlEscape(refusal.message)}</Message>${fields}<RequestId>${requestId}</RequestId><HostId>taquba-test</HostId></Error>`;
    res.writeHead(refusal.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), 'x-amz-request-id': requestId });
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
      sendError(res, new S3Refusal(status, code, 'injected fault'));
    } // hang: leave the request open until the client gives up or the server stops
    return true;
  };

  /** The whole request body; rejects if the client goes away first (nothing is applied then). */
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

  /** The payload of a request, decoded and checked against its digests. */
  const payloadOf = (incoming: http.IncomingMessage, raw: Buffer): Buffer => {
    const headers = incoming.headers as Record<string, string | undefined>;
    const payloadHash = headers['x-amz-content-sha256'];
    const chunked = payloadHash?.startsWith('STREAMING-') === true || /(^|,)\s*aws-chunked\s*(,|$)/.test(headers['content-encoding'] ?? '');
    if (!chunked) {
      verifyDigests(raw, headers, payloadHash);
      return raw;
    }
    const { body, trailers } = decodeAwsChunked(raw);
    const declared = headers['x-amz-decoded-content-length'];
    if (declared !== undefined && Number(declared) !== body.length) throw new S3Refusal(400, 'IncompleteBody', 'The decoded body is shorter or longer than x-amz-decoded-content-length.');
    verifyDigests(body, { ...headers, ...trailers }, undefined);
    return body;
  };

  const putObject = (incoming: http.IncomingMessage, key: string, body: Buffer): Answer => {
    const existing = objects.get(key);
    const ifNoneMatch = incoming.headers['if-none-match'];
    const ifMatch = incoming.headers['if-match'];
    const failed = (condition: string): S3Refusal =>
      new S3Refusal(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: condition });
    if (ifNoneMatch !== undefined) {
      if (ifNoneMatch.trim() !== '*') throw notImplemented('If-None-Match with an ETag on PUT');
      if (existing) throw failed('If-None-Match');
    }
    if (ifMatch !== undefined) {
      if (!existing) throw noSuchKey(key);
      if (ifMatch.trim() !== '*' && ifMatch.replace(/"/g, '').trim() !== existing.etag.replace(/"/g, '')) throw failed('If-Match');
    }
    const stored = storeObject(key, body, incoming.headers['content-type']);
    return { status: 200, headers: { etag: stored.etag } };
  };

  const getObject = (incoming: http.IncomingMessage, key: string): Answer => {
    const object = objects.get(key);
    if (!object) throw noSuchKey(key);
    const ifMatch = incoming.headers['if-match'];
    const ifNoneMatch = incoming.headers['if-none-match'];
    if (ifMatch !== undefined && ifMatch.trim() !== '*' && ifMatch.replace(/"/g, '').trim() !== object.etag.replace(/"/g, '')) {
      throw new S3Refusal(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: 'If-Match' });
    }
    const headers: http.OutgoingHttpHeaders = {
      etag: object.etag,
      'last-modified': object.lastModified.toUTCString(),
      'content-type': object.contentType,
      'accept-ranges': 'bytes',
    };
    if (ifNoneMatch !== undefined && (ifNoneMatch.trim() === '*' || ifNoneMatch.replace(/"/g, '').trim() === object.etag.replace(/"/g, ''))) return { status: 304, headers };
    const range = rangeOf(incoming.headers.range, object.body.length);
    if (!range) return { status: 200, headers, body: object.body };
    headers['content-range'] = `bytes ${range.start}-${range.end}/${object.body.length}`;
    return { status: 206, headers, body: object.body.subarray(range.start, range.end + 1) };
  };

  const listObjects = (url: URL): Answer => {
    for (const name of url.searchParams.keys()) {
      if (!['list-type', 'prefix', 'start-after', 'continuation-token', 'max-keys', 'fetch-owner', 'x-id'].includes(name)) throw notImplemented(`the ListObjectsV2 parameter ${name}`);
    }
    const prefix = url.searchParams.get('prefix') ?? '';
    const token = url.searchParams.get('continuation-token');
    const after = Buffer.from(token !== null ? Buffer.from(token, 'base64url').toString('utf8') : (url.searchParams.get('start-after') ?? ''), 'utf8');
    const maxKeys = Math.min(maxListKeys, Number(url.searchParams.get('max-keys') ?? 1000));
    sortedKeys ??= [...objects.keys()].sort((a, b) => Buffer.compare(objects.get(a)!.sortKey, objects.get(b)!.sortKey));
    // The first key after both the prefix's start and `after`, by binary search.
    const floor = Buffer.compare(after, Buffer.from(prefix, 'utf8')) >= 0 ? after : Buffer.from(prefix, 'utf8');
    const inclusive = floor !== after;
    let lo = 0;
    let hi = sortedKeys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(objects.get(sortedKeys[mid]!)!.sortKey, floor);
      if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
      else hi = mid;
    }
    const page: ListedObject[] = [];
    let truncated = false;
    for (let i = lo; i < sortedKeys.length && sortedKeys[i]!.startsWith(prefix); i++) {
      if (page.length === maxKeys) {
        truncated = true;
        break;
      }
      const o = objects.get(sortedKeys[i]!)!;
      page.push({ key: sortedKeys[i]!, size: o.body.length, etag: o.etag, lastModified: o.lastModified });
    }
    const xml = listObjectsV2Xml({
      bucket,
      prefix,
      maxKeys,
      startAfter: token === null ? (url.searchParams.get('start-after') ?? undefined) : undefined,
      continuationToken: token ?? undefined,
      nextContinuationToken: truncated ? Buffer.from(page[page.length - 1]!.key, 'utf8').toString('base64url') : undefined,
      objects: page,
    });
    return { status: 200, headers: { 'content-type': 'application/xml' }, body: Buffer.from(xml, 'utf8') };
  };

  const deleteObjects = (body: Buffer): Answer => {
    const xml = body.toString('utf8');
    if (!/<Delete[\s>]/.test(xml)) throw new S3Refusal(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema');
    const keys = [...xml.matchAll(/<Object>\s*<Key>([\s\S]*?)<\/Key>/g)].map((m) => xmlUnescape(m[1]!));
    if (keys.length === 0 || keys.length > 1000) throw new S3Refusal(400, 'MalformedXML', 'A DeleteObjects request names 1 to 1000 keys');
    const quiet = /<Quiet>\s*true\s*<\/Quiet>/.test(xml);
    for (const key of keys) deleteObject(key);
    const deleted = quiet ? '' : keys.map((k) => `<Deleted><Key>${xmlEscape(k)}</Key></Deleted>`).join('');
    const answer = `<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${deleted}</DeleteResult>`;
    return { status: 200, headers: { 'content-type': 'application/xml' }, body: Buffer.from(answer, 'utf8') };
  };

  /** Applies one request whose body has arrived, in this turn of the event loop. */
  const apply = (incoming: http.IncomingMessage, url: URL, key: string | undefined, raw: Buffer): Answer => {
    const method = incoming.method ?? 'GET';
    if (key === undefined) {
      if (method === 'GET' && url.searchParams.get('list-type') === '2') return listObjects(url);
      if (method === 'POST' && url.searchParams.has('delete')) return deleteObjects(payloadOf(incoming, raw));
      if (method === 'HEAD' && [...url.searchParams.keys()].every((k) => k === 'x-id')) return { status: 200, headers: { 'x-amz-bucket-region': 'us-east-1' } };
      throw notImplemented(`${method} on a bucket with ${url.search || 'no parameters'}`);
    }
    for (const name of url.searchParams.keys()) if (name !== 'x-id') throw notImplemented(`the object parameter ${name}`);
    if (method === 'PUT') {
      if (incoming.headers['x-amz-copy-source'] !== undefined) throw notImplemented('CopyObject');
      return putObject(incoming, key, payloadOf(incoming, raw));
    }
    if (method === 'GET' || method === 'HEAD') {
      const answer = getObject(incoming, key);
      return method === 'HEAD' ? { ...answer, body: undefined, headers: { ...answer.headers, 'content-length': answer.body?.length ?? 0 } } : answer;
    }
    if (method === 'DELETE') {
      deleteObject(key);
      return { status: 204, headers: {} };
    }
    throw notImplemented(`${method} on an object`);
  };

  const handle = async (incoming: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(incoming.url ?? '/', 'http://s3');
    const [, bucketPart = '', ...rest] = url.pathname.split('/');
    const key = rest.length > 0 && rest.join('/') !== '' ? decodeURIComponent(rest.join('/')) : undefined;
    const isList = incoming.method === 'GET' && key === undefined && url.searchParams.get('list-type') === '2';
    const method = isList ? 'LIST' : (incoming.method ?? 'GET');
    const faultKey = isList ? (url.searchParams.get('prefix') ?? '') : key;
    requestCounts[method] = (requestCounts[method] ?? 0) + 1;

    if (await applyFault(takeFault(method, faultKey, 'before'), res)) return;
    const raw = await readBody(incoming);
    const accessKey = /Credential=([^/]+)\//.exec(incoming.headers.authorization ?? '')?.[1];
    let answer: Answer | S3Refusal;
    if (accessKey !== S3_TEST_CREDENTIALS.accessKeyId) {
      answer = new S3Refusal(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKey ?? '' });
    } else if (decodeURIComponent(bucketPart) !== bucket) {
      answer = new S3Refusal(404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: decodeURIComponent(bucketPart) });
    } else {
      try {
        answer = apply(incoming, url, key, raw);
      } catch (e) {
        if (!(e instanceof S3Refusal)) throw e;
        answer = e;
      }
    }

    if (await applyFault(takeFault(method, faultKey, 'after'), res)) return;
    if (answer instanceof S3Refusal) return sendError(res, answer);
    const requestId = randomUUID();
    const headers: http.OutgoingHttpHeaders = { 'x-amz-request-id': requestId, ...answer.headers };
    if (incoming.method !== 'HEAD') headers['content-length'] = answer.body?.length ?? 0;
    res.writeHead(answer.status, headers);
    res.end(incoming.method === 'HEAD' ? undefined : answer.body);
  };

  const sockets = new Set<Socket>();
  const server = http.createServer({ keepAlive: true }, (incoming, res) => {
    handle(incoming, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, new S3Refusal(500, 'InternalError', `test server: ${String(e)}`));
      else res.destroy();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    region: 'us-east-1',
    credentials: S3_TEST_CREDENTIALS,
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
      await new Promise<void>((resolve) => server.close(() => resolve()));
      objects.clear();
    },
  };
}
