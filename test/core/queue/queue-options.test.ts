/**
 * Open-time validation of the queue's path-like options (issue #12): a bad object-key prefix
 * rejects the open with INVALID_CONFIG naming the option, its value and the rule, before anything
 * is written, instead of failing at the first offloaded payload.
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError } from '../../../src/core/errors.js';
import { KEY_PREFIX_RULE } from '../../../src/core/objects/keys.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { Queue, QueueReader } from '../../../src/core/queue/index.js';
import { resolveQueueOptions } from '../../../src/core/queue/queue-options.js';

const BAD_PREFIXES = ['../escape', 'a/../b', './a', 'a/.', '..', '.', '/abs', 'a//b', 'trailing/', '', 'back\\slash', 'nul\0byte'];

function configError(fn: () => unknown): { message: string; details: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    expect(isTaqubaError(e, 'INVALID_CONFIG'), String(e)).toBe(true);
    return e as { message: string; details: Record<string, unknown> };
  }
  throw new Error('expected INVALID_CONFIG');
}

async function listAll(store: MemoryObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of store.list('')) keys.push(info.key);
  return keys;
}

describe('queue path options', () => {
  for (const bad of BAD_PREFIXES) {
    it(`payloadPath ${JSON.stringify(bad)} is rejected with INVALID_CONFIG naming the option, value and rule`, () => {
      const e = configError(() => resolveQueueOptions('app', { payloadPath: bad }));
      expect(e.message).toBe(`payloadPath ${KEY_PREFIX_RULE}. payloadPath=${JSON.stringify(bad)}`);
      expect(e.details).toEqual({ option: 'payloadPath', value: JSON.stringify(bad) });
    });

    it(`queue path ${JSON.stringify(bad)} is rejected with INVALID_CONFIG naming path`, () => {
      const e = configError(() => resolveQueueOptions(bad));
      expect(e.details.option).toBe('path');
    });
  }

  it('a payloadPath that is not a string is rejected naming its type', () => {
    expect(configError(() => resolveQueueOptions('app', { payloadPath: 42 as unknown as string })).message).toContain('payloadPath=number');
  });

  it('accepts nested prefixes, dots inside segments and a payloadPath in another store that nests in the path', () => {
    expect(resolveQueueOptions('apps/one', { payloadPath: 'blobs/.v1/x..y' }).payloadPath).toBe('blobs/.v1/x..y');
    expect(resolveQueueOptions('apps/one').payloadPath).toBe('apps/one-payloads');
    expect(resolveQueueOptions('app', { payloadStore: new MemoryObjectStore(), payloadPath: 'app/payloads' }).payloadPath).toBe('app/payloads');
  });

  it("Queue.open rejects payloadPath '../escape' before writing anything", async () => {
    const store = new MemoryObjectStore();
    await expect(Queue.open(store, 'app', { payloadPath: '../escape' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      details: { option: 'payloadPath', value: '"../escape"' },
    });
    await expect(Queue.open(store, { path: 'app/../x' })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'path' } });
    expect(await listAll(store)).toEqual([]);
  });

  it("QueueReader.open rejects payloadPath '../escape' before reading anything", async () => {
    await expect(QueueReader.open(new MemoryObjectStore(), 'app', { payloadPath: '../escape', pollIntervalMs: null })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      details: { option: 'payloadPath' },
    });
  });
});
