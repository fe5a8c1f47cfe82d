/**
 * How the tests start a TypeScript file as a real Node process: `spawn(process.execPath,
 * [...nodeScript(file), ...args])`.
 *
 * Without a loader: the file and every source it imports are bundled once (esbuild, the
 * transformer tsx itself uses, with the repository's tsconfig) into one ES module under
 * node_modules/.cache/taquba-test-scripts, and the child runs `node <bundle>`. The same sources,
 * compiled the same way, in a real process; what goes is the loader's work at every start:
 * `node --import tsx` spent 0.5-0.8 s of CPU per start here (0.15-0.3 s bundled), and the crash
 * and CLI tests start hundreds of processes on a 2-core machine.
 *
 * The bundle keeps what a per-file transform keeps: function and class names (`keepNames`, esbuild
 * would otherwise rename clashing ones), and modules imported only for their side effects (our
 * package.json says `sideEffects: false`, which a bundler would otherwise act on). Packages stay
 * imports of node_modules, resolved at run time as they are under tsx.
 *
 * TAQUBA_TEST_TSX=1 runs every script through `node --import tsx` as before (to compare, or if the
 * bundle is ever suspected); `nodeScript(file, { tsx: true })` does it for one call.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'taquba-test-scripts');

/** Bundled path of each script, once per test file (module state is per file). */
const bundles = new Map<string, string>();

/**
 * `script` and the sources it imports as one ES module's text (the package's names mapped to the
 * sources by the repository's tsconfig `paths`; other packages left to node_modules).
 */
export function bundleText(script: string): string {
  const result = buildSync({
    entryPoints: [script],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    tsconfig: join(ROOT, 'tsconfig.json'),
    absWorkingDir: ROOT,
    keepNames: true,
    ignoreAnnotations: true,
    logLevel: 'error',
  });
  return result.outputFiles![0]!.text;
}

function bundle(script: string): string {
  const known = bundles.get(script);
  if (known) return known;
  const text = bundleText(script);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  // Named after the script (and its path, for two scripts of one name) and the bundle's content.
  const name = `${basename(script).replace(/\.[cm]?ts$/, '')}-${createHash('sha256').update(script).digest('hex').slice(0, 8)}`;
  const file = join(CACHE, `${name}-${hash}.mjs`);
  if (!existsSync(file)) {
    // Other test files (other workers) may write the same bundle at once: write aside, then rename.
    mkdirSync(CACHE, { recursive: true });
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, text);
    renameSync(temp, file);
    prune(name, file);
  }
  bundles.set(script, file);
  return file;
}

/** Removes bundles of `name` older than an hour, other than `keep` (earlier versions of the sources). */
function prune(name: string, keep: string): void {
  const pattern = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{16}\\.mjs$`);
  for (const entry of readdirSync(CACHE)) {
    const path = join(CACHE, entry);
    if (path === keep || !pattern.test(entry)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 3600_000) rmSync(path, { force: true });
    } catch {
      // another worker pruned it first
    }
  }
}

/** The node arguments that run `script` (an absolute path to a .ts file): the bundle, or tsx's loader and the file. */
export function nodeScript(script: string, options: { readonly tsx?: boolean } = {}): string[] {
  if (options.tsx || process.env.TAQUBA_TEST_TSX === '1') return ['--import', 'tsx', script];
  return [bundle(script)];
}
