/**
 * What Comlink needs to carry this library across the Worker boundary faithfully:
 *
 * - Errors: Comlink's built-in `throw` handler keeps only name, message and stack, so the `code`
 *   (the API) would be lost. `registerTransferHandlers` replaces it with one that ships a
 *   `WireError` and rebuilds the right class on the other side. Both realms must register it
 *   (the worker host and `connect` do); the replacement still reads the built-in format, so a
 *   realm that did not register it degrades to plain errors rather than failing.
 * - Bytes: a `Uint8Array` is structured-cloned with its whole underlying buffer, so a small view
 *   of a large buffer is expensive, and large payloads are copied twice. `exportBytes` hands out
 *   an exact-size copy and `withTransfer` marks large ones for transfer (moved, not copied).
 */
import { transfer, transferHandlers, type TransferHandler } from 'comlink';
import type { WireError } from './protocol.js';
import { fromWireError, toWireError } from './wire-error.js';

/** Payloads at least this large are transferred rather than cloned. */
export const TRANSFER_THRESHOLD_BYTES = 64 * 1024;

const MARK = Symbol.for('taquba-workflow.comlink-throw-handler');

/** What Comlink's `throw` handler receives: the thrown value under `value`. */
interface Thrown {
  readonly value: unknown;
}

/** Our wire format, and Comlink's built-in one (from a realm that did not register ours). */
type SerializedThrown = { readonly taquba: WireError } | { readonly isError: boolean; readonly value: unknown };

/**
 * Replaces Comlink's `throw` transfer handler with the code-preserving one. Idempotent; call it
 * in every realm that uses Comlink with this library (done by `serveWorkflowRuntime` and `connect`).
 */
export function registerTransferHandlers(): void {
  const current = transferHandlers.get('throw') as (TransferHandler<unknown, unknown> & { [MARK]?: true }) | undefined;
  if (!current || current[MARK]) return;
  const canHandle = current.canHandle.bind(current);
  const handler: TransferHandler<Thrown, SerializedThrown> & { [MARK]: true } = {
    [MARK]: true,
    canHandle: (value): value is Thrown => canHandle(value),
    serialize: (thrown) => [{ taquba: toWireError(thrown.value) }, []],
    deserialize: (serialized) => {
      if ('taquba' in serialized) throw fromWireError(serialized.taquba);
      if (serialized.isError) {
        const v = serialized.value as { message?: string; name?: string; stack?: string };
        throw Object.assign(new Error(v.message), v);
      }
      throw serialized.value;
    },
  };
  transferHandlers.set('throw', handler as TransferHandler<unknown, unknown>);
}

/**
 * `bytes` as a view that spans its own buffer exactly: the same array when it already does and
 * `copyAlways` is false, else a copy. Use before cloning or transferring bytes that may be a view
 * into a larger (or shared, engine-owned) buffer.
 */
export function exportBytes(bytes: Uint8Array, copyAlways = false): Uint8Array {
  if (!copyAlways && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  return bytes.slice();
}

/**
 * What every byte array the leader answers with goes through (`LocalOperations`' `exportBytes`):
 * an exact-size view, and a private copy when large enough to be transferred, so a transfer never
 * detaches a buffer the engine still holds.
 */
export function answerBytes(bytes: Uint8Array): Uint8Array {
  return exportBytes(bytes, bytes.byteLength >= TRANSFER_THRESHOLD_BYTES);
}

/** Collects the buffers of the large `Uint8Array`s found (shallowly, and in arrays) in `value`. */
function largeBuffers(value: unknown, out: Set<ArrayBuffer>, depth = 0): void {
  if (value instanceof Uint8Array) {
    if (value.byteLength >= TRANSFER_THRESHOLD_BYTES && value.buffer instanceof ArrayBuffer && value.byteLength === value.buffer.byteLength) out.add(value.buffer);
    return;
  }
  if (depth > 3 || typeof value !== 'object' || value === null) return;
  for (const v of Array.isArray(value) ? value : Object.values(value)) largeBuffers(v, out, depth + 1);
}

/**
 * Marks `value` for Comlink so the buffers of its large byte arrays move instead of being
 * copied. Only for values the sender owns and will not touch again (fresh copies).
 */
export function withTransfer<T>(value: T): T {
  const buffers = new Set<ArrayBuffer>();
  largeBuffers(value, buffers);
  return buffers.size === 0 ? value : transfer(value, [...buffers]);
}
