/**
 * The value codec (memo values) round-trips every supported type exactly, nested or not, and
 * rejects what it cannot carry when encoding. Records keep their plain MessagePack bytes.
 * Issue #13: a Map was stored as an empty MessagePack map, so a memo hit returned `{}`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecord, decodeValue, encodeRecord, encodeValue } from '../../src/core/codec.js';

const roundTrip = (v: unknown): unknown => decodeValue(encodeValue(v));

/** Deep equality that also tells -0 from 0, holes from undefined, and compares types exactly. */
function expectSame(actual: unknown, expected: unknown): void {
  expect(actual).toStrictEqual(expected);
  expect(canonicalText(actual)).toBe(canonicalText(expected));
}

/** A text form that keeps what toStrictEqual may not: -0, NaN, BigInt, invalid dates, typed array kinds. */
function canonicalText(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (v instanceof Date) return `Date(${v.getTime()})`;
  if (v instanceof Map) return `Map{${[...v].map(([k, x]) => `${canonicalText(k)}=>${canonicalText(x)}`).join(',')}}`;
  if (v instanceof Set) return `Set{${[...v].map(canonicalText).join(',')}}`;
  if (v instanceof ArrayBuffer) return `ArrayBuffer[${[...new Uint8Array(v)].join(',')}]`;
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}[${[...new Uint8Array(v.buffer, v.byteOffset, v.byteLength)].join(',')}]`;
  if (Array.isArray(v)) return `[${v.map(canonicalText).join(',')}]`;
  return `{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${canonicalText((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

describe('value codec', () => {
  const cases: [string, unknown][] = [
    ['null', null],
    ['undefined at the top', undefined],
    ['booleans', [true, false]],
    ['integers and floats', [0, 1, -1, 2 ** 53 - 1, -(2 ** 53), 2 ** 64, 1.5, -1e-300]],
    ['-0, NaN and infinities', [-0, NaN, Infinity, -Infinity]],
    ['strings', ['', 'a', 'ünïcødé ✓ 日本 😀']],
    ['undefined in arrays and objects', { a: undefined, list: [1, undefined, 3] }],
    ['BigInt', [0n, 1n, -1n, 2n ** 64n, -(2n ** 200n)]],
    ['Date', [new Date(0), new Date(-123_456_789_000), new Date(8.64e15), new Date(1_700_000_000_123)]],
    ['an invalid Date', new Date(NaN)],
    ['Map with any keys', new Map<unknown, unknown>([['a', 1], [2, 'b'], [{ k: 1 }, [1]], [undefined, null]])],
    ['Set', new Set<unknown>([1, 'a', { x: 1 }, undefined])],
    ['Uint8Array', new Uint8Array([0, 1, 255])],
    ['the other typed arrays', [new Int8Array([-1, 2]), new Uint8ClampedArray([255]), new Int16Array([-2, 3]), new Uint16Array([65535]), new Int32Array([-5]), new Uint32Array([2 ** 32 - 1]), new Float32Array([1.5, NaN]), new Float64Array([Math.PI, -0]), new BigInt64Array([-1n]), new BigUint64Array([2n ** 64n - 1n])]],
    ['ArrayBuffer and DataView', [Uint8Array.of(1, 2, 3).buffer, new DataView(Uint8Array.of(4, 5).buffer)]],
    ['a typed array over part of a buffer', new Int16Array(new Int16Array([1, 2, 3, 4]).buffer, 2, 2)],
    ['empty containers', [[], {}, new Map(), new Set(), new Uint8Array(0), new Float64Array(0)]],
    ['objects without a prototype (a __proto__ key is ordinary there)', Object.assign(Object.create(null) as object, { a: 1, ['__proto__']: 2, n: Object.create(null) as object })],
    ['nesting', { m: new Map([['s', new Set([new Map([[1n, [new Date(5), undefined, -0]]])])]]) }],
  ];
  it.each(cases)('round-trips %s exactly', (_, value) => {
    expectSame(roundTrip(value), value);
  });

  it('decodes typed arrays into buffers of their own', () => {
    const back = roundTrip({ a: new Float64Array([1, 2]) }) as { a: Float64Array };
    expect(back.a.byteOffset).toBe(0);
    expect(back.a.buffer.byteLength).toBe(16);
  });

  it('reads record bytes the same way the record decoder does', () => {
    const record = { id: 'j1', attempts: 2, payload: Uint8Array.of(1), headers: { a: 'b' }, at: null, list: [1, 'x'] };
    const bytes = encodeRecord(record);
    expect(decodeValue(bytes)).toStrictEqual(decodeRecord(bytes));
  });

  it('leaves record encoding unchanged (plain MessagePack, undefined fields dropped)', () => {
    expect([...encodeRecord({ a: 1, b: undefined })]).toEqual([0x81, 0xa1, 0x61, 0x01]);
    expect(decodeRecord(encodeRecord({ a: 1, b: undefined }))).toStrictEqual({ a: 1 });
  });

  class Point {
    constructor(readonly x: number) {}
  }
  const sparse = [1, , 3]; // a hole at index 1
  const withExtra = Object.assign([1, 2], { extra: true });
  const withSymbol = { a: 1, [Symbol('s')]: 2 };
  const hidden = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  let deep: unknown = 1;
  for (let i = 0; i < 150; i++) deep = [deep];
  const rejected: [string, unknown, string, string][] = [
    ['a function', () => 1, 'a function cannot be stored', 'value'],
    ['a symbol', Symbol('s'), 'a symbol cannot be stored', 'value'],
    ['a nested function', { a: [{ f: () => 1 }] }, 'a function cannot be stored', 'value.a[0].f'],
    ['a symbol inside a Map value', new Map([['k', Symbol('s')]]), 'a symbol cannot be stored', 'value.<map value 0>'],
    ['a function inside a Set', new Set([1, () => 1]), 'a function cannot be stored', 'value.<set element 1>'],
    ['a class instance', { p: new Point(1) }, 'a Point instance cannot be stored', 'value.p'],
    ['a RegExp', /x/, 'a RegExp instance', 'value'],
    ['an Error', new Error('x'), 'a Error instance', 'value'],
    ['a boxed number', Object(1) as unknown, 'a Number instance', 'value'],
    ['a Uint8Array subclass (Buffer)', Buffer.from('x'), 'a Buffer instance', 'value'],
    ['a sparse array', sparse, 'sparse array', 'value[1]'],
    ['an array with extra properties', withExtra, 'properties besides its elements', 'value'],
    ['an object with a symbol key', withSymbol, 'symbol-keyed properties', 'value'],
    ['an object with a non-enumerable property', hidden, 'non-enumerable properties', 'value'],
    ['a lone surrogate', { s: 'a\ud800b' }, 'lone surrogate', 'value.s'],
    ['a lone surrogate in a key', { ['\udc00']: 1 }, 'lone surrogate', 'value["\\udc00"]'],
    ['a __proto__ key in a plain object', JSON.parse('{"__proto__": 1}') as unknown, 'the key __proto__', 'value.__proto__'],
    ['a cycle', cyclic, 'cycle', 'value.self'],
    ['nesting deeper than 100', deep, 'deeper than 100', 'value' + '[0]'.repeat(100)],
  ];
  it.each(rejected)('rejects %s with INVALID_ARGUMENT (serialization) naming the place', (_, value, problem, path) => {
    let thrown: unknown;
    try {
      encodeValue(value);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'serialization', path } });
    expect((thrown as Error).message).toContain(problem);
    expect((thrown as Error).message).toContain(`path=${path}`);
  });

  it('rejects bytes that are not a value it wrote', () => {
    expect(() => decodeValue(Uint8Array.of(0xc1))).toThrow();
    // A Map extension whose body is not key-value pairs.
    expect(() => decodeValue(Uint8Array.of(0xc7, 0x02, 0x04, 0x91, 0x01))).toThrow('key-value pairs');
  });

  // Property: every value built from the supported types, nested freely, comes back exactly.
  const key = fc.string({ unit: 'binary', maxLength: 6 }).filter((k) => k !== '__proto__' && !/[\uD800-\uDFFF]/.test(k));
  const text = fc.string({ unit: 'binary', maxLength: 12 }).filter((k) => !/[\uD800-\uDFFF]/.test(k));
  const leaf = fc.oneof(
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    fc.bigInt(),
    text,
    fc.date({ noInvalidDate: false }),
    fc.uint8Array({ maxLength: 8 }),
    fc.int16Array({ maxLength: 4 }),
    fc.float32Array({ maxLength: 4 }),
    fc.float64Array({ maxLength: 4 }),
    fc.bigInt64Array({ maxLength: 3 }),
    fc.uint32Array({ maxLength: 3 }).map((a) => a.buffer),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 }).map((pairs) => new Map(pairs)),
      fc.array(tie('value'), { maxLength: 3 }).map((items) => new Set(items)),
    ),
  }));

  it('round-trips arbitrary nested values exactly (property)', () => {
    fc.assert(
      fc.property(value, (v) => {
        expectSame(roundTrip(v), v);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips what fc.anything builds from supported types (property)', () => {
    const anything = fc
      .anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true, withObjectString: true, withBoxedValues: false, withSparseArray: false })
      .filter((v) => {
        try {
          encodeValue(v);
          return true;
        } catch {
          return false; // a __proto__ key or a lone surrogate: rejected, covered above
        }
      });
    fc.assert(
      fc.property(anything, (v) => {
        expectSame(roundTrip(v), v);
      }),
      { numRuns: 300 },
    );
  });
});
