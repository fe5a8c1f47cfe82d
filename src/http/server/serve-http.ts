/**
 * `serveHttp`: a store's runtime operations served over HTTP (`node:http`), for pages and other
 * processes, with the same typed API as the worker client (`connectHttp` is the client). The
 * routes come from the core's operation list (wire.ts says what they carry): an operation added
 * there is served without being named here. What the server adds: an authentication hook, a
 * body size limit, CORS for pages of other origins, server-sent run events and a graceful close.
 *
 * The host is the caller's: closing the server leaves its runtime running.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { toHex } from '../../core/bytes.js';
import { ClosedError, InvalidArgumentError, InvalidConfigError, StorePermissionError } from '../../core/errors.js';
import { checkOptions, numberRule, optionNames } from '../../core/options.js';
import { show } from '../../core/show.js';
import { OPERATION_NAMES } from '../../core/operations/operation-list.js';
import type { RuntimeOperations } from '../../core/operations/operations.js';
import type { RuntimeHost } from '../../core/operations/runtime-host.js';
import { EVENTS_PATH, OPERATIONS_PATH } from '../wire.js';
import { serveRunEvents } from './event-route.js';
import { serveOperation } from './operation-route.js';
import { sendError } from './responses.js';

export interface ServeHttpOptions {
  /** Default 0: a free port (read it from `port` or `url`). */
  readonly port?: number;
  /** Default `127.0.0.1` (this machine only); `0.0.0.0` or `::` to serve other machines. */
  readonly hostname?: string;
  /** A path the routes live under (`/api/taquba`: `POST /api/taquba/ops/submit`). Default: none. */
  readonly basePath?: string;
  /**
   * Decides whether a request may go on (headers, a token, the peer address). A refusal, or a
   * hook that throws, answers 401 with STORE_PERMISSION (reason `unauthenticated`). CORS
   * preflights are answered without it (browsers send them without credentials). Default: every
   * request may.
   */
  readonly authenticate?: (request: IncomingMessage) => boolean | Promise<boolean>;
  /** Largest request body; larger ones are refused (413, INVALID_ARGUMENT `body_too_large`) unread. Default 8 MiB. */
  readonly maxBodyBytes?: number;
  /** Origins whose pages may call the server (CORS), or `'*'` for any. Default: none (same origin only). */
  readonly allowOrigins?: '*' | readonly string[];
  /** How often an event stream reads its run's state. Default 500 ms. */
  readonly statusPollMs?: number;
  /** The `executor` of the terminal events this server sends. Default: random (`http-…`). */
  readonly hostId?: string;
}

export interface CloseHttpOptions {
  /** Longest wait for requests in flight before their connections are cut. Default 10 s. */
  readonly timeoutMs?: number;
}

/** A listening HTTP host (`serveHttp`). */
export interface HttpRuntimeServer {
  /** Where clients connect (`connectHttp(server.url)`): `http://hostname:port` and the base path. */
  readonly url: string;
  readonly port: number;
  /** The Node server (for its timeouts and events; its request handler is this host's). */
  readonly server: Server;
  /**
   * Stops taking requests, answers waits (null) and ends event streams at once, waits for the
   * other requests in flight (up to `timeoutMs`, then cuts them), and closes. Idempotent.
   */
  close(options?: CloseHttpOptions): Promise<void>;
}

const SERVE_OPTIONS = optionNames<ServeHttpOptions>({
  port: true,
  hostname: true,
  basePath: true,
  authenticate: true,
  maxBodyBytes: true,
  allowOrigins: true,
  statusPollMs: true,
  hostId: true,
});

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const DEFAULT_STATUS_POLL_MS = 500;
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
const BASE_PATH = /^(\/[A-Za-z0-9._~-]+)*$/;

interface Settings {
  readonly port: number;
  readonly hostname: string;
  readonly basePath: string;
  readonly authenticate: ServeHttpOptions['authenticate'];
  readonly maxBodyBytes: number;
  readonly allowOrigins: '*' | ReadonlySet<string>;
  readonly statusPollMs: number;
  readonly hostId: string;
}

