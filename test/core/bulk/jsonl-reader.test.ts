/**
 * `readJsonl` (reference `read_jsonl`): typed items from text; blank lines skipped; a bad line is an
 * error item naming its line number and reading goes on.
 */
import { describe, expect, it } from 'vitest';
import { readJsonl, type JsonlItem, type JsonlSource, type ReadJsonlOptions } from '../../../src/index.js';

async function all<T>(source: JsonlSource, options?: ReadJsonlOptions<T>): Promise<JsonlItem<T>[]> {
  const out: JsonlItem<T>[] = [];
  for await (const item of readJsonl<T>(source, options)) out.push(item);
  return out;
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function streamOf(chunks: (Uint8Array | string)[], onCancel?: () => void): ReadableStream<Uint8Array | string> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]!);
      else controller.close();
    },
    cancel: () => onCancel?.(),
  });
}

describe('readJsonl', () => {
  it('yields one item per non-blank line with its line number, and bad lines as error items without stopping', async () => {
    const items = await all('{"id":1}\n\n   \n{"id":2}\nnot json\n{"id":3}');
    expect(items.filter((i) => i.ok)).toEqual([
      { ok: true, line: 1, value: { id: 1 } },
      { ok: true, line: 4, value: { id: 2 } },
      { ok: true, line: 6, value: { id: 3 } },
    ]);
    const bad = items.find((i) => !i.ok);
    expect(bad).toMatchObject({ ok: false, line: 5, text: 'not json', error: { code: 'INVALID_ARGUMENT', details: { reason: 'invalid_jsonl_line', line: 5 } } });
    expect(bad!.ok === false && bad!.error.message).toContain('line 5 is not JSON');
  });

  it('joins lines and characters split across byte chunks, drops \\r before \\n, and reads a last line without a newline', async () => {
    const text = '{"name":"Zoë ✓"}\r\n{"name":"😀"}\n{"n":3}';
    const raw = bytes(text);
    // Every split point, including inside multi-byte characters.
    for (let cut = 1; cut < raw.length; cut += 3) {
      const items = await all([raw.slice(0, cut), raw.slice(cut)]);
      expect(items.map((i) => (i.ok ? i.value : i.error.message)), `cut at ${cut}`).toEqual([{ name: 'Zoë ✓' }, { name: '😀' }, { n: 3 }]);
    }
    // One byte at a time.
    expect(await all(Array.from(raw, (b) => Uint8Array.of(b)))).toHaveLength(3);
  });

  it('reads a ReadableStream, async and sync iterables of text or bytes, a Uint8Array and a string alike', async () => {
    const expected = [{ ok: true, line: 1, value: 1 }, { ok: true, line: 2, value: [2] }];
    expect(await all(streamOf([bytes('1\n['), bytes('2]\n')]))).toEqual(expected);
    expect(await all(streamOf(['1\n', '[2]']))).toEqual(expected);
    expect(await all((async function* () { yield '1\n[2'; yield bytes(']'); })())).toEqual(expected);
    expect(await all(['1\n', '[2]\n'])).toEqual(expected);
    expect(await all(bytes('1\n[2]\n'))).toEqual(expected);
    expect(await all('1\n[2]')).toEqual(expected);
    expect(await all('')).toEqual([]);
  });

  it('a line that is not UTF-8 is an error item; the next lines still read', async () => {
    const items = await all([bytes('{"a":1}\n'), Uint8Array.of(0x22, 0xff, 0xfe, 0x22, 0x0a), bytes('{"a":3}\n')]);
    expect(items.map((i) => i.ok)).toEqual([true, false, true]);
    expect(items[1]).toMatchObject({ line: 2, error: { details: { reason: 'invalid_jsonl_line', line: 2 } } });
    expect(items[1]!.ok === false && items[1]!.error.message).toContain('not UTF-8');
  });

  it('types values through parse; a value parse rejects is an error item', async () => {
    const parse = (v: unknown): { id: number } => {
      if (typeof (v as { id?: unknown })?.id !== 'number') throw new Error('id must be a number');
      return v as { id: number };
    };
    const items = await all('{"id":1}\n{"id":"x"}\n', { parse });
    expect(items[0]).toEqual({ ok: true, line: 1, value: { id: 1 } });
    expect(items[1]).toMatchObject({ ok: false, line: 2, text: '{"id":"x"}' });
    expect(items[1]!.ok === false && items[1]!.error.message).toContain('fails parse: id must be a number');
  });

  it('cancels the stream when the consumer stops early', async () => {
    let cancelled = false;
    for await (const item of readJsonl(streamOf(['1\n2\n', '3\n'], () => (cancelled = true)))) {
      expect(item).toMatchObject({ ok: true, value: 1 });
      break;
    }
    expect(cancelled).toBe(true);
  });

  it('rejects a source of another kind at once and a chunk of another kind when read; a failing source throws', async () => {
    for (const source of [42, null, { read: () => 1 }]) {
      expect(() => readJsonl(source as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_source' }) }));
    }
    expect(() => readJsonl('1', { parse: 'x' as never })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    await expect(all([{} as never])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_source' } });
    const failing = new ReadableStream<Uint8Array>({ pull: (c) => c.error(new Error('disk gone')) });
    await expect(all(failing)).rejects.toThrow('disk gone');
  });
});
