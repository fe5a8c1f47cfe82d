/**
 * Issue #26: the examples and the demo are code a user copies into an app, so they import the
 * library only by its public names (`taquba-workflow`, `taquba-workflow/node`, ... : the
 * subpaths of package.json `exports`), never a relative path into `src/`. In this repository
 * those names reach the sources through tsconfig `paths` (read by tsc, tsx and Vite's
 * `resolve.tsconfigPaths`), so the map there must list exactly the `exports` subpaths, each at
 * the source of its `dist/` target (`./dist/X.js` ⇒ `./src/X.ts`, the build's layout).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE = 'taquba-workflow';
const SOURCE_EXTENSIONS = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
/** Build output and installed packages are not sources. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);

interface ImportProblem {
  readonly file: string;
  readonly specifier: string;
  readonly reason: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(path);
    return SOURCE_EXTENSIONS.test(entry.name) ? [path] : [];
  });
}

function exportedSubpaths(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { import: string }> };
  return new Map(Object.entries(pkg.exports).map(([subpath, target]) => [subpath, target.import]));
}

/**
 * Every module specifier of a file: static imports and re-exports, `import()`, `require`, and
 * `new URL('...', import.meta.url)` (how a worker script is named, which bundlers follow too).
 */
function specifiers(text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const match of text.matchAll(/new URL\(\s*(['"`])([^'"`]+)\1\s*,\s*import\.meta\.url/g)) found.push(match[2]!);
  return found;
}

/** What is wrong with the imports of one file (at `path`, with contents `text`). */
function importProblems(path: string, text: string, subpaths: ReadonlySet<string>): ImportProblem[] {
  const file = relative(ROOT, path);
  const problems: ImportProblem[] = [];
  for (const specifier of specifiers(text)) {
    if (specifier.startsWith('.')) {
      const target = relative(ROOT, resolve(dirname(path), specifier));
      if (target === 'src' || target.startsWith(`src${sep}`)) problems.push({ file, specifier, reason: `reaches into src/ (${target}); import a public entry point instead` });
    } else if (specifier === PACKAGE || specifier.startsWith(`${PACKAGE}/`)) {
      const subpath = `.${specifier.slice(PACKAGE.length)}`;
      if (!subpaths.has(subpath)) problems.push({ file, specifier, reason: 'is not a subpath of package.json exports' });
    }
  }
  return problems;
}

describe('examples and demo import only public entry points', () => {
  const exportsMap = exportedSubpaths();
  const subpaths = new Set(exportsMap.keys());
  const files = [...sourceFiles(join(ROOT, 'examples')), ...sourceFiles(join(ROOT, 'demo'))];

  it('no example or demo file imports a relative path into src/ or a subpath the package does not export', () => {
    expect(files.length).toBeGreaterThan(10);
    const problems = files.flatMap((path) => importProblems(path, readFileSync(path, 'utf8'), subpaths));
    expect(problems).toEqual([]);
  });

  it('the check catches what it must: a static, type-only, re-exported, dynamic or worker-URL path into src/, and an unexported subpath', () => {
    const path = join(ROOT, 'examples', 'shared', 'bad.ts');
    const text = [
      "import { utf8 } from '../../src/core/bytes.js';",
      "import type { Step } from '../../src/core/workflow/index.js';",
      "export { Queue } from '../../src/core/queue/index.js';",
      "const m = await import('../../src/node/index.js');",
      "new Worker(new URL('../../src/browser/worker.ts', import.meta.url));",
      "import { KvDb } from 'taquba-workflow/core/kv';",
      // Allowed: the package's public names, a sibling module, and a relative path outside src/.
      "import { Queue as Q } from 'taquba-workflow';",
      "import { FileSystemObjectStore } from 'taquba-workflow/node';",
      "import { SimulatedModel } from './model-client.js';",
      "import { x } from '../../demo/src/shared/agent-state.js';",
    ].join('\n');
    const found = importProblems(path, text, subpaths);
    expect(found.map((p) => p.specifier)).toEqual([
      '../../src/core/bytes.js',
      '../../src/core/workflow/index.js',
      '../../src/core/queue/index.js',
      '../../src/node/index.js',
      'taquba-workflow/core/kv',
      '../../src/browser/worker.ts',
    ]);
  });

  it('tsconfig paths map exactly the exports subpaths, each to the source of its dist/ target', () => {
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
    expect(config.error).toBeUndefined();
    const paths = (config.config as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths;
    const own = Object.fromEntries(Object.entries(paths).filter(([name]) => name === PACKAGE || name.startsWith(`${PACKAGE}/`)));
    const expected = Object.fromEntries(
      [...exportsMap].map(([subpath, target]) => {
        const match = /^\.\/dist\/(.+)\.js$/.exec(target);
        if (!match) throw new Error(`unexpected export target. subpath=${subpath} import=${target}`);
        return [`${PACKAGE}${subpath.slice(1)}`, [`./src/${match[1]}.ts`]];
      }),
    );
    expect(own).toEqual(expected);
  });
});
