/**
 * A language-model client shared by the agent examples and the browser demo (demo/src/agent
 * imports it): a deterministic simulated model (text streamed word by word, no network: the
 * default offline and in tests) and any OpenAI-compatible chat completions endpoint, streamed
 * over `fetch` with server-sent events. Platform-neutral: `fetch`, streams and timers only.
 * Both honour an AbortSignal, so a cancelled run or a shutdown stops a call mid-stream.
 *
 * Failures are classified for the workflow runtime: an unreachable endpoint, 429 and 5xx are
 * transient `StepError`s (retried with backoff), any other HTTP error is permanent.
 */
import { StepError } from 'taquba-workflow';

export interface ModelRequest {
  readonly system: string;
  readonly prompt: string;
}

export interface CallOptions {
  readonly signal: AbortSignal;
  /** The text so far, after every streamed chunk. */
  readonly onText: (textSoFar: string) => void;
  /** Simulated model only: delay between words. */
  readonly tokenDelayMs: number;
}

export interface Model {
  readonly name: string;
  complete(request: ModelRequest, options: CallOptions): Promise<string>;
}

/** Where an OpenAI-compatible endpoint is and how to call it. */
export interface OpenAiSettings {
  /** Base URL, e.g. `https://api.openai.com/v1` (`/chat/completions` is appended). */
  readonly endpoint: string;
  readonly model: string;
  /** Sent as a bearer token; may be empty for local servers that need none. */
  readonly apiKey: string;
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the model call was aborted', 'AbortError');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** FNV-1a: a stable seed from the prompt, so the same prompt always gets the same answer. */
function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const OPENERS = ['In short,', 'Put simply,', 'Broadly,', 'At its core,', 'Seen from a team, '];
const CLAIMS = [
  'it trades a little latency for work that is never lost',
  'the hard part is not the happy path but what happens after a crash',
  'most of the value comes from retries that are safe to repeat',
  'people adopt it when a long task must survive a closed laptop',
  'the cost is dominated by how often state is written, not by compute',
  'it works best when every step is small and idempotent',
  'the failure modes are well understood and can be tested',
  'its main risk is hidden state that a restart forgets',
];
const CLOSERS = ['That is the key trade-off.', 'Teams should measure it first.', 'Evidence for this is growing.', 'This shapes every design choice.'];

/** Deterministic, offline, streamed: stands in for a real model. */
export class SimulatedModel implements Model {
  readonly name = 'simulated';

  async complete(request: ModelRequest, options: CallOptions): Promise<string> {
    let seed = seedOf(request.system + '\n' + request.prompt);
    const pick = <T>(items: readonly T[]): T => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return items[seed % items.length]!;
    };
    const firstLine = request.prompt.split('\n')[0]!.replace(/[?:]$/, '');
    const subject = firstLine.length <= 80 ? firstLine : `${firstLine.slice(0, 80).replace(/\s+\S*$/, '')}…`;
    const sentences = [`${pick(OPENERS)} on "${subject}": ${pick(CLAIMS)}.`, `Also, ${pick(CLAIMS)}.`, pick(CLOSERS)];
    const words = sentences.join(' ').split(' ');
    let text = '';
    for (const word of words) {
      await sleep(options.tokenDelayMs, options.signal);
      text = text === '' ? word : `${text} ${word}`;
      options.onText(text);
    }
    return text;
  }
}

/** Any endpoint that speaks OpenAI's chat completions API with streaming (server-sent events). */
export class OpenAiCompatibleModel implements Model {
  readonly name: string;

  constructor(private readonly settings: OpenAiSettings) {
    this.name = settings.model;
  }

  async complete(request: ModelRequest, options: CallOptions): Promise<string> {
    let response: Response;
    try {
      response = await fetch(`${this.settings.endpoint.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        signal: options.signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.settings.apiKey}` },
        body: JSON.stringify({
          model: this.settings.model,
          stream: true,
          messages: [
            { role: 'system', content: request.system },
            { role: 'user', content: request.prompt },
          ],
        }),
      });
    } catch (e) {
      if (options.signal.aborted) throw e;
      // Offline or unreachable: worth retrying later.
      throw StepError.transient(`model endpoint unreachable: ${String(e)}`);
    }
    if (!response.ok || !response.body) {
      const detail = `model endpoint answered ${response.status} ${response.statusText}`;
      // Rate limits and server errors pass; a bad key, model or URL will not fix itself.
      if (response.status === 429 || response.status >= 500) throw StepError.transient(detail);
      throw StepError.permanent(detail);
    }
    return readStream(response.body, options);
  }
}

/** Accumulates the `delta.content` of every `data:` event until the stream ends. */
async function readStream(body: ReadableStream<Uint8Array>, options: CallOptions): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const data = line.startsWith('data:') ? line.slice(5).trim() : '';
      if (data === '' || data === '[DONE]') continue;
      const delta = (JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
      if (delta) {
        text += delta;
        options.onText(text);
      }
    }
  }
}
