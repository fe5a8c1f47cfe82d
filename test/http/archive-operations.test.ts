/**
 * Issue 30, items 1-4 over the one operation list: `exportRun`, `importRun`, `listMovedRuns` and
 * `confirmHandOff` are operations every carrier serves. Here two Node hosts (a memory store and a
 * filesystem store) served over HTTP: a run waiting for a signal is copied, then handed off from
 * one to the other through their HTTP clients (the archive crosses as bytes), continues there and
 * ends; the source lists it as moved until the delivery is confirmed. Sent again after a lost
 * answer, an import applies once, and a hand-off export answers the same archive. Bad arguments
 * are typed errors.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, serveHttp, type HttpRuntimeServer, type HttpWorkflowClient } from '../../src/http/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { createRuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow, describeRunArchive, type RunnerHandle } from '../../src/core/workflow/index.js';
import { isTaqubaError } from '../../src/core/errors.js';
import { waitFor } from '../support/wait.js';

const quiet = { warn: () => undefined, info: () => undefined };

/** Counts its step's executions per run, wherever it runs. */
const executions = new Map<string, number>();
const relay = defineWorkflow({
  name: 'relay',
  async run(ctx, name: string) {
    const first = await ctx.step('first', () => {
      executions.set(`${ctx.runId}:first`, (executions.get(`${ctx.runId}:first`) ?? 0) + 1);
      return `first ${name}`;
    });
    const go = await ctx.waitForSignal<string>('go', { timeoutMs: 60_000 });
    const second = await ctx.step('second', () => {
      executions.set(`${ctx.runId}:second`, (executions.get(`${ctx.runId}:second`) ?? 0) + 1);
      return `second ${go.timedOut ? '' : go.value}`;
    });
    return [first, second];
  },
});

interface Served {
  readonly client: HttpWorkflowClient;
  readonly server: HttpRuntimeServer;
  close(): Promise<void>;
}

async function serve(store: ObjectStore, fetchOf?: typeof fetch): Promise<Served> {
  const queue = await Queue.open(store, 'app', { logger: quiet });
  const host = createRuntimeHost(queue, store, { runner: { workflows: [relay] }, runtimeOptions: { pollIntervalMs: 20, logger: quiet } });
  const worker: RunnerHandle = host.spawn();
  const server = await serveHttp(host, { statusPollMs: 20 });
  const client = connectHttp(server.url, fetchOf === undefined ? {} : { fetch: fetchOf });
  return {
    client,
    server,
    async close() {
      await client.close();
      await server.close();
      await worker.shutdown();
      await queue.close();
    },
  };
}

let dir: string;
let source: Served;
let target: Served;
/** The target's client, whose first answer to an import is lost on its way back (set per test). */
let lossyTarget: HttpWorkflowClient;
let loseNextImportAnswer = false;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-archive-ops-'));
  source = await serve(new MemoryObjectStore());
  target = await serve(new FileSystemObjectStore({ root: dir }));
  const lossy: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (loseNextImportAnswer && String(input).endsWith('/ops/importRun')) {
      loseNextImportAnswer = false;
      // The import was applied; its answer never arrives.
      throw new TypeError('fetch failed (test: answer lost)');
    }
    return response;
  };
  lossyTarget = connectHttp(target.server.url, { fetch: lossy });
});

