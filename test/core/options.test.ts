/**
 * Issue #13: unknown options were silently ignored (`queueConfigs: { q: { keepDoneJobs: 1 } }`
 * kept nothing and said nothing), and several argument errors misled (run id 42 read "(empty)",
 * `runAt: -5` read "must be finite", `Queue.open(null)` threw a raw TypeError, `submit(undefined)`
 * started a run). Every options object now rejects unknown names with INVALID_CONFIG naming the
 * option and the nearest known name, and each argument error names the value and the rule it broke.
 */
import { describe, expect, it } from 'vitest';
import { isTaqubaError, type ErrorCode } from '../../src/core/errors.js';
import { KvDb } from '../../src/core/kv/index.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import { checkObjectStore, checkOptions, editDistance, nearestName, numberRule, optionNames } from '../../src/core/options.js';
import { Queue, QueueReader, runWorker } from '../../src/core/queue/index.js';
import { NoopTerminalHook, StepOutcome, Trigger, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { serveWorkflowRuntime } from '../../src/browser/worker.js';
import { WebhookTerminalHook, WebhookWorker } from '../../src/core/webhooks/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';
import { IndexedDbObjectStore } from '../../src/stores/indexeddb/indexeddb-store.js';
import { OpfsObjectStore } from '../../src/stores/opfs/opfs-store.js';
import { S3ObjectStore } from '../../src/stores/s3/s3-store.js';

interface Caught {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

async function caught(fn: () => unknown, code: ErrorCode): Promise<Caught> {
  let thrown: unknown;
  try {
    await fn();
  } catch (e) {
    thrown = e;
  }
  expect(isTaqubaError(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true);
  return thrown as Caught;
}

const openQueues: Queue[] = [];
async function openQueue(): Promise<Queue> {
  const q = await Queue.open(new MemoryObjectStore(), 'q', { logger: false });
  openQueues.push(q);
  return q;
}

describe('option-name helpers', () => {
  it('edit distance counts inserts, deletes and substitutions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('keepDoneJobs', 'keepDoneMs')).toBe(3);
  });

  it('the nearest name ignores case and gives up on names that share nothing', () => {
    const known = ['maxAttempts', 'leaseMs', 'keepDoneMs', 'deadRetentionMs'];
    expect(nearestName('keepDoneJobs', known)).toBe('keepDoneMs');
    expect(nearestName('LEASEMS', known)).toBe('leaseMs');
    expect(nearestName('maxAttempt', known)).toBe('maxAttempts');
    expect(nearestName('zzzzzzzzzzzzzzzzzzzzzz', known)).toBeUndefined();
  });

  it('checkOptions accepts undefined and known names, rejects non-objects and unknown names', async () => {
    const known = optionNames<{ alpha?: number; beta?: string }>({ alpha: true, beta: true });
    expect(known).toEqual(['alpha', 'beta']);
    checkOptions(undefined, known, 'thing');
    checkOptions({ alpha: 1 }, known, 'thing');
    for (const bad of [null, 5, 'x', [1]]) {
      const e = await caught(() => checkOptions(bad, known, 'thing'), 'INVALID_CONFIG');
      expect(e.message).toMatch(/^thing options must be an object\. value=/);
    }
    const typo = await caught(() => checkOptions({ alpah: 1 }, known, 'thing'), 'INVALID_CONFIG');
    expect(typo.message).toBe('unknown thing option. option="alpah" did_you_mean=alpha');
    expect(typo.details).toMatchObject({ option: 'alpah', suggestion: 'alpha', where: 'thing' });
    const far = await caught(() => checkOptions({ somethingElseEntirely: 1 }, known, 'thing', 'INVALID_ARGUMENT', { reason: 'r' }), 'INVALID_ARGUMENT');
    expect(far.message).toBe('unknown thing option. option="somethingElseEntirely" known=alpha,beta');
    expect(far.details).toMatchObject({ reason: 'r', suggestion: null });
  });

  it('numberRule names the first rule a number breaks', () => {
    expect(numberRule(5)).toBeUndefined();
    expect(numberRule('5')).toBe('must be a number, not string');
    expect(numberRule(null)).toBe('must be a number, not null');
    expect(numberRule(NaN)).toBe('must be a number, not NaN');
    expect(numberRule(Infinity)).toBe('must be finite');
    expect(numberRule(-5)).toBe('must not be negative');
    expect(numberRule(1.5, { integer: true })).toBe('must be an integer');
    expect(numberRule(0, { integer: true, min: 1 })).toBe('must be at least 1');
  });

  it('checkObjectStore names what is missing', async () => {
    checkObjectStore(new MemoryObjectStore());
    const e = await caught(() => checkObjectStore({ get() {} }), 'INVALID_ARGUMENT');
    expect(e.message).toContain('missing=put,delete,list');
    expect((await caught(() => checkObjectStore(null, 'payloadStore', 'INVALID_CONFIG'), 'INVALID_CONFIG')).message).toContain('payloadStore=null missing=all');
  });
});

describe('unknown options are rejected everywhere', () => {
  it('Queue.open: per-queue config, default config and top-level typos', async () => {
    const store = new MemoryObjectStore();
    const perQueue = await caught(() => Queue.open(store, 'q', { queueConfigs: { q: { keepDoneJobs: 1 } as never } }), 'INVALID_CONFIG');
    expect(perQueue.message).toBe('unknown queueConfigs["q"] option. option="keepDoneJobs" did_you_mean=keepDoneMs');
    const defaults = await caught(() => Queue.open(store, 'q', { defaultQueueConfig: { leaseMS: 5 } as never }), 'INVALID_CONFIG');
    expect(defaults.details).toMatchObject({ option: 'leaseMS', suggestion: 'leaseMs' });
    const top = await caught(() => Queue.open(store, 'q', { reaperIntervalMS: 5 } as never), 'INVALID_CONFIG');
    expect(top.message).toBe('unknown queue option. option="reaperIntervalMS" did_you_mean=reaperIntervalMs');
    const withPath = await caught(() => Queue.open(store, { path: 'q', payloadPth: 'x' } as never), 'INVALID_CONFIG');
    expect(withPath.details).toMatchObject({ option: 'payloadPth', suggestion: 'payloadPath' });
    await caught(() => Queue.open(store, 'q', { queueConfigs: [] as never }), 'INVALID_CONFIG');
    await caught(() => Queue.open(store, 'q', { queueConfigs: { q: [] as never } }), 'INVALID_CONFIG');
    // Nothing was written by the refused opens.
    const keys: string[] = [];
    for await (const info of store.list('')) keys.push(info.key);
    expect(keys).toEqual([]);
  });

  it('QueueReader.open, the worker loops and enqueue', async () => {
    const queue = await openQueue();
    const reader = await caught(() => QueueReader.open(new MemoryObjectStore(), 'q', { pollIntervalMS: 5 } as never), 'INVALID_CONFIG');
    expect(reader.details).toMatchObject({ option: 'pollIntervalMS', suggestion: 'pollIntervalMs', where: 'queue reader' });
    const worker = await caught(() => runWorker(queue, 'jobs', async () => undefined, { signa: new AbortController().signal } as never), 'INVALID_CONFIG');
    expect(worker.message).toBe('unknown worker option. option="signa" did_you_mean=signal');
    const enqueue = await caught(() => queue.enqueue('jobs', new Uint8Array(0), { priorty: 1 } as never), 'INVALID_ARGUMENT');
    expect(enqueue.message).toBe('unknown enqueue option. option="priorty" did_you_mean=priority');
    await queue.close();
  });

  it('KvDb.open and KvDb.openReader', async () => {
    const e = await caught(() => KvDb.open(new MemoryObjectStore(), { memtableByte: 4096 } as never), 'INVALID_CONFIG');
    expect(e.details).toMatchObject({ option: 'memtableByte', suggestion: 'memtableBytes', where: 'kv' });
    await caught(() => KvDb.openReader(new MemoryObjectStore(), { pth: 'kv' } as never), 'INVALID_CONFIG');
  });

  it('the workflow runtime names the nearest option too', async () => {
    const queue = await openQueue();
    const e = await caught(() => new WorkflowRuntime(queue, new MemoryObjectStore(), async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook(), { memoRetention: 5 } as never), 'INVALID_CONFIG');
    expect(e.message).toBe('unknown workflow runtime option. option="memoRetention" did_you_mean=memoRetentionMs');
    await queue.close();
  });

  it('store constructors (fs, s3 and its retry options, indexeddb, opfs)', async () => {
    expect((await caught(() => new FileSystemObjectStore({ root: '/tmp/x', writerlock: false } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'writerlock', suggestion: 'writerLock' });
    expect((await caught(() => new S3ObjectStore({ bucket: 'b', prefx: 'a/' } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'prefx', suggestion: 'prefix' });
    expect((await caught(() => new S3ObjectStore({ bucket: 'b', retry: { maxAttempt: 2 } } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'maxAttempt', suggestion: 'maxAttempts' });
    expect((await caught(() => new IndexedDbObjectStore({ name: 'n', version: 2 } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'version' });
    expect((await caught(() => new OpfsObjectStore({ directory: 'd', dir: 'x' } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'dir' });
    for (const make of [() => new FileSystemObjectStore(undefined as never), () => new S3ObjectStore(null as never), () => new IndexedDbObjectStore(undefined as never), () => new OpfsObjectStore(null as never)]) {
      expect((await caught(make, 'INVALID_CONFIG')).message).toMatch(/store options must be an object/);
    }
  });

  it('the browser host (checked before anything is exposed)', async () => {
    const e = await caught(() => serveWorkflowRuntime({ store: 'indexeddb', name: 'app', runner: () => StepOutcome.succeed(new Uint8Array()), terminalhook: undefined } as never), 'INVALID_CONFIG');
    expect(e.details).toMatchObject({ option: 'terminalhook', suggestion: 'terminalHook' });
  });

  it('the webhook hook and worker', async () => {
    expect((await caught(() => new WebhookTerminalHook({ targetQueue: 'hooks', timeoutMS: 5 } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'timeoutMS', suggestion: 'timeoutMs' });
    expect((await caught(() => new WebhookWorker({ secrets: 'x' } as never), 'INVALID_CONFIG')).details).toMatchObject({ option: 'secrets', suggestion: 'secret' });
  });
});

describe('argument errors name the value and the rule', () => {
  it('Queue.open rejects a missing store or a misplaced argument with a typed error', async () => {
    const nullStore = await caught(() => Queue.open(null as never, 'q'), 'INVALID_ARGUMENT');
    expect(nullStore.message).toBe('store must be an ObjectStore (get, put, delete and list methods). store=null missing=all');
    expect((await caught(() => Queue.open(null as never, undefined as never), 'INVALID_ARGUMENT')).message).toContain('store=null');
    expect((await caught(() => Queue.open({} as never, 'q'), 'INVALID_ARGUMENT')).message).toContain('missing=get,put,delete,list');
    expect((await caught(() => Queue.open(new MemoryObjectStore(), 5 as never), 'INVALID_CONFIG')).message).toBe('Queue.open takes a path string or an options object with a path. value=5');
    await caught(() => Queue.open(new MemoryObjectStore(), null as never), 'INVALID_CONFIG');
    await caught(() => (Queue.open as (...args: unknown[]) => Promise<Queue>)(new MemoryObjectStore(), { path: 'q' }, { logger: false }), 'INVALID_CONFIG');
    await caught(() => Queue.open(new MemoryObjectStore(), 'q', { payloadStore: {} as never }), 'INVALID_CONFIG');
    await caught(() => QueueReader.open(null as never, 'q'), 'INVALID_ARGUMENT');
    await caught(() => KvDb.open(undefined as never), 'INVALID_ARGUMENT');
  });

  it('runAt, delays, counts and priorities say which rule they broke', async () => {
    const queue = await openQueue();
    const enqueue = (options: object) => queue.enqueue('jobs', new Uint8Array(0), options);
    expect((await caught(() => enqueue({ runAt: -5 }), 'INVALID_ARGUMENT')).message).toBe('runAt must not be negative (an epoch time in milliseconds). runAt=-5');
    expect((await caught(() => enqueue({ runAt: Infinity }), 'INVALID_ARGUMENT')).message).toBe('runAt must be finite (an epoch time in milliseconds). runAt=Infinity');
    expect((await caught(() => enqueue({ runAt: '5' }), 'INVALID_ARGUMENT')).message).toBe('runAt must be a number, not string (an epoch time in milliseconds). runAt="5"');
    expect((await caught(() => enqueue({ priority: 1.5 }), 'INVALID_ARGUMENT')).message).toBe('priority must be an integer (an integer in [0, 2^32)). priority=1.5');
    expect((await caught(() => enqueue({ priority: 2 ** 32 }), 'INVALID_ARGUMENT')).message).toContain('priority must be below 2^32');
    expect((await caught(() => enqueue({ maxAttempts: 0 }), 'INVALID_ARGUMENT')).message).toBe('maxAttempts must be at least 1 (an integer of at least 1). maxAttempts=0');
    expect((await caught(() => queue.claimBatch('jobs', -1, 1000), 'INVALID_ARGUMENT')).message).toContain('must not be negative (a count)');
    expect((await caught(() => Queue.open(new MemoryObjectStore(), 'q', { reaperIntervalMs: 0 }), 'INVALID_CONFIG')).message).toBe('reaperIntervalMs must be positive (a positive duration in milliseconds). reaperIntervalMs=0');
    expect(() => StepOutcome.continueAfter(new Uint8Array(0), -1)).toThrow('delayMs must not be negative (a duration in milliseconds). delayMs=-1');
    expect(() => Trigger.after(NaN)).toThrow('delayMs must be a number, not NaN');
    await queue.close();
  });

  it('ids of the wrong type say so instead of "empty"', async () => {
    const queue = await openQueue();
    const runtime = new WorkflowRuntime(queue, new MemoryObjectStore(), async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook());
    const run = await caught(() => runtime.readStatus(42 as never), 'INVALID_ARGUMENT');
    expect(run.message).toBe('invalid run id (not a string); expected a string of 1..128 characters of [A-Za-z0-9_-]. runId=42');
    expect(run.details).toMatchObject({ reason: 'invalid_run_id', why: 'not_a_string' });
    expect((await caught(() => runtime.readStatus(''), 'INVALID_ARGUMENT')).details).toMatchObject({ why: 'empty' });
    const job = await caught(() => queue.getJob(7 as never), 'INVALID_ARGUMENT');
    expect(job.message).toBe('job id must be a non-empty string, not number. id=7');
    expect(job.details).toMatchObject({ reason: 'not_a_string' });
    expect((await caught(() => queue.enqueue(3 as never, new Uint8Array(0)), 'INVALID_ARGUMENT')).message).toBe('queue name must be a non-empty string, not number. queue=3');
    await queue.close();
  });

  it('submit(undefined) and unknown spec fields are rejected', async () => {
    const queue = await openQueue();
    const runtime = new WorkflowRuntime(queue, new MemoryObjectStore(), async () => StepOutcome.succeed(new Uint8Array(0)), new NoopTerminalHook());
    for (const spec of [undefined, null, 'run-1', []]) {
      const e = await caught(() => runtime.submit(spec as never), 'INVALID_ARGUMENT');
      expect(e.message).toMatch(/^run spec must be an object \(use \{\} for an empty input\)\. spec=/);
      expect(e.details).toMatchObject({ reason: 'invalid_spec' });
    }
    const typo = await caught(() => runtime.submit({ runID: 'r1' } as never), 'INVALID_ARGUMENT');
    expect(typo.message).toBe('unknown run spec option. option="runID" did_you_mean=runId');
    expect(typo.details).toMatchObject({ reason: 'invalid_spec', option: 'runID' });
    const runAt = await caught(() => runtime.submit({ runAt: -5 }), 'INVALID_ARGUMENT');
    expect(runAt.message).toContain('runAt must not be negative');
    expect(await queue.stats('workflow-steps')).toMatchObject({ pending: 0, scheduled: 0 });
    await queue.close();
  });
});
