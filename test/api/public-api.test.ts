/**
 * The public surface, name by name: every entry point of package.json `exports` against the
 * checked-in list in `public-api.json`. A name that appears or disappears fails here until the
 * list is updated on purpose, so a change to the surface is always visible in review.
 *
 * Update the list after an intended change:
 *
 *   UPDATE_API=1 npx vitest run --project node test/api
 *
 * The names come from TypeScript's compiler API over each entry's source (`exports[sub].import`
 * `dist/X.js` ⇒ `src/X.ts`): `values` are the names that exist at run time (cross-checked against
 * `Object.keys` of the imported module), `types` the type-only ones. No listed name may resolve to
 * a declaration tagged `@internal`: the build strips those (`stripInternal`), so such a name would
 * vanish from the published `.d.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LIST_FILE = fileURLToPath(new URL('./public-api.json', import.meta.url));

interface EntryNames {
  readonly values: string[];
  readonly types: string[];
}

interface ExportTarget {
  readonly import: string;
  readonly types: string;
}

/** Subpath ⇒ source file, from package.json `exports`. */
function entryPoints(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, ExportTarget> };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const match = /^\.\/dist\/(.+)\.js$/.exec(target.import);
    if (!match) throw new Error(`unexpected export target. subpath=${subpath} import=${target.import}`);
    entries.set(subpath, join(ROOT, 'src', `${match[1]}.ts`));
  }
  return entries;
}

/**
 * What `stripInternal` looks at: any comment before a declaration (the statement, for variables)
 * containing `@internal`, even in backticks or in a file header.
 */
function markedInternal(node: ts.Node): boolean {
  const text = node.getSourceFile().text;
  return (ts.getLeadingCommentRanges(text, node.pos) ?? []).some((range) => text.slice(range.pos, range.end).includes('@internal'));
}

function isInternal(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some((d) => markedInternal(ts.isVariableDeclaration(d) ? d.parent.parent : d));
}

/**
 * Import and export statements of `src` marked internal. `stripInternal` drops the whole statement
 * from the `.d.ts`, so a file header that mentions the tag takes the first import (or an entry's
 * first re-export list) with it.
 */
function strippedStatements(program: ts.Program): string[] {
  const found: string[] = [];
  for (const source of program.getSourceFiles()) {
    if (!source.fileName.startsWith(join(ROOT, 'src'))) continue;
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
      if (markedInternal(statement)) {
        found.push(`${source.fileName.slice(ROOT.length)}:${source.getLineAndCharacterOfPosition(statement.getStart()).line + 1}`);
      }
    }
  }
  return found;
}

/** The exported names of every entry, split into values and types, plus those tagged `@internal`. */
function declaredNames(entries: Map<string, string>): { names: Record<string, EntryNames>; internal: string[]; stripped: string[] } {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('tsconfig.json did not parse');
  const program = ts.createProgram([...entries.values()], { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const names: Record<string, EntryNames> = {};
  const internal: string[] = [];
  for (const [subpath, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module for entry. subpath=${subpath} file=${file}`);
    const values: string[] = [];
    const types: string[] = [];
    for (const exported of checker.getExportsOfModule(module)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(exported.name);
      if (isInternal(target)) internal.push(`${subpath}: ${exported.name}`);
    }
    names[subpath] = { values: values.sort(), types: types.sort() };
  }
  return { names, internal, stripped: strippedStatements(program) };
}

const entries = entryPoints();
const { names, internal, stripped } = declaredNames(entries);

describe('public API', () => {
  it('lists each entry point of package.json with exactly the checked-in names', () => {
    if (process.env.UPDATE_API) writeFileSync(LIST_FILE, `${JSON.stringify(names, null, 2)}\n`);
    const expected = JSON.parse(readFileSync(LIST_FILE, 'utf8')) as Record<string, EntryNames>;
    expect(names).toEqual(expected);
  });

  it('exports no name whose declaration is @internal (stripped from the published .d.ts)', () => {
    expect(internal).toEqual([]);
  });

  it('has no import or re-export statement that the build would strip as internal', () => {
    expect(stripped).toEqual([]);
  });

  it.each([...entries])('%s: the run-time exports are exactly the declared values', async (subpath, file) => {
    const runtime = Object.keys((await import(file)) as object).sort();
    expect(runtime).toEqual(names[subpath]!.values);
  });
});
