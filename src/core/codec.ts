/**
 * The one place that knows the codec: MessagePack with named fields.
 *
 * Two flavours share the same encoder settings and primitives:
 * - records (`encodeRecord` / `decodeRecord`): the library's own queue, manifest and workflow
 *   records. Plain MessagePack, compact; undefined fields are dropped. Their bytes and decoding
 *   never change with the value codec below.
 * - values (`encodeValue` / `decodeValue`): caller values kept for the caller (memo entries).
 *   A value either round-trips exactly or is rejected when it is encoded, never silently
 *   changed. Beyond what MessagePack carries natively (null, booleans, numbers, strings, arrays,
 *   plain objects, Uint8Array, Date through the standard timestamp extension) it carries, as
 *   application extension types: undefined (also inside arrays and objects), -0, BigInt, Map,
 *   Set, invalid Dates, the other typed arrays, ArrayBuffer, DataView and objects without a
 *   prototype. Everything else is
 *   rejected with INVALID_ARGUMENT (reason `serialization`, `details.path` the place in the value,
 *   `details.problem` the rule): functions, symbols, class instances (Buffer included: convert it
 *   with `new Uint8Array(buf)`), objects with symbol or non-enumerable keys, sparse arrays or
 *   arrays with extra properties, strings with lone surrogates, a `__proto__` key in a plain
 *   object, cycles, and nesting deeper than 100 levels. Objects without a prototype come back
 *   without one; shared references come back as copies.
 */
import { Decoder, Encoder, ExtData, ExtensionCodec } from '@msgpack/msgpack';
import { InvalidArgumentError } from './errors.js';

// One encoder and decoder for the process: building them allocates buffers and caches, which
// showed up as a tenth of the queue's CPU time. Both are safe to re-enter (they clone when busy).
const encoder = new Encoder({ ignoreUndefined: true });
const decoder = new Decoder();

export function encodeRecord(value: unknown): Uint8Array {
  return encoder.encode(value);
}

export function decodeRecord(bytes: Uint8Array): unknown {
  return decoder.decode(bytes);
}

// Application extension types of the value codec. Stored in memo entries: never renumber.
const EXT_UNDEFINED = 1;
const EXT_NEGATIVE_ZERO = 2;
const EXT_BIGINT = 3; // decimal text
const EXT_MAP = 4; // a value-encoded array [k0, v0, k1, v1, ...]
const EXT_SET = 5; // a value-encoded array of the elements
const EXT_BINARY_VIEW = 6; // one kind byte (BINARY_KINDS index), then the raw bytes
const EXT_INVALID_DATE = 7;
const EXT_NULL_PROTOTYPE_OBJECT = 8; // a value-encoded array [k0, v0, k1, v1, ...] (string keys)

const MAX_VALUE_DEPTH = 100;
const NO_BYTES = new Uint8Array(0);

type BinaryConstructor = new (buffer: ArrayBuffer) => ArrayBufferView | ArrayBuffer;

// Raw bytes are in host byte order, little-endian on every platform the library runs on.
// Never reorder (the index is stored); append new kinds at the end.
const BINARY_KINDS: readonly BinaryConstructor[] = [
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
  DataView,
  ArrayBuffer,
];
const BINARY_PROTOTYPES = new Map<object, number>(BINARY_KINDS.map((ctor, i) => [ctor.prototype as object, i]));

// A lone surrogate would be replaced by U+FFFD in UTF-8: the string would come back changed.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unserializable(problem: string, path: string): InvalidArgumentError {
  return new InvalidArgumentError(`value cannot be serialized: ${problem}. path=${path}`, { reason: 'serialization', problem, path });
}

function checkString(s: string, path: string): void {
  if (LONE_SURROGATE.test(s)) throw unserializable('string has a lone surrogate (not valid UTF-16, cannot round-trip through UTF-8)', path);
}

function describeType(value: object): string {
  const proto: unknown = Object.getPrototypeOf(value);
  const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? name : Object.prototype.toString.call(value);
}

/**
 * Rebuilds `value` as what the MessagePack encoder carries exactly: extension data for the types
 * it would change, the rest as is. Throws INVALID_ARGUMENT (serialization) for anything that
 * cannot round-trip.
 */
