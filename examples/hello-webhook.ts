/**
 * hello_webhook: runs that end with a signed HTTP callback. Three runs carry a `callback_url`
 * header (one more does not and gets no callback); `WebhookTerminalHook` stages one delivery per
 * run on the `webhooks` queue, and a `WebhookWorker` posts them, signed the Standard Webhooks way.
 *
 * The receiver (a node:http listener on 127.0.0.1) is down at first: the first attempts fail with
 * connection refused and are retried with the queue's backoff. Once it comes up, every delivery
 * arrives, its signature is verified with `verifyWebhook`, and the receiver dedups on the
 * delivery id (`webhook-id`, the same on every retry).
 *
 *   npm run example:hello-webhook
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryObjectStore, Queue, StepOutcome, verifyWebhook, WebhookTerminalHook, WebhookWorker, WorkflowRuntime, type RunTerminatedWebhook } from 'taquba-workflow';
import { runWorker, type JobRecord, type LeaseHandle } from 'taquba-workflow/queue';

// Text in and out of the runtime's byte payloads.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const EXPECTED = 3;

// Pick a free port, then leave it closed: the receiver is "down" until it listens there.
const probe = createServer();
await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
const port = (probe.address() as AddressInfo).port;
await new Promise<void>((resolve) => probe.close(() => resolve()));
const callbackUrl = `http://127.0.0.1:${port}/hook`;

const seen = new Set<string>();
let allReceived: () => void = () => {};
const received = new Promise<void>((resolve) => (allReceived = resolve));

async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  try {
    const { id } = await verifyWebhook(SECRET, req.headers, body);
    const event = JSON.parse(body.toString('utf8')) as RunTerminatedWebhook;
    const detail = event.data.status === 'succeeded' ? `output=${JSON.stringify(event.data.output)}` : `error=${JSON.stringify(event.data.error)}`;
    console.log(`> ${req.method} ${req.url} verified webhook-id=${id} ${event.type} run=${event.data.run_id} ${detail}${seen.has(id) ? ' (duplicate, ignored)' : ''}`);
    seen.add(id);
    res.writeHead(204).end();
    if (seen.size === EXPECTED) allReceived();
  } catch (e) {
    console.log(`> rejected: ${(e as Error).message}`);
    res.writeHead(400).end();
  }
}
const receiver = createServer((req, res) => void receive(req, res));

const store = new MemoryObjectStore();
const queue = await Queue.open(store, {
  path: 'demo',
  schedulerIntervalMs: 50,
  logger: false,
  queueConfigs: { webhooks: { retryBackoffBaseMs: 250, retryBackoffMaxMs: 1_000, maxAttempts: 10 } },
});
const stop = new AbortController();

const runtime = new WorkflowRuntime(
  queue,
  store,
  async (step) => {
    const name = fromUtf8(step.payload);
    return name === 'mallory' ? StepOutcome.fail(`no greeting for ${name}`) : StepOutcome.succeed(utf8(`hello, ${name}`));
  },
  new WebhookTerminalHook({ targetQueue: 'webhooks', headers: { 'User-Agent': 'hello_webhook/1.0' }, timeoutMs: 5_000 }),
  { queueName: 'greetings' },
);

// The delivery worker, wrapped to show failed attempts and to bring the receiver up after them.
const webhooks = new WebhookWorker({ secret: SECRET });
let failures = 0;
const deliver = async (job: JobRecord, lease: LeaseHandle): Promise<void> => {
  try {
    await webhooks.process(job, lease);
  } catch (e) {
    console.log(`delivery ${job.id} attempt ${job.attempts} failed: ${(e as Error).message} (will retry)`);
    if (++failures === EXPECTED) {
      setTimeout(() => receiver.listen(port, '127.0.0.1', () => console.log(`receiver up on ${callbackUrl}`)), 300);
    }
    throw e;
  }
};

console.log(`receiver down; callbacks go to ${callbackUrl}`);
for (const name of ['alice', 'bob', 'mallory']) {
  const { runId } = await runtime.submit({ input: utf8(name), headers: { callback_url: callbackUrl } });
  console.log(`submitted run ${runId} for ${name} with callback_url`);
}
const quiet = await runtime.submit({ input: utf8('nobody') });
console.log(`submitted run ${quiet.runId} without callback_url (no webhook)`);

const runner = runtime.spawn(stop.signal);
const worker = runWorker(queue, 'webhooks', deliver, { signal: stop.signal, pollIntervalMs: 50 });

const deadline = setTimeout(() => {
  console.log('deadline reached');
  stop.abort();
}, 20_000);
await Promise.race([received, runner.done]);
// Let the last acknowledgement commit before reading the stats.
while ((await queue.stats('webhooks')).claimed > 0) await new Promise((r) => setTimeout(r, 20));
clearTimeout(deadline);
stop.abort();
await Promise.all([runner.done, worker]);
const stats = await queue.stats('webhooks');
console.log(`Final stats: done=${stats.done} dead=${stats.dead} received=${seen.size}`);
receiver.closeAllConnections();
receiver.close();
await queue.close();
