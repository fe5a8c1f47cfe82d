import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { CHROMIUM_ARGS, resolveChromium } from './test/setup/chromium.js';
import { PERSISTENT_PROFILE_DIR } from './test/setup/browser-profile.js';
import { tabCommands } from './test/setup/browser-tabs.js';

// Resolved up front because the provider needs the path in its options. A failure here must not
// break the Node project, so it only warns; the browser project then reports the launch error.
const chromium = await resolveChromium().catch((e: unknown) => {
  console.warn(`[vitest] no Chromium found; browser tests cannot run. ${String(e)}`);
  return undefined;
});
if (process.env.TAQUBA_DEBUG_CHROMIUM && chromium) console.log(`[vitest] chromium: ${chromium.executablePath} (${chromium.source})`);

/** Browser dependencies pre-bundled up front, so the page never reloads mid-run after an install. */
const browserDeps = ['idb', 'comlink', '@msgpack/msgpack', 'sorted-btree', '@noble/hashes/sha2.js', 'croner', '@opentelemetry/sdk-trace-base'];

export default defineConfig({
  test: {
    // Two files at a time: by default vitest runs one at a time on a 2-core machine (cores - 1),
    // and most of our files wait on child processes, Chromium or the S3 test server.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.browser.test.ts', 'test/demo/**', '**/node_modules/**'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          // Files share a worker's module graph instead of importing the sources afresh each (the
          // imports were about 200 s of the suite's 1,300 s of work on this 2-core machine, which
          // other tenants load). Tests keep no state in modules of their own; what the sources
          // keep per module is keyed by the queue or store it belongs to.
          isolate: false,
        },
      },
      {
        // The demo imports the package by name; tsconfig `paths` map it to the sources.
        resolve: { tsconfigPaths: true },
        test: {
          // The demo app end to end: its build served on 127.0.0.1, driven through Playwright
          // in real Chromium with a persistent profile per test (see test/demo/demo-browser.ts).
          name: 'demo',
          environment: 'node',
          include: ['test/demo/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Files run two at a time beside the other projects' (each test has its own Chromium
          // and profile; the build is served read-only): one at a time, the demo files ran last
          // on their own, about two minutes with one core idle.
          globalSetup: ['test/demo/setup.ts'],
          // Tests written `demoTest.concurrent` run two at a time within their file, each with its
          // own Chromium (see demo-browser.ts).
          maxConcurrency: 2,
        },
      },
      {
        optimizeDeps: { include: browserDeps },
        test: {
          name: 'browser',
          include: ['test/**/*.browser.test.ts'],
          exclude: ['test/**/*.persistent.browser.test.ts', '**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // A Node backend served over HTTP for pages to reach (`inject('httpHostUrl')`).
          globalSetup: ['test/setup/http-host.ts'],
          browser: {
            enabled: true,
            headless: true,
            // Default (incognito) context: IndexedDB and OPFS live in memory here. Durability
            // tests need a separate project with `persistentContext` and fileParallelism: false.
            provider: playwright({
              launchOptions: { executablePath: chromium?.executablePath, args: [...CHROMIUM_ARGS] },
            }),
            instances: [{ browser: 'chromium' }],
            screenshotFailures: false,
          },
        },
      },
      {
        optimizeDeps: { include: browserDeps },
        test: {
          // Real tabs, reloads and crashes on a persistent profile (IndexedDB and OPFS on disk):
          // the browser host's lifecycle tests, and OPFS on disk (seal flags). The profile is per run (see browser-profile.ts),
          // so the origin only has to stay the same within a run. The `browser` project also
          // collects these files and skips them (they need this project's commands).
          name: 'browser-persistent',
          include: ['test/**/*.persistent.browser.test.ts'],
          exclude: ['**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          provide: { persistentProfile: true },
          globalSetup: ['test/setup/browser-profile.ts'],
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({
              persistentContext: PERSISTENT_PROFILE_DIR,
              launchOptions: { executablePath: chromium?.executablePath, args: [...CHROMIUM_ARGS] },
            }),
            instances: [{ browser: 'chromium' }],
            screenshotFailures: false,
            commands: tabCommands,
            // One file at a time in one persistent context (parallel pages would make vitest drop
            // the profile), set on the browser rather than the project: a project-level
            // `fileParallelism: false` puts its files in a group of their own that vitest runs after
            // every other project's, alone at the end of the suite (about a minute on one core).
            fileParallelism: false,
          },
        },
      },
    ],
  },
});
