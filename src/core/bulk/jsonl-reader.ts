/**
 * `readJsonl` (reference `read_jsonl`): a batch's inputs from JSON Lines text, one typed item per
 * line. Works on what every platform has: a WHATWG `ReadableStream` (fetch bodies, `File.stream()`,
 * Node's `Readable.toWeb`), any async or sync iterable of text or byte chunks (a Node read stream,
 * `process.stdin`), or the whole text at once.
 *
 * Lines end at `\n` (a `\r` before it is dropped) and are decoded as strict UTF-8 one by one, so a
 * multi-byte character split across chunks is fine and a bad byte spoils only its own line. Blank
 * lines are skipped. A bad line (not UTF-8, not JSON, or rejected by `parse`) is an error item
 * naming its 1-based line number, and reading goes on: one bad record must not lose the rest of
 * a large file. Only the source itself failing (an I/O error) ends the iteration with a throw.
 */
import { utf8 } from '../bytes.js';
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';

/** What `readJsonl` needs of a `ReadableStream` reader (web streams and Node's both fit). */
export interface JsonlStreamReader {
  read(): Promise<{ readonly done: boolean; readonly value?: Uint8Array | string | undefined }>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
}

/** A `ReadableStream` of bytes or text, as far as `readJsonl` uses it. */
export interface JsonlReadableStream {
  getReader(): JsonlStreamReader;
}

/** Where `readJsonl` reads: a stream or an iterable of chunks, or the whole text. */
export type JsonlSource = JsonlReadableStream | AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | Uint8Array | string;

/** One non-blank line: its value, or why it is not one. */
export type JsonlItem<T> =
  | { readonly ok: true; readonly line: number; readonly value: T }
  | {
      readonly ok: false;
      readonly line: number;
      /** INVALID_ARGUMENT, reason `invalid_jsonl_line`, `details.line`. */
      readonly error: InvalidArgumentError;
      /** The line as decoded (bad bytes as U+FFFD), for a report. */
      readonly text: string;
    };

export interface ReadJsonlOptions<T> {
  /** Checks (and types) each parsed value; a throw makes the line an error item. A zod schema's `parse` fits. */
  readonly parse?: (value: unknown) => T;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The lines of `source` as typed items, in order (see the module comment). Throws INVALID_ARGUMENT
 * (reason `invalid_source`) at once for a source of another kind, and from the iteration for a
 * chunk that is neither text nor bytes.
 * @example
 * const inputs: Doc[] = [];
 * for await (const item of readJsonl<Doc>(file.stream())) {
 *   if (item.ok) inputs.push(item.value);
 *   else console.warn(`skipped: ${item.error.message}`);
 * }
 */
export function readJsonl<T = unknown>(source: JsonlSource, options: ReadJsonlOptions<T> = {}): AsyncGenerator<JsonlItem<T>> {
  const chunks = chunksOf(source);
  const parse = options?.parse;
  if (parse !== undefined && typeof parse !== 'function') throw new InvalidArgumentError(`parse must be a function. parse=${show(parse)}`, { reason: 'invalid_spec' });
  return itemsOf(linesOf(chunks), parse);
}

async function* itemsOf<T>(lines: AsyncIterable<Uint8Array>, parse: ((value: unknown) => T) | undefined): AsyncGenerator<JsonlItem<T>> {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const lenient = new TextDecoder('utf-8');
  let line = 0;
  for await (const bytes of lines) {
    line++;
    let text: string;
    try {
      text = strict.decode(bytes);
    } catch {
      yield badLine(line, 'is not UTF-8', lenient.decode(bytes));
      continue;
    }
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      yield badLine(line, `is not JSON: ${messageOf(e)}`, text);
      continue;
    }
    if (parse) {
      try {
        value = parse(value);
      } catch (e) {
        yield badLine(line, `fails parse: ${messageOf(e)}`, text);
        continue;
      }
    }
    yield { ok: true, line, value: value as T };
  }
}

function badLine(line: number, what: string, text: string): JsonlItem<never> {
  return { ok: false, line, text, error: new InvalidArgumentError(`JSONL line ${line} ${what}`, { reason: 'invalid_jsonl_line', line }) };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Every line's bytes without its `\n` (and `\r`); the last line also without a final newline. */
async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let carry: Uint8Array[] = [];
  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      yield withoutCarriageReturn(joined([...carry, chunk.subarray(start, end)]));
      carry = [];
      start = end + 1;
    }
    if (start < chunk.length) carry.push(chunk.slice(start));
  }
  if (carry.length > 0) yield withoutCarriageReturn(joined(carry));
}

function joined(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function withoutCarriageReturn(line: Uint8Array): Uint8Array {
  return line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN ? line.subarray(0, line.length - 1) : line;
}

function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return utf8(chunk);
  throw new InvalidArgumentError(`JSONL chunks must be strings or Uint8Arrays. chunk=${show(chunk)}`, { reason: 'invalid_source' });
}

/** The source's chunks as bytes. Checks the kind of source at once (not on the first read). */
function chunksOf(source: JsonlSource): AsyncIterable<Uint8Array> {
  if (typeof source === 'string' || source instanceof Uint8Array) return fromIterable([source]);
  if (typeof source === 'object' && source !== null) {
    if (typeof (source as JsonlReadableStream).getReader === 'function') return fromStream(source as JsonlReadableStream);
    if (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' || typeof (source as Iterable<unknown>)[Symbol.iterator] === 'function') {
      return fromIterable(source as AsyncIterable<unknown> | Iterable<unknown>);
    }
  }
  throw new InvalidArgumentError(`readJsonl reads a ReadableStream, an (async) iterable of string or Uint8Array chunks, a string or a Uint8Array. source=${show(source)}`, {
    reason: 'invalid_source',
  });
}

async function* fromIterable(chunks: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) yield asBytes(chunk);
}

/** Reads a stream to its end; a consumer that stops early cancels it, so the stream's source is released. */
async function* fromStream(stream: JsonlReadableStream): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      if (value !== undefined) yield asBytes(value);
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
