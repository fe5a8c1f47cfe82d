/**
 * The demo app's build. The demo imports the library by its public names (`taquba-workflow`,
 * `taquba-workflow/browser`, ...), which the repository's tsconfig `paths` map to `../src`
 * (`resolve.tsconfigPaths`), so the demo always runs the code under test and needs no build of
 * the package first. The build also emits `sw.js` (demo/src/service-worker.ts) at the root, with
 * the list of every built file injected, so the app works offline.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

const MANIFEST_PLACEHOLDER = '__PRECACHE_MANIFEST__';

/** Injects the list of built files into the service worker (and only there). */
function precacheManifest(): Plugin {
  return {
    name: 'taquba-demo:precache-manifest',
    apply: 'build',
    generateBundle(_options, bundle) {
      const files = Object.keys(bundle)
        .filter((name) => name !== 'sw.js' && !name.endsWith('.map'))
        .sort();
      const sw = bundle['sw.js'];
      if (!sw || sw.type !== 'chunk' || !sw.code.includes(MANIFEST_PLACEHOLDER)) this.error('the service worker chunk (sw.js) with its manifest placeholder is missing');
      sw.code = sw.code.replace(MANIFEST_PLACEHOLDER, JSON.stringify(files).replace(/\\/g, '\\\\').replace(/'/g, "\\'"));
    },
  };
}

export default defineConfig(({ command }) => ({
  root: here('.'),
  // The service worker is registered by builds only (the dev server serves modules it would
  // cache stale). Not `import.meta.env.PROD`: that follows NODE_ENV, which a test runner sets.
  define: { __OFFLINE_BUILD__: JSON.stringify(command === 'build') },
  base: './',
  resolve: { tsconfigPaths: true },
  worker: { format: 'es' },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: {
      input: { index: here('index.html'), sw: here('src/service-worker.ts') },
      output: { entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js') },
    },
  },
  plugins: [precacheManifest()],
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
  logLevel: 'warn',
}));
