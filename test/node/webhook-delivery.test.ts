/**
 * Webhook delivery against a real HTTP server on 127.0.0.1: the retry rules of `WebhookWorker`
 * (5xx, timeouts and 429 retry, `Retry-After` is honoured, 2xx finishes, other 4xx dead-letter),
 * one delivery id throughout, signatures a receiver can verify, and `WebhookTerminalHook`
 * end to end through a workflow runtime.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../src/core/bytes.js';
import { MockClock } from '../../src/core/clock.js';
import { MemoryObjectStore } from '../../src/core/objects/index.js';
import { Queue, runWorker } from '../../src/core/queue/index.js';
import { StepOutcome, WorkflowRuntime } from '../../src/core/workflow/index.js';
import { enqueueWebhook, verifyWebhook, WebhookTerminalHook, WebhookWorker, type RunTerminatedWebhook } from '../../src/core/webhooks/index.js';

const SECRET = 'whsec_' + Buffer.from('a test secret of 24 bytes').toString('base64');

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Responder = (req: Received, res: ServerResponse) => void;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server answering the n-th request with `responders[n]` (the last one repeats); `at` is read from `now`. */
async function server(responders: Responder[], now: () => number = Date.now): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: now() };
      received.push(r);
      responders[Math.min(received.length - 1, responders.length - 1)](r, res);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    srv.closeAllConnections();
    return new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`, received };
}

const status =
  (code: number, headers: Record<string, string> = {}, body = ''): Responder =>
  (_req, res) => {
    res.writeHead(code, headers);
    res.end(body);
  };
const hang: Responder = () => {};

/**
 * With a `clock` (a MockClock) nothing is timed in the background: no scheduler or reaper ticks,
 * no WAL flush delay; the test moves the clock and promotes due retries itself (`retryAt`).
 */
async function openQueue(clock?: MockClock): Promise<Queue> {
  const queue = await Queue.open(new MemoryObjectStore(), {
    path: 'q',
    ...(clock ? { clock, schedulerIntervalMs: 1e12, reaperIntervalMs: 1e12 } : { schedulerIntervalMs: 10, flushIntervalMs: 2 }),
    defaultQueueConfig: { retryBackoffBaseMs: 20, retryBackoffMaxMs: 50, maxAttempts: 6 },
    logger: false,
  });
  cleanups.push(() => queue.close());
  return queue;
}

function startWorker(queue: Queue, worker: WebhookWorker, queueName = 'webhooks'): void {
  const stop = new AbortController();
  const done = runWorker(queue, queueName, worker, { signal: stop.signal, pollIntervalMs: 10 });
  cleanups.push(async () => {
    stop.abort();
    await done;
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until job `id` is scheduled after its `attempts`-th attempt; returns how long until it is due (queue clock). */
async function scheduledRetry(queue: Queue, id: string, attempts: number): Promise<number> {
  const runAt = await until(`job ${id} scheduled after attempt ${attempts}`, async () => {
    const job = await queue.getJob(id);
    return job?.status === 'scheduled' && job.attempts === attempts ? job.runAt : undefined;
  });
  return runAt - queue.clock.now();
}

/** Moves the clock to a retry due in `dueInMs`: 1 ms before, a promotion finds nothing due; at it, the retry is promoted. */
async function retryAt(queue: Queue, clock: MockClock, dueInMs: number): Promise<void> {
  await clock.advance(dueInMs - 1);
  expect(await queue.promoteScheduledNow(), `no retry due ${dueInMs - 1} ms after the failure`).toBe(0);
  await clock.advance(1);
  expect(await queue.promoteScheduledNow(), `the retry due ${dueInMs} ms after the failure`).toBe(1);
}

async function settled(queue: Queue, id: string): Promise<'done' | 'dead'> {
  return until(`job ${id} to settle`, async () => {
    const job = await queue.getJob(id);
    if (job === undefined) return 'done'; // acked and not kept
    return job.status === 'done' || job.status === 'dead' ? job.status : undefined;
  });
}

describe('WebhookWorker against a local HTTP server', () => {
  it('retries 500, a timeout and 429 (waiting out Retry-After) until a 2xx, with one delivery id throughout', async () => {
    // The queue's and the worker's clock: backoff, the timeout and Retry-After pass in mock time.
    const clock = new MockClock();
    const queue = await openQueue(clock);
    startWorker(queue, new WebhookWorker({ defaultTimeoutMs: 300, secret: SECRET, clock }));
    // Started last, closed first: should a check fail while a request hangs (its timeout is in
    // mock time), closing the connection ends it and the worker can stop.
    const { url, received } = await server([status(500, {}, 'boom'), hang, status(429, { 'Retry-After': '1' }), status(204)], () => clock.now());
    const body = utf8(JSON.stringify({ hello: 'world' }));
    const id = await enqueueWebhook(queue, 'webhooks', { url, headers: { 'Content-Type': 'application/json', 'User-Agent': 'test/1.0' } }, body);

    await retryAt(queue, clock, await scheduledRetry(queue, id, 1)); // after the 500
    await until('the second request (left hanging)', () => (received.length === 2 ? true : undefined));
    await clock.advance(300); // the timeout
    await retryAt(queue, clock, await scheduledRetry(queue, id, 2));
    const afterRetryAfter = await scheduledRetry(queue, id, 3); // after the 429
    expect(afterRetryAfter).toBe(1000);
    await retryAt(queue, clock, afterRetryAfter);
    expect(await settled(queue, id)).toBe('done');
    expect(received).toHaveLength(4);
    expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set([id]));
    for (const r of received) {
      expect(r.method).toBe('POST');
      expect(r.body).toBe('{"hello":"world"}');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('test/1.0');
      expect(await verifyWebhook(SECRET, r.headers, r.body, { clock })).toMatchObject({ id });
    }
    // Retry-After: 1 beats the 20–50 ms backoff (times on the queue's clock).
    expect(received[3].at - received[2].at).toBeGreaterThanOrEqual(950);
    expect(received[1].at - received[0].at).toBeLessThan(950);
  }, 20_000);

  it('Retry-After as an HTTP date is honoured too', async () => {
    const clock = new MockClock();
    const dates: string[] = [];
    const { url, received } = await server(
      [
        (_req, res) => {
          dates.push(new Date(clock.now() + 1500).toUTCString());
          status(503, { 'Retry-After': dates[0]! })(_req, res);
        },
        status(200),
      ],
      () => clock.now(),
    );
    const queue = await openQueue(clock);
    startWorker(queue, new WebhookWorker({ clock }));
    const id = await enqueueWebhook(queue, 'webhooks', { url }, utf8('x'));
    const dueIn = await scheduledRetry(queue, id, 1);
    // Due at the date itself (the clock has not moved since the 503).
    expect(dueIn).toBe(Date.parse(dates[0]!) - received[0]!.at);
    await retryAt(queue, clock, dueIn);
    expect(await settled(queue, id)).toBe('done');
    expect(received).toHaveLength(2);
    // HTTP dates have whole seconds: at least ~0.5 s after the 503.
    expect(received[1].at - received[0].at).toBeGreaterThanOrEqual(450);
  }, 20_000);

  it('a 4xx other than 408/429 dead-letters at once with the status and body in the reason', async () => {
    const { url, received } = await server([status(404, {}, 'no such hook')]);
    const queue = await openQueue();
    startWorker(queue, new WebhookWorker());
    const id = await enqueueWebhook(queue, 'webhooks', { url, method: 'PUT' }, utf8('x'));
    expect(await settled(queue, id)).toBe('dead');
    expect(received).toHaveLength(1);
    expect(received[0].method).toBe('PUT');
    const job = await queue.getJob(id);
    expect(job?.attempts).toBe(1);
    expect(job?.lastError).toBe('webhook delivery failed: HTTP 404. body="no such hook"');
  });

  it('connection refused is retried until attempts run out, then dead-lettered', async () => {
    const { url } = await server([status(200)]);
    const refused = url.replace(/:\d+\//, ':1/');
    const queue = await openQueue();
    startWorker(queue, new WebhookWorker());
    const id = await enqueueWebhook(queue, 'webhooks', { url: refused }, utf8('x'), { maxAttempts: 2 });
    expect(await settled(queue, id)).toBe('dead');
    const job = await queue.getJob(id);
    expect(job?.attempts).toBe(2);
    expect(job?.lastError).toMatch(/^webhook delivery failed: fetch failed/);
  });

  it('a job with a bad url header dead-letters with a reason naming it; enqueueWebhook refuses it up front', async () => {
    const queue = await openQueue();
    startWorker(queue, new WebhookWorker());
    const id = await queue.enqueue('webhooks', utf8('x'), { headers: { 'webhook.url': 'ftp://nope' } });
    expect(await settled(queue, id)).toBe('dead');
    expect((await queue.getJob(id))?.lastError).toMatch(/^invalid webhook job: header webhook\.url must be an absolute http\(s\) URL/);
    await expect(enqueueWebhook(queue, 'webhooks', { url: 'not a url' }, utf8('x'))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { reason: 'invalid_webhook_url' } });
  });
});

describe('WebhookTerminalHook', () => {
  async function runtimeWith(queue: Queue): Promise<WorkflowRuntime> {
    const store = new MemoryObjectStore();
    const runtime = new WorkflowRuntime(
      queue,
      store,
      async (step) => (fromUtf8(step.payload) === 'fail' ? StepOutcome.fail('it failed') : StepOutcome.succeed(utf8(`echo ${fromUtf8(step.payload)}`))),
      new WebhookTerminalHook({ targetQueue: 'webhooks', headers: { 'User-Agent': 'hook-test' } }),
    );
    const stop = new AbortController();
    const handle = runtime.spawn(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await handle.done;
    });
    return runtime;
  }

  it('posts a signed JSON outcome to callback_url once per run; runs without it enqueue nothing', async () => {
    const { url, received } = await server([status(500), status(200)]);
    const queue = await openQueue();
    startWorker(queue, new WebhookWorker({ secret: SECRET }));
    const runtime = await runtimeWith(queue);
    await runtime.submit({ runId: 'run-ok', input: utf8('hi'), headers: { callback_url: url } });
    await runtime.submit({ runId: 'run-fail', input: utf8('fail'), headers: { callback_url: url } });
    await runtime.submit({ runId: 'run-quiet', input: utf8('quiet') });

    await until('three deliveries', () => (received.filter((r) => r.headers['webhook-id'] !== undefined).length >= 3 ? true : undefined));
    // The last 200 is acknowledged after the server answered it: wait for the queue to drain.
    await until('every delivery job settled', async () => {
      const stats = await queue.stats('webhooks');
      return stats.pending + stats.scheduled + stats.claimed + stats.dead === 0 ? true : undefined;
    });
    // Two runs with a callback_url: one 500 retried and two 200s, nothing more.
    expect(received).toHaveLength(3);

    const bodies = new Map<string, RunTerminatedWebhook>();
    const ids = new Map<string, Set<string>>();
    for (const r of received) {
      await verifyWebhook(SECRET, r.headers, r.body);
      const payload = JSON.parse(r.body) as RunTerminatedWebhook;
      bodies.set(payload.data.run_id, payload);
      const set = ids.get(payload.data.run_id) ?? new Set();
      set.add(String(r.headers['webhook-id']));
      ids.set(payload.data.run_id, set);
      expect(r.headers['workflow-run-id']).toBe(payload.data.run_id);
      expect(r.headers['workflow-run-status']).toBe(payload.data.status);
      expect(r.headers['user-agent']).toBe('hook-test');
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect([...bodies.keys()].sort()).toEqual(['run-fail', 'run-ok']);
    for (const set of ids.values()) expect(set.size).toBe(1);
    expect(bodies.get('run-ok')).toMatchObject({
      type: 'workflow.run.succeeded',
      data: { run_id: 'run-ok', status: 'succeeded', final_step: 0, output: 'echo hi', output_base64: Buffer.from('echo hi').toString('base64'), error: null },
    });
    expect(bodies.get('run-fail')).toMatchObject({ type: 'workflow.run.failed', data: { status: 'failed', output: null, output_base64: null, error: 'it failed' } });
    expect(Number.isNaN(Date.parse(bodies.get('run-ok')!.timestamp))).toBe(false);
  }, 20_000);

  it('a bad callback_url dead-letters the notification with the reason and enqueues no delivery', async () => {
    const queue = await openQueue();
    const runtime = await runtimeWith(queue);
    await runtime.submit({ runId: 'run-bad', input: utf8('hi'), headers: { callback_url: 'javascript:alert(1)' } });
    const dead = await until('a dead notification', async () => {
      const page = await queue.listJobs(runtime.queueName, 'dead');
      return page.jobs.length > 0 ? page.jobs : undefined;
    });
    expect(dead[0].lastError).toMatch(/^invalid callback_url header: webhook url must be an absolute http\(s\) URL/);
    expect((await queue.stats('webhooks')).pending).toBe(0);
  }, 20_000);
});
