/**
 * A consumer of the published package, built the way a user builds one: `npm pack` of this
 * repository (which runs `prepack`, the build), then a fresh project in a temp directory that
 * installs the tarball from the registry's point of view (`npm install <tarball>`, so only what
 * `files` ships and only the declared dependencies are there). Shared by the package test
 * (test/package/package.test.ts) and the `package` benchmark (bench/package-size.ts).
 *
 * The project holds three consumers: a Node ESM script (`node-consumer.mjs`), typed consumers
 * checked by `tsc --noEmit` under `moduleResolution` nodenext and bundler (the settings README's
 * "TypeScript" note documents), and a Vite app (`app/`) written as README's "Browser hosting"
 * section says. README's quick start as written there (`quick-start.ts`) and an import of every
 * entry point are checked under both of README's settings (the Node one takes the entry points
 * that run in Node, the browser one those that run in a browser; `stores/s3` once its optional
 * SDK is linked, `s3-entry.ts`). `init/` is a project made with `tsc --init` (issue 26: its
 * defaults turn on `exactOptionalPropertyTypes`), holding the same quick start and every entry
 * point. TypeScript, Vite and @types/node are this repository's own (nothing extra is
 * downloaded); the tarball's dependencies are installed from the npm cache or registry.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** This repository. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REPO_MODULES = join(REPO_ROOT, 'node_modules');
/** The repository's TypeScript compiler, run by the consumer checks. */
export const TSC = join(REPO_MODULES, 'typescript', 'bin', 'tsc');

/** Runs a command, failing with its output. */
export async function exec(file: string, args: readonly string[], cwd: string, timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd, timeout: timeoutMs, maxBuffer: 16 << 20, env: { ...process.env, npm_config_update_notifier: 'false' } });
    return stdout;
  } catch (e) {
    const { stdout = '', stderr = '' } = e as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: e });
  }
}

/** `npm pack` of the repository into `destination` (runs `prepack`: a clean build). Returns the tarball's path. */
export async function packLibrary(destination: string): Promise<string> {
  const out = await exec('npm', ['pack', '--json', '--pack-destination', destination], REPO_ROOT, 300_000);
  // `--json` output follows the prepack script's own lines on stdout: parse from the last `[`.
  const manifest = JSON.parse(out.slice(out.lastIndexOf('\n[') + 1)) as { filename: string; files: { path: string }[] }[];
  return join(destination, manifest[0]!.filename);
}

export interface ConsumerProject {
  readonly dir: string;
  readonly tarball: string;
  /** The Vite app's root (`app/`). */
  readonly appDir: string;
  remove(): Promise<void>;
}

/**
 * Packs the library and installs the tarball into a fresh ESM project with every consumer
 * written out. `@aws-sdk/client-s3` (an optional peer dependency) is not installed.
 */
