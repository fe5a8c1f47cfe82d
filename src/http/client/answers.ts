/**
 * What the client makes of the server's HTTP answers: the value, or the typed error the server
 * sent (rebuilt as the library's class), or, for an answer that is not the server's own (a proxy's
 * error page, a server of something else), STORE_UNAVAILABLE naming the status.
 */
import { StoreUnavailableError, isTaqubaError } from '../../core/errors.js';
import { fromWireError } from '../../browser/wire-error.js';
import type { WireError } from '../../browser/protocol.js';
import { decodeBody, MSGPACK } from '../wire.js';

/** A failure the client may send the same request again after (it was not applied, or the answer was lost). */
export class NoAnswer extends Error {
  constructor(readonly error: unknown) {
    super('no answer');
  }
}

/** Statuses a proxy answers for a server that is down or restarting. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

function isMessagePack(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === MSGPACK;
}

/**
 * The value of an operation's answer. Throws the server's typed error, or `NoAnswer` for an answer
 * that is not the server's (a gateway status) or a refusal of a closing server (nothing applied).
 */
export async function answerOf(response: Response): Promise<unknown> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (!isMessagePack(response)) {
    const error = new StoreUnavailableError(`the HTTP host answered ${response.status} ${response.statusText} without a body of its own`, { reason: 'http_status', status: response.status });
    throw GATEWAY_STATUSES.has(response.status) ? new NoAnswer(error) : error;
  }
  let answer: { value?: unknown; error?: WireError } | null;
  try {
    answer = decodeBody(bytes) as typeof answer;
  } catch {
    throw new StoreUnavailableError(`the HTTP host answered ${response.status} with a body that does not decode`, { reason: 'invalid_answer', status: response.status });
  }
  if (typeof answer === 'object' && answer !== null && 'value' in answer) return answer.value;
  if (typeof answer === 'object' && answer !== null && typeof answer.error === 'object' && answer.error !== null) {
    const error = fromWireError(answer.error);
    // A server closing applied nothing: like a server that is away, worth asking again (CLOSED is this client's own).
    if (isTaqubaError(error, 'CLOSED') && error.details['reason'] === 'closing') throw new NoAnswer(new StoreUnavailableError('the HTTP host is closing', { reason: 'host_closing' }, error));
    throw error;
  }
  throw new StoreUnavailableError(`the HTTP host answered ${response.status} with a body that is not an answer`, { reason: 'invalid_answer', status: response.status });
}

/** The error of a refused request (an event stream's): the server's typed error, or STORE_UNAVAILABLE. */
export async function refusalOf(response: Response): Promise<unknown> {
  try {
    await answerOf(response);
  } catch (e) {
    return e instanceof NoAnswer ? e.error : e;
  }
  return new StoreUnavailableError(`the HTTP host answered ${response.status}`, { reason: 'http_status', status: response.status });
}
