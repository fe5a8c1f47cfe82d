/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): self time by function and by source file, as
 * shares of the profile's samples. Used for the "where a step's CPU goes" list in
 * docs/performance.md:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/run.ts workflow.chain --store=memory
 *   npx tsx bench/profile-summary.ts /tmp/prof/<file>.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: profile-summary <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const shortUrl = (url: string): string => url.replace(/^.*\/(src|node_modules|bench)\//, '$1/').replace(/^node:/, 'node:') || '(native)';

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const byLayer = new Map<string, number>();
/** The layer of a source file: src/core/kv/... -> core/kv; anything else by its kind. */
const layerOf = (where: string, functionName: string): string => {
  const m = /^src\/(core\/[^/]+|[^/]+)\//.exec(where);
  if (m) return m[1]!;
  if (where.startsWith('node_modules/')) return where.split('/').slice(0, 2).join('/');
  if (where === '(native)') return functionName.startsWith('(') ? functionName : '(native code)';
  return where.startsWith('node:') ? 'node internals' : where;
};
for (const id of profile.samples) {
  const node = byId.get(id);
  if (!node) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = shortUrl(url);
  const fn = `${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1);
  byFile.set(where, (byFile.get(where) ?? 0) + 1);
  const layer = layerOf(where, functionName);
  byLayer.set(layer, (byLayer.get(layer) ?? 0) + 1);
}
const total = profile.samples.length;
const print = (title: string, counts: Map<string, number>): void => {
  console.log(`\n${title} (${total} samples)`);
  for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((n * 100) / total).toFixed(1).padStart(5)}%  ${name}`);
};
print('self time by layer', byLayer);
print('self time by file', byFile);
print('self time by function', byFunction);
