/**
 * One run's event stream, read with fetch (so it carries the client's headers, which an
 * `EventSource` cannot, and works alike in pages and in Node): the server-sent events parsed from
 * the response body, reconnected with a backoff after a dropped connection or a server that is
 * away, until the run's `terminal` event, a refusal (a 4xx: bad run id, not authenticated), or
 * the caller's abort.
 */
import { decodeEventData, EVENT_STREAM, pause, type HttpRunEvent } from '../wire.js';
import { refusalOf } from './answers.js';

const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 5_000;

export interface RunEventStream {
  readonly url: string;
  readonly fetch: typeof fetch;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  onEvent(event: HttpRunEvent): void;
}

/** The `data` of each event of a `text/event-stream` body (comments and other fields skipped). */
async function* eventData(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end).replace(/\r$/, '');
        buffered = buffered.slice(end + 1);
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * Reads the stream until the run's `terminal` event (resolves), the caller's abort (resolves) or a
 * refusal (rejects with the server's typed error).
 */
export async function followRunEvents(stream: RunEventStream): Promise<void> {
  const { signal } = stream;
  let retryMs = FIRST_RETRY_MS;
  while (!signal.aborted) {
    try {
      const response = await stream.fetch(stream.url, { headers: { ...stream.headers, accept: EVENT_STREAM }, signal });
      if (!response.ok) {
        const refusal = await refusalOf(response);
        // A 5xx is a server away or restarting: asked again. A 4xx will answer the same.
        if (response.status < 500) throw refusal;
      } else if (response.body) {
        retryMs = FIRST_RETRY_MS;
        for await (const data of eventData(response.body)) {
          const event = decodeEventData(data);
          stream.onEvent(event);
          if (event.type === 'terminal') return;
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      // Network failures are TypeErrors (fetch's); anything else is the server's answer.
      if (!(e instanceof TypeError)) throw e;
    }
    await pause(retryMs, signal);
    retryMs = Math.min(retryMs * 2, LONGEST_RETRY_MS);
  }
}
