/**
 * Issue 30, item 3: a store's operations over HTTP. A Node host on a filesystem store served on
 * 127.0.0.1 (`serveHttp`), and its client (`connectHttp`) with the worker client's typed API:
 * a workflow function started, signalled and awaited for its typed result, its status and the run
 * lists read; its events streamed (the terminal one ends the stream). A command whose answer is
 * lost is sent again with its command id and applies once. Refusals are typed errors: no
 * authentication, an unknown operation or route, a body that is not an operation request, too
 * large or of another type. The close answers waits and ends streams at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { connectHttp, serveHttp, type HttpRunEvent, type HttpRuntimeServer, type HttpWorkflowClient } from '../../src/http/index.js';
import { decodeBody, encodeBody, MSGPACK } from '../../src/http/wire.js';
import type { WorkflowClient } from '../../src/browser/index.js';
import { fromWireError } from '../../src/browser/wire-error.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { createRuntimeHost, type RuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { defineWorkflow, type RunnerHandle } from '../../src/core/workflow/index.js';
import { isTaqubaError, StorePermissionError, type TaqubaError } from '../../src/core/errors.js';
import { waitFor } from '../support/wait.js';

const quiet = { warn: () => undefined, info: () => undefined };
const TOKEN = 'Bearer let-me-in';
const auth = { authorization: TOKEN };

/** Waits for its greeting, then composes it (bytes too, to see them cross as bytes). */
const greet = defineWorkflow({
  name: 'greet',
  async run(ctx, name: string) {
    const answer = await ctx.waitForSignal<string>('greeting', { timeoutMs: 60_000 });
    const greeting = answer.timedOut ? 'Hi' : answer.value;
    return ctx.step('compose', () => ({ text: `${greeting}, ${name}!`, bytes: new Uint8Array([1, 2, 3]) }));
  },
});

let dir: string;
let queue: Queue;
let host: RuntimeHost;
let worker: RunnerHandle;
let server: HttpRuntimeServer;
let client: HttpWorkflowClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'taquba-http-'));
  const store = new FileSystemObjectStore({ root: dir });
  queue = await Queue.open(store, 'app', { logger: quiet });
  host = createRuntimeHost(queue, store, { runner: { workflows: [greet] }, runtimeOptions: { pollIntervalMs: 20, logger: quiet } });
  worker = host.spawn();
  server = await serveHttp(host, { statusPollMs: 20, authenticate: (request) => request.headers.authorization === TOKEN });
  client = connectHttp(server.url, { headers: auth });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await worker?.shutdown();
  await queue?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A raw request to the server, its status and decoded error. */
