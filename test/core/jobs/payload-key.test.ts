/**
 * `payloadIdempotencyKey` (reference `payload_idempotency_key`): `{NAME}:{hex(SHA-256(encoded input))}`,
 * stable, distinct per input, opt-in with `idempotencyKey: 'payload'`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineJob, JobRunner, MemoryObjectStore, payloadIdempotencyKey, Queue } from '../../../src/index.js';
import { encodeValue } from '../../../src/core/codec.js';
import { sha256Hex } from '../../../src/core/hash.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let runs = 0;
const resize = defineJob({
  name: 'img.resize',
  idempotencyKey: 'payload',
  run: async ({ url, width }: { url: string; width: number }) => {
    runs++;
    return `${url}@${width}`;
  },
});

describe('payloadIdempotencyKey', () => {
  it('is NAME: and 64 hex digits of SHA-256 over the codec bytes; stable and distinct per input', async () => {
    const input = { url: 'https://example.com/a.png', width: 640 };
    const key = await payloadIdempotencyKey(resize, input);
    expect(key).toMatch(/^img\.resize:[0-9a-f]{64}$/);
    expect(key).toBe(`img.resize:${await sha256Hex(encodeValue(input))}`);
    expect(await payloadIdempotencyKey(resize, { ...input })).toBe(key);
    expect(await payloadIdempotencyKey(resize, { ...input, width: 320 })).not.toBe(key);
    const other = defineJob({ name: 'img.other', run: async (i: { url: string; width: number }) => i.url });
    expect((await payloadIdempotencyKey(other, input)).split(':')[1]).toBe(key.split(':')[1]);
  });

  it('uses the job codec', async () => {
    const codec = { encode: (v: unknown) => new TextEncoder().encode(JSON.stringify(v)), decode: (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as unknown };
    const json = defineJob({ name: 'json.job', codec, run: async (i: { a: number }) => i.a });
    expect(await payloadIdempotencyKey(json, { a: 1 })).toBe(`json.job:${await sha256Hex(new TextEncoder().encode('{"a":1}'))}`);
  });

  it('rejects what is not a job, an input the codec cannot encode, and an unknown key mode', async () => {
    await expect(payloadIdempotencyKey({} as never, 1)).rejects.toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_job' }) }));
    await expect(payloadIdempotencyKey(resize, { url: 'x', width: (() => 1) as never })).rejects.toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_job_input', job: 'img.resize' }) }),
    );
    expect(() => defineJob({ name: 'bad.key', idempotencyKey: 'content' as never, run: async () => 1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', details: expect.objectContaining({ reason: 'invalid_job', field: 'idempotencyKey' }) }),
    );
  });

  it("with idempotencyKey: 'payload', equal inputs are one job and different inputs two", async () => {
    const store = new MemoryObjectStore();
    const queue = await Queue.open(store, 'app', { logger: false });
    cleanups.push(() => queue.close());
    const runner = new JobRunner(queue, store, { pollIntervalMs: 10, logger: false }).register(resize);
    const worker = runner.spawn();
    cleanups.push(() => worker.shutdown());
    runs = 0;
    const first = await runner.submit(resize, { url: 'a', width: 1 });
    const duplicate = await runner.submit(resize, { url: 'a', width: 1 });
    const other = await runner.submit(resize, { url: 'a', width: 2 });
    expect(duplicate.id).toBe(first.id);
    expect([first.newlySubmitted, duplicate.newlySubmitted, other.newlySubmitted]).toEqual([true, false, true]);
    expect(other.id).not.toBe(first.id);
    expect(await first.result()).toBe('a@1');
    expect(await duplicate.result()).toBe('a@1');
    expect(await other.result()).toBe('a@2');
    // After it finished too: answered from the stored outcome.
    const later = await runner.submit(resize, { url: 'a', width: 1 });
    expect([later.id, later.newlySubmitted]).toEqual([first.id, false]);
    expect(runs).toBe(2);
  });
});
