/**
 * Global setup of the `browser` project: a Node host of a workflow on a temp filesystem store,
 * served over HTTP on 127.0.0.1 (`serveHttp`, any origin allowed: the test page's origin is the
 * Vite server's), so a page can reach a Node backend with `connectHttp`. The URL is provided as
 * `httpHostUrl`. Beside it, the hand-off tests' backend as a child process (hand-off-backend.ts),
 * twice: on a filesystem store (`handOffBackendUrl`, and `handOffControlUrl` for its control
 * server), and on the S3 test server (s3-server.ts), started here too (`handOffS3BackendUrl`,
 * `handOffS3ControlUrl`); and a third on a filesystem store that no test kills
 * (`handOffSteadyBackendUrl`, `handOffSteadyControlUrl`), for tests that run while a kill test
 * restarts the others.
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
import { startHandOffBackend, type HandOffBackend } from './hand-off-backend.js';
import { startS3TestServer } from './s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    httpHostUrl: string;
    handOffBackendUrl: string;
    handOffControlUrl: string;
    handOffS3BackendUrl: string;
    handOffS3ControlUrl: string;
    /** A backend no test kills: for tests that run beside the kill tests (files run two at a time). */
    handOffSteadyBackendUrl: string;
    handOffSteadyControlUrl: string;
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
  const s3 = await startS3TestServer();
  const started = await Promise.allSettled([
    startHandOffBackend({ type: 'fs', root: join(handOffDir, 'fs-store') }, join(handOffDir, 'fs-side')),
    startHandOffBackend({ type: 's3', endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, prefix: 'hand-off/' }, join(handOffDir, 's3-side')),
    startHandOffBackend({ type: 'fs', root: join(handOffDir, 'steady-store') }, join(handOffDir, 'steady-side')),
  ]);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    // No backend process left running behind a failed setup.
    await Promise.all(started.map((result) => (result.status === 'fulfilled' ? result.value.close() : undefined)));
    await s3.stop();
    throw failed.reason;
  }
  const [handOffBackend, handOffS3Backend, steadyBackend] = started.map((result) => (result as PromiseFulfilledResult<HandOffBackend>).value) as [HandOffBackend, HandOffBackend, HandOffBackend];
  project.provide('handOffBackendUrl', handOffBackend.url);
  project.provide('handOffControlUrl', handOffBackend.controlUrl);
  project.provide('handOffS3BackendUrl', handOffS3Backend.url);
  project.provide('handOffS3ControlUrl', handOffS3Backend.controlUrl);
  project.provide('handOffSteadyBackendUrl', steadyBackend.url);
  project.provide('handOffSteadyControlUrl', steadyBackend.controlUrl);
  return async () => {
    await Promise.all([handOffBackend.close(), handOffS3Backend.close(), steadyBackend.close()]);
    await s3.stop();
    await server.close();
    await worker.shutdown();
    await queue.close();
    await rm(dir, { recursive: true, force: true });
    await rm(handOffDir, { recursive: true, force: true });
  };
}