async function raw(path: string, init: RequestInit = {}): Promise<{ status: number; error: TaqubaError }> {
  const response = await fetch(`${server.url}${path}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string>) } });
  const answer = decodeBody(new Uint8Array(await response.arrayBuffer())) as { error: Parameters<typeof fromWireError>[0] };
  return { status: response.status, error: fromWireError(answer.error) as TaqubaError };
}

const post = (body: Uint8Array | string, contentType = MSGPACK): RequestInit => ({ method: 'POST', body: body as BodyInit, headers: { 'content-type': contentType } });

describe('serveHttp and connectHttp', () => {
  it('has the worker client’s typed run operations', () => {
    expectTypeOf<HttpWorkflowClient['submit']>().toEqualTypeOf<WorkflowClient['submit']>();
    expectTypeOf<HttpWorkflowClient['status']>().toEqualTypeOf<WorkflowClient['status']>();
    expectTypeOf<HttpWorkflowClient['cancel']>().toEqualTypeOf<WorkflowClient['cancel']>();
    expectTypeOf<HttpWorkflowClient['signal']>().toEqualTypeOf<WorkflowClient['signal']>();
    expectTypeOf<HttpWorkflowClient['result']>().toEqualTypeOf<WorkflowClient['result']>();
    expectTypeOf<HttpWorkflowClient['listRuns']>().toEqualTypeOf<WorkflowClient['listRuns']>();
    expectTypeOf<HttpWorkflowClient['runTimeline']>().toEqualTypeOf<WorkflowClient['runTimeline']>();
    expectTypeOf<HttpWorkflowClient['start']>().toEqualTypeOf<WorkflowClient['start']>();
    expectTypeOf<HttpWorkflowClient['workflowRun']>().toEqualTypeOf<WorkflowClient['workflowRun']>();
    expectTypeOf<HttpWorkflowClient['jobs']>().toEqualTypeOf<WorkflowClient['jobs']>();
  });

  it('starts a workflow function, signals it and awaits its typed result; status, run lists and events', async () => {
    const seen: string[] = [];
    const run = await client.start(greet, 'Ada', { onEvent: (event) => seen.push(event.type) });
    expect(run.newlySubmitted).toBe(true);
    const events = client.events({ runId: run.runId });

    await waitFor(async () => (await client.status(run.runId))?.state === 'waiting-for-signal', 'the run to wait for its greeting');
    const active = await client.listRuns({ status: 'waiting-for-signal' });
    expect(active.runs.map((r) => r.runId)).toContain(run.runId);

    expect(await client.signal(run.runId, 'greeting', 'Hello')).toBe('delivered');
    const value = await run.result();
    expectTypeOf(value).toEqualTypeOf<{ text: string; bytes: Uint8Array<ArrayBuffer> }>();
    expect(value).toEqual({ text: 'Hello, Ada!', bytes: new Uint8Array([1, 2, 3]) });
    expect(value.bytes).toBeInstanceOf(Uint8Array);

    expect(await client.status(run.runId)).toMatchObject({ runId: run.runId, state: 'succeeded' });
    const finished = await client.listFinishedRuns({ status: 'succeeded' });
    expect(finished.runs.find((r) => r.runId === run.runId)?.result).toBeInstanceOf(Uint8Array);
    expect((await client.result(run.runId)).status).toBe('succeeded');

    // The stream: the state as it changed, then the outcome, and then it ends.
    const streamed: HttpRunEvent[] = [];
    for await (const event of events) streamed.push(event);
    expect(streamed.at(-1)).toMatchObject({ type: 'terminal', runId: run.runId, status: 'succeeded', executor: expect.stringMatching(/^http-/) });
    expect(streamed.filter((e) => e.type === 'run-status').map((e) => (e.type === 'run-status' ? e.state : ''))).toContain('waiting-for-signal');
    await waitFor(() => seen.includes('terminal'), 'the handle’s terminal event');
    // A late subscriber still gets the outcome while the store keeps it.
    const late: HttpRunEvent[] = [];
    for await (const event of client.events({ runId: run.runId })) late.push(event);
    expect(late.map((e) => e.type)).toEqual(['terminal']);
  });

  it('sends a command again with its command id when its answer is lost: applied once', async () => {
    const sent: { path: string; commandId: unknown }[] = [];
    const lose = new Set(['/ops/submit', '/ops/signal']);
    // Drops the first answer of each command after the server applied it (what a dropped connection does).
    const lossy: typeof fetch = async (input, init) => {
      const path = new URL(String(input)).pathname;
      if (path.startsWith('/ops/')) sent.push({ path, commandId: (decodeBody(init!.body as Uint8Array) as { commandId?: unknown }).commandId });
      const response = await fetch(input, init);
      if (!lose.delete(path)) return response;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: the connection dropped before the answer');
    };
    const flaky = connectHttp(server.url, { headers: auth, fetch: lossy });

    const run = await flaky.start(greet, 'Bob');
    // The first send's answer, kept by the server: a second application would say "already there".
    expect(run.newlySubmitted).toBe(true);
    await waitFor(async () => (await flaky.status(run.runId))?.state === 'waiting-for-signal', 'the run to wait for its greeting');
    expect(await flaky.signal(run.runId, 'greeting', 'Howdy')).toBe('delivered');
    expect((await run.result()).text).toBe('Howdy, Bob!');

    const submits = sent.filter((s) => s.path === '/ops/submit');
    const signals = sent.filter((s) => s.path === '/ops/signal');
    expect(submits).toHaveLength(2);
    expect(signals).toHaveLength(2);
    expect(typeof submits[0]!.commandId).toBe('string');
    expect(submits[1]!.commandId).toBe(submits[0]!.commandId);
    expect(signals[1]!.commandId).toBe(signals[0]!.commandId);
    expect(submits[0]!.commandId).not.toBe(signals[0]!.commandId);
    await flaky.close();
  });

  it('refuses a request the authentication hook refuses: 401, a typed error', async () => {
    const stranger = connectHttp(server.url);
    const error = await stranger.status('anything').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorePermissionError);
    expect(isTaqubaError(error, 'STORE_PERMISSION') && error.details['reason']).toBe('unauthenticated');
    expect((await fetch(`${server.url}/ops/status`, post(encodeBody({ args: ['x'] })))).status).toBe(401);
    // The event stream too: the refusal ends it.
    const refused = await stranger.events({ runId: 'anything' }).next().catch((e: unknown) => e);
    expect(isTaqubaError(refused, 'STORE_PERMISSION')).toBe(true);
    await stranger.close();
  });

  it('answers bad requests with typed errors', async () => {
    const unknown = await raw('/ops/launchMissiles', post(encodeBody({ args: [] })));
    expect(unknown.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'unknown_operation', method: 'launchMissiles' } });

    const garbage = await raw('/ops/status', post(new Uint8Array([0xc1])));
    expect(garbage.status).toBe(400);
    expect(garbage.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_body' } });
    const notACall = await raw('/ops/status', post(encodeBody({ args: 'run-1' })));
    expect(notACall.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_body' } });

    const json = await raw('/ops/status', post(JSON.stringify({ args: ['run-1'] }), 'application/json'));
    expect(json.status).toBe(415);
    expect(json.error.details['reason']).toBe('unsupported_content_type');
    expect((await raw('/ops/status')).error.details['reason']).toBe('method_not_allowed');
    expect((await raw('/nowhere')).status).toBe(404);
    expect((await raw('/events')).error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_run_id' } });

    // The operations' own checks come back typed through the client.
    const badId = await client.status('not a run id!').catch((e: unknown) => e);
    expect(isTaqubaError(badId, 'INVALID_ARGUMENT') && badId.details['reason']).toBe('invalid_run_id');
    const notFound = await client.result('never-submitted').catch((e: unknown) => e);
    expect(isTaqubaError(notFound, 'NOT_FOUND')).toBe(true);
    const unregistered = defineWorkflow({ name: 'not-served', run: async () => 1 });
    const notServed = await client.start(unregistered, undefined).catch((e: unknown) => e);
    expect(isTaqubaError(notServed, 'INVALID_ARGUMENT') && notServed.details['reason']).toBe('unknown_workflow');
    const badName = await client.signal('run-1', '', 'x').catch((e: unknown) => e);
    expect(isTaqubaError(badName, 'INVALID_ARGUMENT') && badName.details['reason']).toBe('invalid_signal_name');
  });

  it('refuses a body over the limit unread', async () => {
    const small = await serveHttp(host, { maxBodyBytes: 1024 });
    try {
      const response = await fetch(`${small.url}/ops/signal`, post(encodeBody({ args: ['key', new Uint8Array(4096)] })));
      expect(response.status).toBe(413);
      const { error } = decodeBody(new Uint8Array(await response.arrayBuffer())) as { error: Parameters<typeof fromWireError>[0] };
      expect(fromWireError(error)).toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'body_too_large', maxBytes: 1024 } });
      const tooLarge = await connectHttp(small.url).signal('key', new Uint8Array(4096)).catch((e: unknown) => e);
      expect(isTaqubaError(tooLarge, 'INVALID_ARGUMENT') && tooLarge.details['reason']).toBe('body_too_large');
    } finally {
      await small.close();
    }
  });

  it('closes gracefully: waits answer and event streams end at once; the client’s own close rejects its calls', async () => {
    const closing = await serveHttp(host, { statusPollMs: 20 });
    const remote = connectHttp(closing.url, { retries: 0 });
    const run = await remote.start(greet, 'Cy');
    await waitFor(async () => (await remote.status(run.runId))?.state === 'waiting-for-signal', 'the run to wait for its greeting');
    const events = remote.events({ runId: run.runId });
    expect((await events.next()).value).toMatchObject({ type: 'run-status', state: 'waiting-for-signal' });
    const waiting = remote.result(run.runId).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));

    const started = Date.now();
    await closing.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    // The wait answered null and was asked again of a server that is gone.
    expect(isTaqubaError(await waiting, 'STORE_UNAVAILABLE')).toBe(true);
    await remote.close();
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(isTaqubaError(await remote.status(run.runId).catch((e: unknown) => e), 'CLOSED')).toBe(true);

    // The run goes on on the host.
    expect(await client.signal(run.runId, 'greeting', 'Bye')).toBe('delivered');
    expect((await client.workflowRun(greet, run.runId).result()).text).toBe('Bye, Cy!');
  });

  it('rejects bad options with typed errors', async () => {
    await expect(serveHttp(host, { port: -1 })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'port' } });
    await expect(serveHttp(host, { basePath: 'api/' })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'basePath' } });
    await expect(serveHttp({} as RuntimeHost)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_host' } });
    await expect(serveHttp(host, { port: server.port })).rejects.toMatchObject({ code: 'INVALID_CONFIG', details: { option: 'port', reason: 'EADDRINUSE' } });
    expect(() => connectHttp('ftp://example.com')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_url' } }));
  });

  it('serves bare RuntimeOperations under a base path', async () => {
    const mounted = await serveHttp(host.operations, { basePath: '/api/taquba' });
    try {
      expect(mounted.url).toMatch(/\/api\/taquba$/);
      const remote = connectHttp(`${mounted.url}/`);
      expect((await remote.listRuns()).runs).toBeInstanceOf(Array);
      expect((await fetch(`${mounted.url.replace('/api/taquba', '')}/ops/listRuns`, post(encodeBody({ args: [] })))).status).toBe(404);
      await remote.close();
    } finally {
      await mounted.close();
    }
  });
});
