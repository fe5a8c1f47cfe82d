/**
 * What the HTTP host writes back: answers and typed errors as MessagePack bodies, the HTTP status
 * of each error code (for proxies, logs and humans: the client reads the body), and request bodies
 * read up to a size limit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InternalError, InvalidArgumentError, isTaqubaError, type ErrorCode } from '../../core/errors.js';
import { toWireError } from '../../browser/wire-error.js';
import { encodeBody, MSGPACK, withoutStacks, type OperationAnswer } from '../wire.js';

const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  INVALID_CONFIG: 400,
  NOT_FOUND: 404,
  INPUT_MISMATCH: 409,
  CONFLICT: 409,
  ALREADY_EXISTS: 409,
  STORE_PERMISSION: 403,
  CLOSED: 503,
  STORE_UNAVAILABLE: 503,
  LOCKED: 503,
  FENCED: 503,
  TIMEOUT: 504,
};

/** Requests the carrier itself refuses, by their error's `reason`. */
const STATUS_BY_REASON: Readonly<Record<string, number>> = {
  unauthenticated: 401,
  unknown_route: 404,
  unknown_operation: 404,
  method_not_allowed: 405,
  body_too_large: 413,
  unsupported_content_type: 415,
};

/** The HTTP status of a thrown error. */
export function statusOf(error: unknown): number {
  if (!isTaqubaError(error)) return 500;
  const reason = error.details['reason'];
  return (typeof reason === 'string' ? STATUS_BY_REASON[reason] : undefined) ?? STATUS_BY_CODE[error.code] ?? 500;
}

/** Writes `answer` with `status`, unless the response has already begun (a client that went away). */
function send(res: ServerResponse, status: number, answer: OperationAnswer): void {
  if (res.headersSent || res.destroyed) return;
  let body: Uint8Array;
  try {
    body = encodeBody(answer);
  } catch (e) {
    if ('error' in answer) {
      // The error's payload (a job error) does not encode: the error goes without it.
      const { jobError: _dropped, ...error } = answer.error;
      body = encodeBody({ error });
    } else {
      status = 500;
      body = encodeBody({ error: withoutStacks(toWireError(new InternalError(`the answer does not encode: ${e instanceof Error ? e.message : String(e)}`, { reason: 'unencodable_answer' }))) });
    }
  }
  res.writeHead(status, { 'content-type': MSGPACK, 'content-length': body.byteLength, 'cache-control': 'no-store' });
  res.end(body);
}

export function sendValue(res: ServerResponse, value: unknown): void {
  send(res, 200, { value });
}

/** Writes `error` as a typed error with its status. */
export function sendError(res: ServerResponse, error: unknown): void {
  send(res, statusOf(error), { error: withoutStacks(toWireError(error)) });
}

/**
 * The request's body, at most `maxBytes`. INVALID_ARGUMENT (`body_too_large`) beyond it, told by
 * `content-length` before anything is read; the connection is then closed once answered, so the
 * rest of the body is never read.
 */
export async function readBody(req: IncomingMessage, res: ServerResponse, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = (): InvalidArgumentError => {
    res.setHeader('connection', 'close');
    res.once('finish', () => req.destroy());
    return new InvalidArgumentError(`the request body is over ${maxBytes} bytes`, { reason: 'body_too_large', maxBytes });
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let length = 0;
  // Not destroyed on an early exit: the refusal is still to be written on its socket.
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>) {
    length += chunk.byteLength;
    if (length > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const body = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
