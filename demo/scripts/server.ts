/**
 * The demo's Node backend (`npm run demo:server`): the agent's workflow (the same definition the
 * page's worker registers) served over HTTP (`serveHttp`) on a filesystem store, so the page's
 * "Continue on the server" button can hand a running task off to it (`client.handOff`). Open the
 * demo with `?server=<this URL>` (the page remembers it). The agent runs here with the simulated
 * model, and logs its attempts and model calls in its store's caller KV (`SERVER_LOG`), where the
 * page reads them to show the steps that ran here.
 *
 * CLI: `tsx demo/scripts/server.ts [--port=5181] [--data=./.demo-data] [--origin=http://127.0.0.1:5180]... [--origin=*]`
 * (default origins: the demo on 127.0.0.1 and localhost, built on 5180 and dev on 5173).
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntimeHost, Queue } from 'taquba-workflow';
import { serveHttp, type HttpRuntimeServer } from 'taquba-workflow/http';
import { FileSystemObjectStore } from 'taquba-workflow/node';
import { agent, provideAgentEnvironment } from '../src/agent/agent-workflow.js';
import { SERVER_HOST, SERVER_LOG } from '../src/shared/agent-state.js';

export const DEFAULT_SERVER_PORT = 5181;
const DEFAULT_ORIGINS = ['http://127.0.0.1:5180', 'http://localhost:5180', 'http://127.0.0.1:5173', 'http://localhost:5173'];

export interface DemoServerOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  /** The store's directory (created when missing). */
  readonly dataDir: string;
  /** Origins whose pages may call it, or `'*'`. */
  readonly allowOrigins?: '*' | readonly string[];
  readonly log?: (line: string) => void;
}

export interface DemoBackend {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the agent's workflow on `dataDir` until `close`. */
export async function startDemoServer(options: DemoServerOptions): Promise<DemoBackend> {
  const log = options.log ?? (() => undefined);
  mkdirSync(options.dataDir, { recursive: true });
  const store = new FileSystemObjectStore({ root: options.dataDir });
  const quiet = { warn: (message: string) => log(`warn: ${message}`), info: () => undefined };
  const queue = await Queue.open(store, 'agent-demo', { logger: quiet, defaultQueueConfig: { keepDoneMs: 24 * 3600_000 } });
  const put = (key: string, value: unknown): Promise<void> => queue.kvPut(new TextEncoder().encode(key), new TextEncoder().encode(JSON.stringify(value)));
  let logged = 0;
  provideAgentEnvironment({
    host: SERVER_HOST,
    // The server has no model settings of its own: the simulated model, as the page's default.
    loadModelSettings: async () => ({ kind: 'simulated' }),
    recordModelCall: async (record) => {
      log(`model call: run ${record.runId} step "${record.step}"${record.memoHit ? ' (from the run history)' : ''}`);
      await put(`${SERVER_LOG.modelCalls(record.runId)}${String(record.at).padStart(15, '0')}-${++logged}`, record);
    },
    startAttempt: async (record) => {
      log(`step "${record.step}" of run ${record.runId}: attempt ${record.attempt}`);
      const key = `${SERVER_LOG.attempts(record.runId)}${String(record.startedAt).padStart(15, '0')}-${++logged}`;
      let current = record;
      await put(key, current);
      return async (update) => {
        current = { ...current, ...update };
        await put(key, current);
      };
    },
    post: () => undefined,
  });
  const host = createRuntimeHost(queue, store, {
    runner: { workflows: [agent] },
    runtimeOptions: { logger: quiet, outcomeRetentionMs: 30 * 24 * 3600_000 },
  });
  const worker = host.spawn();
  let server: HttpRuntimeServer;
  try {
    server = await serveHttp(host, { port: options.port ?? DEFAULT_SERVER_PORT, allowOrigins: options.allowOrigins ?? DEFAULT_ORIGINS, statusPollMs: 250 });
  } catch (e) {
    await worker.shutdown();
    await queue.close();
    throw e;
  }
  return {
    url: server.url,
    async close() {
      await server.close();
      await worker.shutdown();
      await queue.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string): string[] => process.argv.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
  const port = Number(arg('port')[0] ?? DEFAULT_SERVER_PORT);
  const dataDir = resolve(arg('data')[0] ?? '.demo-data');
  const origins = arg('origin');
  const backend = await startDemoServer({
    port,
    dataDir,
    allowOrigins: origins.includes('*') ? '*' : origins.length > 0 ? origins : DEFAULT_ORIGINS,
    log: (line) => console.log(line),
  });
  console.log(`Demo server: ${backend.url} (store ${dataDir}). Open the demo with ?server=${backend.url}, e.g. http://127.0.0.1:5180/?server=${encodeURIComponent(backend.url)}  (Ctrl+C to stop)`);
  const stop = (): void => void backend.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