afterAll(async () => {
  await lossyTarget?.close();
  await source?.close();
  await target?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function waitingRun(name: string): Promise<string> {
  const run = await source.client.start(relay, name);
  await waitFor(async () => (await source.client.status(run.runId))?.state === 'waiting-for-signal', 'the run to wait for go');
  return run.runId;
}

describe('run archives over the operation list', () => {
  it('a copy crosses as bytes and changes nothing in the source', async () => {
    const runId = await waitingRun('copy');
    const archive = await source.client.exportRun(runId);
    expect(archive).toBeInstanceOf(Uint8Array);
    expect(await describeRunArchive(archive)).toMatchObject({ runId, handOff: false, to: null, kind: 'function', state: 'waiting-for-signal' });
    expect((await source.client.status(runId))?.state).toBe('waiting-for-signal');
    // A copy imports under a new id.
    const copy = await target.client.importRun(archive);
    expect(copy.runId).not.toBe(runId);
    expect(copy.newlyImported).toBe(true);
    await source.client.cancel(runId);
    await target.client.cancel(copy.runId);
  });

  it('hands a run off through the HTTP clients: it continues in the target, the source keeps it as moved until the delivery is confirmed', async () => {
    const runId = await waitingRun('moving');
    const archive = await source.client.exportRun(runId, { handOff: true, to: target.server.url });
    const { archiveId } = await describeRunArchive(archive);
    expect(await source.client.status(runId)).toBeNull();
    const moved = (await source.client.listMovedRuns({ undelivered: true })).runs.find((r) => r.runId === runId);
    expect(moved).toMatchObject({ runId, step: expect.any(Number), movedTo: target.server.url, archiveId, deliveredAtMs: null });
    // Asked again (an answer lost on the way back): the same archive.
    expect(await source.client.exportRun(runId, { handOff: true, to: target.server.url })).toEqual(archive);

    // The import's answer is lost; the client sends it again and the target answers its first import.
    loseNextImportAnswer = true;
    const imported = await lossyTarget.importRun(archive);
    expect(loseNextImportAnswer).toBe(false);
    expect(imported).toMatchObject({ runId, archiveId, newlyImported: false });
    expect((await target.client.listRuns()).runs.filter((r) => r.runId === runId)).toHaveLength(1);

    expect(await source.client.confirmHandOff(runId, archiveId)).toBe(true);
    expect(await source.client.confirmHandOff(runId, archiveId)).toBe(true);
    expect(await source.client.confirmHandOff(runId, 'another-archive')).toBe(false);
    expect((await source.client.listMovedRuns({ undelivered: true })).runs.map((r) => r.runId)).not.toContain(runId);
    expect((await source.client.listMovedRuns()).runs.find((r) => r.runId === runId)?.deliveredAtMs).toEqual(expect.any(Number));

    await target.client.signal(runId, 'go', 'there');
    expect(await target.client.workflowRun(relay, runId).result()).toEqual(['first moving', 'second there']);
    // The step that completed before the move did not run again.
    expect([executions.get(`${runId}:first`), executions.get(`${runId}:second`)]).toEqual([1, 1]);
    const gone = await source.client.result(runId).catch((e: unknown) => e);
    expect(isTaqubaError(gone, 'NOT_FOUND') && gone.details['reason']).toBe('run_moved');
  });

  it('refuses bad arguments with typed errors', async () => {
    const badId = await source.client.confirmHandOff('no such/id', 'a').catch((e: unknown) => e);
    expect(isTaqubaError(badId, 'INVALID_ARGUMENT') && badId.details['reason']).toBe('invalid_run_id');
    const badArchiveId = await source.client.confirmHandOff('run-1', '').catch((e: unknown) => e);
    expect(isTaqubaError(badArchiveId, 'INVALID_ARGUMENT') && badArchiveId.details['reason']).toBe('invalid_archive_id');
    const badLimit = await source.client.listMovedRuns({ limit: 0 }).catch((e: unknown) => e);
    expect(isTaqubaError(badLimit, 'INVALID_ARGUMENT') && badLimit.details['reason']).toBe('invalid_limit');
    const damaged = await target.client.importRun(new Uint8Array([1, 2, 3])).catch((e: unknown) => e);
    expect(isTaqubaError(damaged, 'CORRUPT_DATA')).toBe(true);
    const unknown = await source.client.exportRun('never-started').catch((e: unknown) => e);
    expect(isTaqubaError(unknown, 'NOT_FOUND') && unknown.details['reason']).toBe('run_not_found');
  });
});
