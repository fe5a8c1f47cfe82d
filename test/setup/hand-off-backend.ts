/**
 * The hand-off tests' Node backend (test/setup/hand-off-backend-process.ts) as a child process the
 * browser project's global setup manages, on a filesystem store or an S3 store (the S3 test
 * server), and a small control server a page reaches over HTTP (any origin) to look at it and
 * hurt it:
 *
 *   GET  /steps?runId=   the backend's step executions of the run (JSON lines of its log, as an array)
 *   POST /gate?runId=    lets step `b` of the run finish (writes its gate file)
 *   POST /kill           kill -9 the backend process (answers once it exited)
 *   POST /start          starts it again on the same store and port (answers once it serves)
 *
 * The step log and the gate files live in a local side directory whatever the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeScript } from '../support/node-script.js';

const SCRIPT = fileURLToPath(new URL('./hand-off-backend-process.ts', import.meta.url));

/** The backend's store: a filesystem root, or a prefix of a bucket on the S3 test server (path-style, its credentials). */
export type HandOffStore =
  | { readonly type: 'fs'; readonly root: string }
  | { readonly type: 's3'; readonly endpoint: string; readonly bucket: string; readonly region: string; readonly prefix: string };

export interface HandOffBackend {
  /** Where the backend serves (`connectHttp(url)`): the same across restarts. */
  readonly url: string;
  /** The control server. */
  readonly controlUrl: string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Starts the backend on `store` and its control server. `sideDir` holds the step log and the
 * gates; keep it out of an fs store's root (its listings would see them). Both are created if
 * missing; the caller removes them.
 */
export async function startHandOffBackend(store: HandOffStore, sideDir: string): Promise<HandOffBackend> {
  if (store.type === 'fs') mkdirSync(store.root, { recursive: true });
  mkdirSync(sideDir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(process.execPath, [...nodeScript(SCRIPT), JSON.stringify(store), sideDir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      let out = '';
      let err = '';
      proc.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      proc.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('ready ')) resolve();
      });
      proc.once('exit', (code, signal) => {
        if (child === proc) child = undefined;
        reject(new Error(`the hand-off backend exited before serving. code=${code} signal=${signal} stderr=${err}`));
      });
    });

  const kill = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const proc = child;
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });

  const steps = (runId: string): unknown[] => {
    const log = join(sideDir, 'steps.log');
    if (!existsSync(log)) return [];
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { runId: string })
      .filter((entry) => entry.runId === runId);
  };

  const control: Server = createServer((req, res) => {
    const requestUrl = new URL(req.url ?? '/', 'http://control');
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
      res.end(JSON.stringify(body));
    };
    const runId = requestUrl.searchParams.get('runId') ?? '';
    const act = async (): Promise<unknown> => {
      if (req.method === 'GET' && requestUrl.pathname === '/steps') return steps(runId);
      if (req.method === 'POST' && requestUrl.pathname === '/gate' && /^[A-Za-z0-9_-]+$/.test(runId)) {
        writeFileSync(join(sideDir, `gate-${runId}`), '');
        return { gate: runId };
      }
      if (req.method === 'POST' && requestUrl.pathname === '/kill') {
        await kill();
        return { killed: true };
      }
      if (req.method === 'POST' && requestUrl.pathname === '/start') {
        if (child === undefined) await start();
        return { started: true };
      }
      throw new Error(`no such control route: ${req.method} ${requestUrl.pathname}`);
    };
    act().then(
      (body) => answer(200, body),
      (e: unknown) => answer(500, { error: String(e) }),
    );
  });
  await start();
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  const address = control.address();
  const controlUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return {
    url,
    controlUrl,
    async close() {
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await kill();
    },
  };
}