function prepare(value: unknown, path: string, depth: number, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'undefined':
      return new ExtData(EXT_UNDEFINED, NO_BYTES);
    case 'boolean':
      return value;
    case 'number':
      return Object.is(value, -0) ? new ExtData(EXT_NEGATIVE_ZERO, NO_BYTES) : value;
    case 'string':
      checkString(value, path);
      return value;
    case 'bigint':
      return new ExtData(EXT_BIGINT, encoder.encode(value.toString()));
    case 'function':
      throw unserializable('a function cannot be stored', path);
    case 'symbol':
      throw unserializable('a symbol cannot be stored', path);
  }
  if (value === null) return null;
  const obj = value as object;
  if (depth >= MAX_VALUE_DEPTH) throw unserializable(`value nests deeper than ${MAX_VALUE_DEPTH} levels`, path);
  if (ancestors.has(obj)) throw unserializable('value contains a cycle', path);
  const proto: unknown = Object.getPrototypeOf(obj);
  if (proto === Uint8Array.prototype) return obj;
  if (proto === Date.prototype) return Number.isNaN((obj as Date).getTime()) ? new ExtData(EXT_INVALID_DATE, NO_BYTES) : obj;
  const kind = BINARY_PROTOTYPES.get(proto as object);
  if (kind !== undefined) {
    const view = obj instanceof ArrayBuffer ? new Uint8Array(obj) : new Uint8Array((obj as ArrayBufferView).buffer, (obj as ArrayBufferView).byteOffset, (obj as ArrayBufferView).byteLength);
    const data = new Uint8Array(view.length + 1);
    data[0] = kind;
    data.set(view, 1);
    return new ExtData(EXT_BINARY_VIEW, data);
  }
  ancestors.add(obj);
  try {
    if (proto === Array.prototype) return prepareArray(obj as unknown[], path, depth, ancestors);
    if (proto === Map.prototype) {
      const flat: unknown[] = [];
      let i = 0;
      for (const [k, v] of obj as Map<unknown, unknown>) {
        flat.push(prepare(k, `${path}.<map key ${i}>`, depth + 1, ancestors), prepare(v, `${path}.<map value ${i}>`, depth + 1, ancestors));
        i++;
      }
      return new ExtData(EXT_MAP, encoder.encode(flat));
    }
    if (proto === Set.prototype) {
      const items: unknown[] = [];
      let i = 0;
      for (const v of obj as Set<unknown>) items.push(prepare(v, `${path}.<set element ${i++}>`, depth + 1, ancestors));
      return new ExtData(EXT_SET, encoder.encode(items));
    }
    if (proto === Object.prototype) return prepareObject(obj, path, depth, ancestors);
    if (proto === null) {
      // Kept as pairs, so it comes back without a prototype (and a `__proto__` key is an ordinary key).
      const fields = prepareObject(obj, path, depth, ancestors, true);
      return new ExtData(EXT_NULL_PROTOTYPE_OBJECT, encoder.encode(Object.keys(fields).flatMap((k) => [k, fields[k]])));
    }
    const hint = obj instanceof Uint8Array ? '; copy it into a plain Uint8Array first' : '';
    throw unserializable(`a ${describeType(obj)} instance cannot be stored (only plain objects, arrays, Map, Set, Date, typed arrays, ArrayBuffer and DataView${hint})`, path);
  } finally {
    ancestors.delete(obj);
  }
}

function prepareArray(array: unknown[], path: string, depth: number, ancestors: Set<object>): unknown[] {
  const out = new Array<unknown>(array.length);
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) throw unserializable('sparse array (a hole would come back as undefined)', `${path}[${i}]`);
    out[i] = prepare(array[i], `${path}[${i}]`, depth + 1, ancestors);
  }
  if (Object.getOwnPropertyNames(array).length !== array.length + 1) throw unserializable('array has properties besides its elements', path);
  if (Object.getOwnPropertySymbols(array).length > 0) throw unserializable('array has symbol-keyed properties', path);
  return out;
}

