/**
 * The Node backend of the hand-off tests, as its own process (so a test can kill -9 it and start
 * it again): `travel` on a filesystem store or an S3 store (the S3 test server), served over HTTP
 * for any origin. Its steps append their executions to a log file and wait at gate files, both in
 * a local side directory whatever the store (test/setup/hand-off-backend.ts reads and writes both
 * for the page).
 *
 * argv: <store: JSON HandOffStore> <side dir> <port>. Prints `ready <url>` once it serves.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { createRuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { serveHttp } from '../../src/http/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { S3ObjectStore } from '../../src/stores/s3/index.js';
import { S3_TEST_CREDENTIALS } from './s3-server.js';
import { stepSite, travel } from '../browser/http/hand-off-workflows.js';
import type { HandOffStore } from './hand-off-backend.js';

const [storeJson, sideDir, portText] = process.argv.slice(2);
if (storeJson === undefined || sideDir === undefined || portText === undefined) throw new Error('usage: hand-off-backend-process <store json> <side dir> <port>');
const description = JSON.parse(storeJson) as HandOffStore;

stepSite.where = 'node';
stepSite.report = (execution) => appendFileSync(join(sideDir, 'steps.log'), `${JSON.stringify({ ...execution, pid: process.pid })}\n`);
stepSite.gate = async (runId) => {
  while (!existsSync(join(sideDir, `gate-${runId}`))) await new Promise((resolve) => setTimeout(resolve, 25));
};

const store: ObjectStore =
  description.type === 's3'
    ? new S3ObjectStore({
        bucket: description.bucket,
        prefix: description.prefix,
        clientConfig: { region: description.region, endpoint: description.endpoint, forcePathStyle: true, credentials: S3_TEST_CREDENTIALS },
        // The test server lives in vitest's own process, beside Vite and the browser: slow under load.
        retry: { maxAttempts: 6, baseDelayMs: 10, maxDelayMs: 200 },
        requestTimeoutMs: 10_000,
      })
    : new FileSystemObjectStore({ root: description.root });

const quiet = { warn: () => undefined, info: () => undefined };
// Opening the queue bumps the writer epoch, fencing a killed process (its writes may still be on
// the way), and puts the claims it held back at once: the step it was in runs again. A short
// lease all the same, so no claim of a lost worker waits long.
const queue = await Queue.open(store, 'app', { logger: quiet, defaultQueueConfig: { leaseMs: 1_500 } });
const host = createRuntimeHost(queue, store, { runner: { workflows: [travel] }, runtimeOptions: { pollIntervalMs: 20, logger: quiet } });
host.spawn();
const server = await serveHttp(host, { port: Number(portText), allowOrigins: '*', statusPollMs: 50 });
console.log(`ready ${server.url}`);
