/**
 * Global setup of the `browser` project: a Node host of a workflow on a temp filesystem store,
 * served over HTTP on 127.0.0.1 (`serveHttp`, any origin allowed: the test page's origin is the
 * Vite server's), so a page can reach a Node backend with `connectHttp`. The URL is provided as
 * `httpHostUrl`. Beside it, the hand-off tests' backend as a child process (hand-off-backend.ts):
 * `handOffBackendUrl`, and `handOffControlUrl` for its control server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createRuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { serveHttp } from '../../src/http/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { PAGE_TOKEN, pageGreet } from '../browser/http/http-workflows.js';
import { startHandOffBackend } from './hand-off-backend.js';

declare module 'vitest' {
  export interface ProvidedContext {
    httpHostUrl: string;
    handOffBackendUrl: string;
    handOffControlUrl: string;
  }
}

const quiet = { warn: () => undefined, info: () => undefined };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'taquba-http-browser-'));
  const store = new FileSystemObjectStore({ root: dir });
  const queue = await Queue.open(store, 'app', { logger: quiet });
  const host = createRuntimeHost(queue, store, { runner: { workflows: [pageGreet] }, runtimeOptions: { pollIntervalMs: 20, logger: quiet } });
  const worker = host.spawn();
  const server = await serveHttp(host, { allowOrigins: '*', statusPollMs: 50, authenticate: (request) => request.headers.authorization === PAGE_TOKEN });
  project.provide('httpHostUrl', server.url);
  // A directory of its own: the one above is a store's root, which lists every file in it.
  const handOffDir = await mkdtemp(join(tmpdir(), 'taquba-hand-off-browser-'));
  const handOffBackend = await startHandOffBackend(handOffDir);
  project.provide('handOffBackendUrl', handOffBackend.url);
  project.provide('handOffControlUrl', handOffBackend.controlUrl);
  return async () => {
    await handOffBackend.close();
    await server.close();
    await worker.shutdown();
    await queue.close();
    await rm(dir, { recursive: true, force: true });
    await rm(handOffDir, { recursive: true, force: true });
  };
}