function prepareObject(obj: object, path: string, depth: number, ancestors: Set<object>, nullPrototype = false): Record<string, unknown> {
  if (Object.getOwnPropertySymbols(obj).length > 0) throw unserializable('object has symbol-keyed properties', path);
  const keys = Object.keys(obj);
  if (Object.getOwnPropertyNames(obj).length !== keys.length) throw unserializable('object has non-enumerable properties', path);
  const out = (nullPrototype ? Object.create(null) : {}) as Record<string, unknown>;
  for (const key of keys) {
    const at = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
    // A decoded plain object would take it as its prototype; the decoder refuses it.
    if (key === '__proto__' && !nullPrototype) throw unserializable('the key __proto__ cannot be stored in a plain object', at);
    checkString(key, at);
    out[key] = prepare((obj as Record<string, unknown>)[key], at, depth + 1, ancestors);
  }
  return out;
}

function decodeBinaryView(data: Uint8Array): unknown {
  const Kind = BINARY_KINDS[data[0] ?? -1];
  if (data.length === 0 || Kind === undefined) throw new Error(`unknown binary view kind ${data[0]}`);
  // A copy into a fresh buffer: aligned for the element size, and owned by the value.
  const buffer = data.slice(1).buffer;
  return Kind === ArrayBuffer ? buffer : new Kind(buffer);
}

const valueExtensions = new ExtensionCodec();
const valueDecoder = new Decoder({ extensionCodec: valueExtensions });
valueExtensions.register({ type: EXT_UNDEFINED, encode: () => null, decode: () => undefined });
valueExtensions.register({ type: EXT_NEGATIVE_ZERO, encode: () => null, decode: () => -0 });
valueExtensions.register({ type: EXT_INVALID_DATE, encode: () => null, decode: () => new Date(NaN) });
valueExtensions.register({
  type: EXT_BIGINT,
  encode: () => null,
  decode: (data) => {
    const text = decoder.decode(data);
    if (typeof text !== 'string') throw new Error('bigint extension does not hold text');
    return BigInt(text);
  },
});
valueExtensions.register({
  type: EXT_MAP,
  encode: () => null,
  decode: (data) => {
    const flat = valueDecoder.decode(data);
    if (!Array.isArray(flat) || flat.length % 2 !== 0) throw new Error('map extension does not hold key-value pairs');
    const map = new Map<unknown, unknown>();
    for (let i = 0; i < flat.length; i += 2) map.set(flat[i], flat[i + 1]);
    return map;
  },
});
valueExtensions.register({
  type: EXT_SET,
  encode: () => null,
  decode: (data) => {
    const items = valueDecoder.decode(data);
    if (!Array.isArray(items)) throw new Error('set extension does not hold an array');
    return new Set(items);
  },
});
valueExtensions.register({ type: EXT_BINARY_VIEW, encode: () => null, decode: decodeBinaryView });
valueExtensions.register({
  type: EXT_NULL_PROTOTYPE_OBJECT,
  encode: () => null,
  decode: (data) => {
    const flat = valueDecoder.decode(data);
    if (!Array.isArray(flat) || flat.length % 2 !== 0) throw new Error('object extension does not hold key-value pairs');
    const obj = Object.create(null) as Record<string, unknown>;
    for (let i = 0; i < flat.length; i += 2) {
      if (typeof flat[i] !== 'string') throw new Error('object extension has a key that is not a string');
      obj[flat[i] as string] = flat[i + 1];
    }
    return obj;
  },
});

/**
 * Encodes a caller value so that `decodeValue` gives back an equal value of the same types (see the
 * module comment for what is carried). Throws INVALID_ARGUMENT (reason `serialization`,
 * `details.path`, `details.problem`) for a value that cannot round-trip; nothing is encoded then.
 */
export function encodeValue(value: unknown): Uint8Array {
  return encoder.encode(prepare(value, 'value', 0, new Set()));
}

/** Decodes bytes of `encodeValue` (or of `encodeRecord`: records are values too). Throws on malformed bytes. */
export function decodeValue(bytes: Uint8Array): unknown {
  return valueDecoder.decode(bytes);
}