export async function createConsumerProject(): Promise<ConsumerProject> {
  const dir = await mkdtemp(join(tmpdir(), 'taquba-package-'));
  const tarball = await packLibrary(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'taquba-consumer', private: true, type: 'module' }, null, 2));
  await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', tarball], dir, 120_000);
  // The typed consumers' `"types": ["node"]`, from this repository (its realpath finds undici-types there).
  await mkdir(join(dir, 'node_modules', '@types'), { recursive: true });
  await symlink(join(REPO_MODULES, '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');
  for (const [path, text] of Object.entries(CONSUMER_FILES)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const entries = await entryPoints(join(dir, 'node_modules', 'taquba-workflow'));
  const quickStart = await readmeQuickStart();
  await writeFile(join(dir, 'quick-start.ts'), quickStart);
  await writeFile(join(dir, 'node-entries.ts'), entryPointModule(entries.filter((e) => !e.peer && !e.browserOnly)));
  await writeFile(join(dir, 'browser-entries.ts'), entryPointModule(entries.filter((e) => !e.peer && !e.nodeOnly)));
  await writeFile(join(dir, 's3-entry.ts'), entryPointModule(entries.filter((e) => e.peer)));
  await writeInitProject(join(dir, 'init'), quickStart, entries.filter((e) => !e.peer));
  return { dir, tarball, appDir: join(dir, 'app'), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Makes `@aws-sdk/client-s3` resolvable in the project: a link to this repository's copy (its realpath finds its own dependencies). */
export async function linkS3Sdk(project: ConsumerProject): Promise<void> {
  const target = join(project.dir, 'node_modules', '@aws-sdk', 'client-s3');
  if (existsSync(target)) return;
  await mkdir(dirname(target), { recursive: true });
  await symlink(join(REPO_MODULES, '@aws-sdk', 'client-s3'), target, 'dir');
}

/** `tsc --noEmit -p <tsconfig>` in the project; rejects with the compiler's output. */
export async function typecheck(project: ConsumerProject, tsconfig: string): Promise<void> {
  await exec(process.execPath, [TSC, '--noEmit', '-p', tsconfig], project.dir);
}

/** README's quick start: the first `ts` block of its "Quick start (Node)" section, as written. */
async function readmeQuickStart(): Promise<string> {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start (Node)'));
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(section);
  if (!section.startsWith('## Quick start (Node)') || !block) throw new Error('README.md has no ts block under "## Quick start (Node)"');
  return block[1]!;
}

/**
 * `init/`: the tsconfig.json `tsc --init` writes (this repository's TypeScript, so its current
 * defaults: strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess, module nodenext), and
 * `tsconfig.check.json` extending it with what a Node user adds: `types: ["node"]` (as the
 * generated file's own comment says) and `skipLibCheck: false`, so the package's `.d.ts` files are
 * checked too. The package root's `"type": "module"` makes the files ESM (top-level await).
 */
async function writeInitProject(dir: string, quickStart: string, entries: readonly EntryPoint[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  await exec(process.execPath, [TSC, '--init'], dir);
  await writeFile(join(dir, 'quick-start.ts'), quickStart);
  await writeFile(join(dir, 'entry-points.ts'), entryPointModule(entries));
  const check = { extends: './tsconfig.json', compilerOptions: { noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['quick-start.ts', 'entry-points.ts'] };
  await writeFile(join(dir, 'tsconfig.check.json'), JSON.stringify(check, null, 2));
}

/** One subpath of the installed package's `exports`, by the platforms it is written for. */
export interface EntryPoint {
  /** The import specifier: `taquba-workflow`, `taquba-workflow/node`, ... */
  readonly specifier: string;
  /** Its types need a browser's globals (`lib: ["DOM"]`): the browser host, its client and inspector, the browser stores. */
  readonly browserOnly: boolean;
  /** Its types need Node's (`types: ["node"]`): the Node host. */
  readonly nodeOnly: boolean;
  /** Its types come from an optional peer dependency (`@aws-sdk/client-s3`), absent until the S3 case links it. */
  readonly peer: boolean;
}

const BROWSER_ONLY = new Set(['./browser', './browser/worker', './browser/inspector', './stores/indexeddb', './stores/opfs']);
const NODE_ONLY = new Set(['./node', './http']);
const PEER = new Set(['./stores/s3']);

/**
 * Every subpath of the installed package's `exports`. One that is none of the above (the root,
 * `queue`, `engine`, `testing`, and any added later) is platform-neutral: both of README's
 * settings check it.
 */
async function entryPoints(installed: string): Promise<EntryPoint[]> {
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  return Object.keys(manifest.exports).map((subpath) => ({
    specifier: manifest.name + subpath.slice(1),
    browserOnly: BROWSER_ONLY.has(subpath),
    nodeOnly: NODE_ONLY.has(subpath),
    peer: PEER.has(subpath),
  }));
}

/** A module importing every name of each entry point (one namespace each). */
function entryPointModule(entries: readonly EntryPoint[]): string {
  if (entries.length === 0) throw new Error('no entry points to import');
  return entries.map((entry, i) => `export * as entry${i} from '${entry.specifier}';\n`).join('');
}

export interface BuiltApp {
  /** The build output directory. */
  readonly outDir: string;
  /** The worker chunk's file name under `outDir`. */
  readonly workerChunk: string;
}

/** `vite build` of the app with no configuration of its own, as a fresh Vite app has none. */
export async function buildApp(project: ConsumerProject): Promise<BuiltApp> {
  const { build } = await import('vite');
  const outDir = join(project.appDir, 'dist');
  await build({ root: project.appDir, configFile: false, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  const assets = await readdir(join(outDir, 'assets'));
  const worker = assets.find((name) => name.startsWith('app-worker') && name.endsWith('.js'));
  if (!worker) throw new Error(`no worker chunk in the build. assets=${assets.join(',')}`);
  return { outDir, workerChunk: `assets/${worker}` };
}

/** Serves the app's build on 127.0.0.1 (a free port). */
export async function serveApp(project: ConsumerProject): Promise<{ url: string; close(): Promise<void> }> {
  const { preview } = await import('vite');
  const server = await preview({ root: project.appDir, configFile: false, logLevel: 'warn', preview: { host: '127.0.0.1', port: 0 } });
  const address = server.httpServer.address();
  if (address === null || typeof address === 'string') throw new Error(`the app server has no TCP address. address=${String(address)}`);
  return { url: `http://127.0.0.1:${address.port}/`, close: () => server.close() };
}

const STRICT = { strict: true, noEmit: true, skipLibCheck: false, isolatedModules: true, verbatimModuleSyntax: true };
const NODE_SETTINGS = { ...STRICT, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2022'], types: ['node'] };

/** Every file of the consumer project, by path. */
export const CONSUMER_FILES: Readonly<Record<string, string>> = {
  // Node, plain ESM: a two-step run on the filesystem store, to its terminal outcome.
  'node-consumer.mjs': `
import { Queue, StepOutcome, WorkflowRuntime } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';

const store = new FileSystemObjectStore({ root: process.argv[2] });
const queue = await Queue.open(store, 'app');
let finished;
const outcome = new Promise((resolve) => (finished = resolve));
const runner = async (step) =>
  step.stepNumber === 0 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(new TextEncoder().encode('done:' + new TextDecoder().decode(step.payload)));
const runtime = new WorkflowRuntime(queue, store, runner, { async onTermination(o) { finished(o); } });
const worker = runtime.spawn();
await runtime.submit({ runId: 'package-run', input: new TextEncoder().encode('hello') });
const o = await outcome;
await worker.shutdown();
await queue.close();
console.log(JSON.stringify({ runId: o.runId, status: o.status, result: new TextDecoder().decode(o.result) }));
`,
  // The S3 store without, then with, @aws-sdk/client-s3 installed: import works, the first call tells.
  's3-consumer.mjs': `
import { isTaqubaError } from 'taquba-workflow';
import { S3ObjectStore } from 'taquba-workflow/stores/s3';

const store = new S3ObjectStore({
  bucket: 'taquba-package-test',
  clientConfig: { region: 'us-east-1', endpoint: 'http://127.0.0.1:9', forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } },
  retry: { maxAttempts: 1 },
  requestTimeoutMs: 5000,
});
try {
  await store.get('k');
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  console.log(JSON.stringify({ taquba: isTaqubaError(e), name: e.name, code: e.code, message: e.message, details: e.details }));
} finally {
  store.destroy();
}
`,
  // Typed Node consumer, checked under nodenext.
  'node-consumer.ts': `
import { isTaqubaError, MemoryObjectStore, Queue, StepOutcome, WorkflowRuntime, type Step, type TerminalHook } from 'taquba-workflow';
import { FileSystemObjectStore } from 'taquba-workflow/node';
import { MockClock } from 'taquba-workflow/testing';

const store = process.env.MEMORY ? new MemoryObjectStore() : new FileSystemObjectStore({ root: './.taquba' });
const queue = await Queue.open(store, 'app', { clock: new MockClock(0) });
const runner = async (step: Step): Promise<StepOutcome> => {
  const controller = new AbortController();
  step.signal.addEventListener('abort', () => controller.abort());
  return StepOutcome.succeed(step.payload);
};
const hook: TerminalHook = { async onTermination(outcome) { console.log(outcome.runId, outcome.status); } };
const runtime = new WorkflowRuntime(queue, store, runner, hook);
const handle = runtime.spawn(AbortSignal.timeout(1000));
try {
  await runtime.submit({ runId: 'r1', input: new TextEncoder().encode('x') });
} catch (e) {
  if (isTaqubaError(e, 'INPUT_MISMATCH')) console.log(e.details);
}
await handle.shutdown();
`,
  // README "TypeScript", in Node: nodenext, lib ES2022, types node; with README's quick start and
  // every entry point that runs in Node.
  'tsconfig.nodenext.json': JSON.stringify({ compilerOptions: NODE_SETTINGS, files: ['node-consumer.ts', 'quick-start.ts', 'node-entries.ts'] }, null, 2),
  // The same settings for the S3 store's entry, checked once its optional SDK is linked.
  'tsconfig.s3.json': JSON.stringify({ compilerOptions: NODE_SETTINGS, files: ['s3-entry.ts'] }, null, 2),
  // README "TypeScript", in a browser app: the Vite app's sources under bundler resolution with the
  // DOM lib, and every entry point that runs in a browser.
  'tsconfig.bundler.json': JSON.stringify(
    {
      compilerOptions: { ...STRICT, target: 'ES2022', module: 'esnext', moduleResolution: 'bundler', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
      files: ['app/main.ts', 'app/app-worker.ts', 'browser-entries.ts'],
    },
    null,
    2,
  ),
  // README "Browser hosting", as written there, plus what a test needs to watch the run.
  'app/index.html': `<!doctype html>
<html>
  <head><meta charset="utf-8" /><title>taquba-workflow package app</title></head>
  <body>
    <output id="result"></output>
    <script type="module" src="./main.ts"></script>
  </body>
</html>
`,
  'app/app-worker.ts': `
import { serveWorkflowRuntime } from 'taquba-workflow/browser/worker';
import { StepOutcome, type Step, type TerminalHook } from 'taquba-workflow';

const myRunner = async (step: Step): Promise<StepOutcome> =>
  step.stepNumber === 0 ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(new TextEncoder().encode('done:' + new TextDecoder().decode(step.payload)));
const myHook: TerminalHook = { async onTermination() {} };

serveWorkflowRuntime({ store: 'opfs', name: 'my-app', runner: myRunner, terminalHook: myHook });
`,
  'app/main.ts': `
import { connect } from 'taquba-workflow/browser';

const output = document.querySelector<HTMLOutputElement>('#result')!;
const client = connect(new Worker(new URL('./app-worker.ts', import.meta.url), { type: 'module' }));
const runId = 'order-42';
client.subscribe((e) => {
  if (e.type === 'terminal') output.textContent = JSON.stringify({ runId: e.runId, status: e.status, result: new TextDecoder().decode(e.result ?? new Uint8Array()) });
}, { runId });
const input = new TextEncoder().encode('hello');
client.submit({ runId, input }).catch((e: unknown) => (output.textContent = 'error: ' + String(e)));
`,
};
