/**
 * Builds the demo and serves the static build (what `npm run demo` runs, and what the demo's
 * tests and the `demo.resume` benchmark start). Serving the build rather than the dev server
 * is deliberate: the service worker (offline support) only exists in a build.
 *
 * CLI: `tsx demo/scripts/serve.ts [--port=5180] [--no-build]`
 */
import { fileURLToPath } from 'node:url';
import { build, preview, type PreviewServer } from 'vite';

const CONFIG = fileURLToPath(new URL('../vite.config.ts', import.meta.url));

export async function buildDemo(): Promise<void> {
  await build({ configFile: CONFIG, logLevel: 'warn' });
}

export interface DemoServer {
  /** Origin + path of the app, ending in `/`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the last build on 127.0.0.1 (`port` 0 picks a free one). */
export async function serveDemo(port = 0): Promise<DemoServer> {
  const server: PreviewServer = await preview({ configFile: CONFIG, logLevel: 'warn', preview: { host: '127.0.0.1', port, strictPort: port !== 0 } });
  const address = server.httpServer.address();
  if (address === null || typeof address === 'string') throw new Error(`the demo server has no TCP address. address=${String(address)}`);
  return { url: `http://127.0.0.1:${address.port}/`, close: () => server.close() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const portArg = process.argv.find((a) => a.startsWith('--port='));
  const port = portArg ? Number(portArg.slice('--port='.length)) : 5180;
  if (!process.argv.includes('--no-build')) await buildDemo();
  const server = await serveDemo(port);
  console.log(`Durable agent demo: ${server.url}  (Ctrl+C to stop)`);
}
