/**
 * Issue #13: the README's Node snippets must run as written. Every `ts` block of README.md that
 * imports `taquba-workflow/node` must follow a marker comment
 * `<!-- readme-snippet: node, prints "..." -->`; each marked block is written to a temp
 * directory, type-checked with tsc (all snippets in one project, one tsc run: a run per snippet
 * compiled the sources once each and took over 30 s apiece on a loaded machine), then bundled as
 * the tests' child processes are (test/support/node-script.ts: esbuild, the compiler tsx runs on,
 * with the package name mapped to this repository's sources by tsconfig `paths`, as the package's
 * `exports` point at dist/, which is not built here) and run with node as a child process (tsx
 * over the sources cost 2.2 s of CPU per run, the compiled module 0.5 s). It must print exactly the
 * marker's line on stdout, nothing on stderr (no warning, no retry), and exit by itself with code
 * 0; a snippet that keeps state on disk runs a second time in the same directory, over what the
 * first run left.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleText } from '../support/node-script.js';

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const RUN_TIMEOUT_MS = 30_000;
/** One tsc run over the repository's sources and every snippet (about 25 s on a busy 2-core machine). */
const TSC_TIMEOUT_MS = 150_000;

interface Snippet {
  readonly line: number;
  readonly code: string;
  readonly prints: string;
}

const MARKER = /^<!-- readme-snippet: node, prints "([^"]*)" -->$/;

/** The marked snippets, and the `ts` blocks that look like Node snippets but carry no marker. */
function extractSnippets(readme: string): { snippets: Snippet[]; unmarked: number[] } {
  const lines = readme.split('\n');
  const snippets: Snippet[] = [];
  const unmarked: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`unterminated code block at README.md:${i + 1}`);
    const code = lines.slice(i + 1, end).join('\n');
    const marker = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
    if (marker) snippets.push({ line: i + 1, code: `${code}\n`, prints: marker[1]! });
    else if (code.includes("from 'taquba-workflow/node'")) unmarked.push(i + 1);
    i = end;
  }
  return { snippets, unmarked };
}

/** Whether a snippet writes to the file system (a store there, a file), so that a second run meets what the first left. */
const keepsStateOnDisk = (snippet: Snippet): boolean => /FileSystemObjectStore|node:fs|['"]\.\.?\//.test(snippet.code);

/** The file a snippet is written to; tsc's messages name it, so it carries the README line. */
const snippetFile = (snippet: Snippet): string => `snippet-${snippet.line}.ts`;

/**
 * A user's ESM project (`"type": "module"`: the snippets use top-level await) with a tsconfig
 * mapping the package to the sources, holding the given snippets (each its own module).
 */
async function writeProject(sub: string, snippets: readonly Snippet[]): Promise<void> {
  for (const snippet of snippets) await writeFile(join(sub, snippetFile(snippet)), snippet.code);
  await writeFile(join(sub, 'package.json'), JSON.stringify({ name: 'readme-snippet', private: true, type: 'module' }));
  // The packages a user installs beside this one (the tracing snippet's OpenTelemetry SDK): the repository's.
  await symlink(join(ROOT, 'node_modules'), join(sub, 'node_modules'), 'dir');
  // The core's declared globals come along, as in the repository's own compile (a published
  // build carries them in its .d.ts files instead).
  await writeFile(join(sub, 'tsconfig.json'), tsconfig([...snippets.map(snippetFile), join(ROOT, 'src/core/globals.d.ts')]));
}

/**
 * The package's names mapped to the sources, as the repository's own tsconfig.json `paths` map
 * them (one per entry point of package.json `exports`; test/docs/example-imports.test.ts keeps the
 * two equal), made absolute for a project outside the repository.
 */
function packagePaths(): Record<string, string[]> {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } };
  return Object.fromEntries(
    Object.entries(config.compilerOptions.paths)
      .filter(([name]) => name === 'taquba-workflow' || name.startsWith('taquba-workflow/'))
      .map(([name, targets]) => [name, targets.map((target) => join(ROOT, target))]),
  );
}

function tsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      // The repository's own (its sources are compiled along with the snippet).
      lib: ['ES2022', 'DOM', 'DOM.Iterable', 'WebWorker.ImportScripts'],
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules/@types')],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      paths: packagePaths(),
    },
    files,
  });
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

function run(args: string[], cwd: string, timeoutMs = RUN_TIMEOUT_MS): Promise<Exit> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr, timedOut });
    });
  });
}

const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
const { snippets, unmarked } = extractSnippets(readme);

describe('README Node snippets', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'taquba-readme-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the README has a marked Node snippet, and no unmarked one', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(1);
    expect(unmarked, 'ts blocks importing taquba-workflow/node without a readme-snippet marker (README.md lines)').toEqual([]);
  });

  it('snippets that keep state on disk are told apart (they run twice): at least one, and not every one', () => {
    expect(keepsStateOnDisk({ line: 1, code: "const store = new FileSystemObjectStore({ root: './.taquba' });", prints: '' })).toBe(true);
    expect(keepsStateOnDisk({ line: 1, code: 'const store = new MemoryObjectStore();', prints: '' })).toBe(false);
    expect(snippets.filter(keepsStateOnDisk).length).toBeGreaterThanOrEqual(1);
  });

  it('the extractor rejects what it must: an unterminated block throws, an unmarked Node block is reported', () => {
    expect(() => extractSnippets('```ts\nconst a = 1;\n')).toThrow(/unterminated code block/);
    const found = extractSnippets("text\n```ts\nimport { x } from 'taquba-workflow/node';\n```\n");
    expect(found).toEqual({ snippets: [], unmarked: [2] });
  });

  it(`every snippet type-checks (${snippets.map((s) => `README.md:${s.line}`).join(', ')}), in one tsc run`, async () => {
    const sub = await mkdtemp(join(dir, 'tsc-'));
    await writeProject(sub, snippets);
    const result = await run([TSC, '-p', 'tsconfig.json'], sub, TSC_TIMEOUT_MS);
    // tsc names the file, snippet-<README line>.ts, in each message.
    expect({ timedOut: result.timedOut, output: result.stdout + result.stderr }).toEqual({ timedOut: false, output: '' });
    expect(result.code).toBe(0);
  }, TSC_TIMEOUT_MS + 10_000);

  it('a snippet that does not type-check fails the run, and tsc names its README line', async () => {
    const sub = await mkdtemp(join(dir, 'tsc-bad-'));
    const bad: Snippet = { line: 9999, code: "export {};\nconst n: number = 'not a number';\n", prints: '' };
    await writeProject(sub, [bad]);
    const result = await run([TSC, '-p', 'tsconfig.json'], sub, TSC_TIMEOUT_MS);
    expect(result.timedOut).toBe(false);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toContain('snippet-9999.ts(2,');
  }, TSC_TIMEOUT_MS + 10_000);

  it.each(snippets.map((s) => [s.line, s] as const))('the snippet at README.md:%i runs, prints its line and exits by itself (twice in one directory when it keeps state on disk)', async (line, snippet) => {
    const sub = await mkdtemp(join(dir, `run-${line}-`));
    await writeProject(sub, [snippet]);
    const compiled = join(sub, snippetFile(snippet).replace(/\.ts$/, '.mjs'));
    await writeFile(compiled, bundleText(join(sub, snippetFile(snippet))));
    // A second run starts over the state the first left on disk (a re-submitted run id, its
    // memo); a snippet on the memory store leaves none, and would only run the same again.
    for (const round of keepsStateOnDisk(snippet) ? [1, 2] : [1]) {
      const result = await run([compiled], sub);
      expect({ round, timedOut: result.timedOut, code: result.code, signal: result.signal, stderr: result.stderr }).toEqual({ round, timedOut: false, code: 0, signal: null, stderr: '' });
      expect(result.stdout).toBe(`${snippet.prints}\n`);
    }
  }, 2 * RUN_TIMEOUT_MS + 10_000);
});
