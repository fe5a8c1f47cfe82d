/**
 * The Node backend of the hand-off tests, as its own process (so a test can kill -9 it and start
 * it again): `travel` on a filesystem store, served over HTTP for any origin. Its steps append
 * their executions to a log file and wait at gate files (test/setup/hand-off-backend.ts reads and
 * writes both for the page).
 *
 * argv: <store dir> <side dir> <port>. Prints `ready <url>` once it serves.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRuntimeHost } from '../../src/core/operations/runtime-host.js';
import { Queue } from '../../src/core/queue/index.js';
import { serveHttp } from '../../src/http/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { stepSite, travel } from '../browser/http/hand-off-workflows.js';

const [storeDir, sideDir, portText] = process.argv.slice(2);
if (storeDir === undefined || sideDir === undefined || portText === undefined) throw new Error('usage: hand-off-backend-process <store dir> <side dir> <port>');

stepSite.where = 'node';
stepSite.report = (execution) => appendFileSync(join(sideDir, 'steps.log'), `${JSON.stringify({ ...execution, pid: process.pid })}\n`);
stepSite.gate = async (runId) => {
  while (!existsSync(join(sideDir, `gate-${runId}`))) await new Promise((resolve) => setTimeout(resolve, 25));
};

const quiet = { warn: () => undefined, info: () => undefined };
const store = new FileSystemObjectStore({ root: storeDir });
// A short lease: the step a killed process held is claimed again soon after the restart.
const queue = await Queue.open(store, 'app', { logger: quiet, defaultQueueConfig: { leaseMs: 1_500 } });
const host = createRuntimeHost(queue, store, { runner: { workflows: [travel] }, runtimeOptions: { pollIntervalMs: 20, logger: quiet } });
host.spawn();
const server = await serveHttp(host, { port: Number(portText), allowOrigins: '*', statusPollMs: 50 });
console.log(`ready ${server.url}`);
