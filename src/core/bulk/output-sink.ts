/**
 * Output sinks (reference `OutputSink`, `JsonlSink`, `NullSink`): where a batch run writes each
 * item's outcome as it is recorded, once per item per batch run (items finished by an earlier run
 * are written again from their markers), then flushes when the run ends. A sink may be shared by
 * batches running at once, so `write` can be called again before an earlier call settled.
 *
 * `JsonlSink` writes one JSON object per line, `{"key","status","output"?,"error"?}`, to a WHATWG
 * `WritableStream` of bytes (a browser file handle's stream, Node's `Writable.toWeb(...)`) or a
 * function given each line; its writes are queued, so lines never interleave.
 */
import { utf8 } from '../bytes.js';
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';
import type { ItemStatus } from './records.js';

/** One item's outcome as a sink gets it. */
export interface OutputRecord<O = unknown> {
  readonly key: string;
  readonly status: ItemStatus;
  /** The last phase's output (succeeded items). */
  readonly output?: O;
  /** What failed, or why the item was cancelled. */
  readonly error?: string;
}

/** Receives a batch run's item outcomes (`BulkOptions.output`, `BatchSubmitOptions.output`). */
export interface OutputSink<O = unknown> {
  /**
   * Takes one record; may be called while earlier writes are pending. A rejection stops driving
   * the batch (its `done()` rejects with it; the batch's durable state is kept).
   */
  write(record: OutputRecord<O>): Promise<void> | void;
  /**
   * Called once when a batch run ends (finished, failed or shut down), after its last write
   * settled. A rejection becomes the rejection of `done()` unless another error already is.
   */
  flush(): Promise<void> | void;
}

/** Discards every record: the default sink. */
export class NullSink implements OutputSink {
  write(): void {}
  flush(): void {}
}

/** What `JsonlSink` needs of a `WritableStream` writer (web streams and Node's both fit). */
export interface JsonlStreamWriter {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
  releaseLock(): void;
}

/** A `WritableStream` of bytes, as far as `JsonlSink` uses it. */
export interface JsonlWritableStream {
  getWriter(): JsonlStreamWriter;
}

/** Where `JsonlSink` writes: a byte stream, or a function given each line (with its `\n`); a returned promise is awaited. */
export type JsonlTarget = JsonlWritableStream | ((line: string) => unknown);

/** Writes each record as one line of JSON (see the module comment). */
export class JsonlSink implements OutputSink {
  private readonly emit: (line: string) => Promise<unknown>;
  private readonly finish: () => Promise<void>;
  /** The last queued write; a failed write fails every later one and `flush` (the output has a gap). */
  private tail: Promise<void> = Promise.resolve();

  /**
   * Takes the stream's writer (locks it) or the function. Throws INVALID_ARGUMENT (reason
   * `invalid_sink`) for another target or a stream already locked.
   * @example
   * new JsonlSink(await fileHandle.createWritable()); // browser: close() the sink to save the file
   * new JsonlSink((line) => process.stdout.write(line)); // Node
   */
  constructor(target: JsonlTarget) {
    if (typeof target === 'function') {
      this.emit = async (line) => target(line);
      this.finish = async () => undefined;
      return;
    }
    if (typeof target !== 'object' || target === null || typeof (target as JsonlWritableStream).getWriter !== 'function') {
      throw new InvalidArgumentError(`JsonlSink writes to a WritableStream or a function (line) => .... target=${show(target)}`, { reason: 'invalid_sink' });
    }
    let writer: JsonlStreamWriter;
    try {
      writer = target.getWriter();
    } catch (e) {
      throw new InvalidArgumentError(`JsonlSink cannot write to this stream (locked by another writer?): ${e instanceof Error ? e.message : String(e)}`, { reason: 'invalid_sink' });
    }
    this.emit = (line) => writer.write(utf8(line));
    this.finish = async () => {
      await writer.close();
      writer.releaseLock();
    };
  }

  /**
   * Queues `record` as one line. Rejects with INVALID_ARGUMENT (reason `unserializable_output`)
   * for an output JSON cannot hold (a BigInt, a cycle), else with the target's error.
   */
  write(record: OutputRecord): Promise<void> {
    let line: string;
    try {
      line = `${JSON.stringify(jsonlShape(record))}\n`;
    } catch (e) {
      return Promise.reject(
        new InvalidArgumentError(`item output cannot be written as JSON: ${e instanceof Error ? e.message : String(e)}. key=${show(record?.key)}`, {
          reason: 'unserializable_output',
          key: typeof record?.key === 'string' ? record.key : null,
        }),
      );
    }
    const written = this.tail.then(() => this.emit(line)).then(() => undefined);
    this.tail = written;
    return written;
  }

  /** Resolves once every queued line is written; rejects with the first write's error. */
  flush(): Promise<void> {
    return this.tail;
  }

  /** Flushes, then closes the stream (a browser file stream saves on close); for a function target, flushes. */
  async close(): Promise<void> {
    await this.flush();
    await this.finish();
  }
}

/** The line's object: the four fields, the optional ones only when present. */
function jsonlShape(record: OutputRecord): Record<string, unknown> {
  return {
    key: record.key,
    status: record.status,
    ...(record.output === undefined ? {} : { output: record.output }),
    ...(record.error === undefined ? {} : { error: record.error }),
  };
}
