/**
 * `POST {base}/ops/{operation}`: one call of an operation of the core's list, applied with
 * `applyOperation` (a command with the command id its client drew, so a resend applies once).
 * A wait (`runWait`, `jobWait`) answers null at once when the server closes, as a stopping runtime
 * answers it: the client asks again, wherever it is served next.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '../../core/errors.js';
import { show } from '../../core/show.js';
import { applyOperation, OPERATIONS, type OperationCall } from '../../core/operations/operation-list.js';
import type { OperationName, RuntimeOperations } from '../../core/operations/operations.js';
import { decodeBody, MSGPACK } from '../wire.js';
import { readBody, sendError, sendValue } from './responses.js';

/** Operations that wait for an outcome and answer null when nothing came (bounded-wait.ts). */
const WAITS: ReadonlySet<OperationName> = new Set<OperationName>(['runWait', 'jobWait']);

export interface OperationRouteContext {
  readonly operations: RuntimeOperations;
  readonly maxBodyBytes: number;
  /** Settles when the server closes. */
  readonly closing: Promise<void>;
}

/** INVALID_ARGUMENT (`unknown_operation`) unless `name` is on the list. */
function operationNamed(name: string): OperationName {
  if (!Object.hasOwn(OPERATIONS, name)) throw new InvalidArgumentError(`no such operation. method=${show(name)}`, { reason: 'unknown_operation', method: name });
  return name as OperationName;
}

/** The call a request body describes. INVALID_ARGUMENT (`invalid_body`) for any other body. */
function callOf(method: OperationName, body: unknown): OperationCall {
  const request = body as { args?: unknown; commandId?: unknown } | null;
  if (typeof request !== 'object' || request === null || !Array.isArray(request.args)) {
    throw new InvalidArgumentError(`an operation request is { args: [...], commandId? }. body=${show(body)}`, { reason: 'invalid_body' });
  }
  if (request.commandId !== undefined && typeof request.commandId !== 'string') {
    throw new InvalidArgumentError(`commandId must be a string. commandId=${show(request.commandId)}`, { reason: 'invalid_body' });
  }
  return { method, args: request.args, ...(request.commandId === undefined ? {} : { commandId: request.commandId }) } as OperationCall;
}

function isMessagePack(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === MSGPACK;
}

export async function serveOperation(req: IncomingMessage, res: ServerResponse, name: string, context: OperationRouteContext): Promise<void> {
  try {
    const method = operationNamed(name);
    if (!isMessagePack(req)) {
      throw new InvalidArgumentError(`an operation request's body is ${MSGPACK}. contentType=${show(req.headers['content-type'] ?? '')}`, { reason: 'unsupported_content_type' });
    }
    const call = callOf(method, decodeBody(await readBody(req, res, context.maxBodyBytes)));
    const applied = applyOperation(context.operations, call);
    if (!WAITS.has(method)) return sendValue(res, await applied);
    // A wait left behind by the close still settles later: nobody is there to hear it.
    applied.catch(() => undefined);
    sendValue(res, await Promise.race([applied, context.closing.then(() => null)]));
  } catch (e) {
    sendError(res, e);
  }
}