function invalid(option: string, message: string): InvalidConfigError {
  return new InvalidConfigError(`${option} ${message}`, { option });
}

function settingsOf(options: ServeHttpOptions = {}): Settings {
  checkOptions(options, SERVE_OPTIONS, 'serveHttp');
  const { port = 0, hostname = '127.0.0.1', basePath = '', authenticate, maxBodyBytes = DEFAULT_MAX_BODY_BYTES, allowOrigins = [], statusPollMs = DEFAULT_STATUS_POLL_MS, hostId } = options;
  const portRule = numberRule(port, { integer: true });
  if (portRule !== undefined || port > 65535) throw invalid('port', `${portRule ?? 'must be at most 65535'}. port=${show(port)}`);
  if (typeof hostname !== 'string' || hostname === '') throw invalid('hostname', `must be a non-empty string. hostname=${show(hostname)}`);
  if (typeof basePath !== 'string' || !BASE_PATH.test(basePath)) throw invalid('basePath', `must be empty or /-separated segments without a trailing /. basePath=${show(basePath)}`);
  if (authenticate !== undefined && typeof authenticate !== 'function') throw invalid('authenticate', `must be a function. authenticate=${show(authenticate)}`);
  const bodyRule = numberRule(maxBodyBytes, { integer: true, min: 1 });
  if (bodyRule !== undefined) throw invalid('maxBodyBytes', `${bodyRule}. maxBodyBytes=${show(maxBodyBytes)}`);
  if (allowOrigins !== '*' && !(Array.isArray(allowOrigins) && allowOrigins.every((o) => typeof o === 'string'))) {
    throw invalid('allowOrigins', `must be '*' or an array of origins. allowOrigins=${show(allowOrigins)}`);
  }
  const pollRule = numberRule(statusPollMs, { min: 1 });
  if (pollRule !== undefined) throw invalid('statusPollMs', `${pollRule}. statusPollMs=${show(statusPollMs)}`);
  if (hostId !== undefined && (typeof hostId !== 'string' || hostId === '')) throw invalid('hostId', `must be a non-empty string. hostId=${show(hostId)}`);
  return {
    port,
    hostname,
    basePath,
    authenticate,
    maxBodyBytes,
    allowOrigins: allowOrigins === '*' ? '*' : new Set(allowOrigins),
    statusPollMs,
    hostId: hostId ?? `http-${toHex(crypto.getRandomValues(new Uint8Array(8)))}`,
  };
}

/** The operations of `host` (a `RuntimeHost`'s, or `host` itself). INVALID_ARGUMENT (`invalid_host`) when an operation is missing. */
function operationsOf(host: RuntimeHost | RuntimeOperations): RuntimeOperations {
  const candidate = (typeof host === 'object' && host !== null && 'operations' in host && typeof host.operations === 'object' ? host.operations : host) as unknown;
  const missing = typeof candidate === 'object' && candidate !== null ? OPERATION_NAMES.filter((name) => typeof (candidate as Record<string, unknown>)[name] !== 'function') : ['all'];
  if (missing.length > 0) {
    throw new InvalidArgumentError(`serveHttp serves a RuntimeHost (createRuntimeHost) or RuntimeOperations; this one lacks ${missing.join(', ')}. host=${show(host)}`, { reason: 'invalid_host' });
  }
  return candidate as RuntimeOperations;
}

function urlOf(hostname: string, port: number, basePath: string): string {
  return `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}${basePath}`;
}

/**
 * Serves `host` (a `RuntimeHost`, or any `RuntimeOperations`) over HTTP; resolves once it listens.
 * Throws INVALID_CONFIG for bad options (and, `option: 'port'`, when it cannot listen: the port is
 * taken or not allowed), INVALID_ARGUMENT for a host without the operations.
 * @example
 * const server = await serveHttp(host, { port: 8080, authenticate: (req) => req.headers.authorization === `Bearer ${token}` });
 * // in a page or another process:
 * const client = connectHttp('http://localhost:8080', { headers: { authorization: `Bearer ${token}` } });
 */
export async function serveHttp(host: RuntimeHost | RuntimeOperations, options?: ServeHttpOptions): Promise<HttpRuntimeServer> {
  const settings = settingsOf(options);
  const operations = operationsOf(host);
  const stopping = new AbortController();
  const closed = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  let inFlight = 0;
  let closing: Promise<void> | undefined;

  const allowedOrigin = (origin: string | undefined): string | undefined => {
    if (origin === undefined) return undefined;
    if (settings.allowOrigins === '*') return '*';
    return settings.allowOrigins.has(origin) ? origin : undefined;
  };

  const authenticated = async (req: IncomingMessage): Promise<boolean> => {
    if (settings.authenticate === undefined) return true;
    try {
      return (await settings.authenticate(req)) === true;
    } catch {
      return false;
    }
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://host');
    const origin = allowedOrigin(req.headers.origin);
    if (origin !== undefined) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'origin');
    }
    const base = settings.basePath;
    if (!url.pathname.startsWith(`${base}/`)) throw new InvalidArgumentError(`no such route. path=${show(url.pathname)}`, { reason: 'unknown_route' });
    const path = url.pathname.slice(base.length);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': req.headers['access-control-request-headers'] ?? 'content-type',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    if (stopping.signal.aborted) {
      res.setHeader('connection', 'close');
      throw new ClosedError('the HTTP host is closing', { reason: 'closing' });
    }
    if (!(await authenticated(req))) throw new StorePermissionError('the request was not authenticated', { reason: 'unauthenticated' });
    if (path.startsWith(OPERATIONS_PATH)) {
      if (req.method !== 'POST') throw new InvalidArgumentError(`an operation is called with POST. method=${show(req.method)}`, { reason: 'method_not_allowed' });
      let name: string;
      try {
        name = decodeURIComponent(path.slice(OPERATIONS_PATH.length));
      } catch {
        name = path.slice(OPERATIONS_PATH.length);
      }
      return serveOperation(req, res, name, { operations, maxBodyBytes: settings.maxBodyBytes, closing: closed });
    }
    if (path === EVENTS_PATH) {
      if (req.method !== 'GET') throw new InvalidArgumentError(`run events are read with GET. method=${show(req.method)}`, { reason: 'method_not_allowed' });
      return serveRunEvents(res, url, { operations, statusPollMs: settings.statusPollMs, executor: settings.hostId, closing: stopping.signal });
    }
    throw new InvalidArgumentError(`no such route. path=${show(url.pathname)}`, { reason: 'unknown_route' });
  };

  const server = createServer((req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      // A connection answered during the close is idle now: closed rather than kept alive.
      if (stopping.signal.aborted && inFlight === 0) setImmediate(() => server.closeIdleConnections());
    });
    route(req, res).catch((e: unknown) => sendError(res, e));
  });

  await new Promise<void>((resolve, reject) => {
    const refused = (e: NodeJS.ErrnoException): void => {
      const error = new InvalidConfigError(`cannot listen on ${settings.hostname}:${settings.port}: ${e.code ?? e.message}`, { option: 'port', reason: e.code ?? null });
      Object.defineProperty(error, 'cause', { value: e, configurable: true, writable: true });
      reject(error);
    };
    server.once('error', refused);
    server.listen(settings.port, settings.hostname, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : settings.port;

  return {
    url: urlOf(settings.hostname, port, settings.basePath),
    port,
    server,
    close(closeOptions: CloseHttpOptions = {}) {
      closing ??= new Promise<void>((resolve) => {
        const timeoutMs = closeOptions.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
        stopping.abort();
        const cut = setTimeout(() => server.closeAllConnections(), timeoutMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
