/**
 * The demo imports the library by its package names; these aliases point them at this
 * repository's sources, so the demo (and its tests) always run the code under test.
 */
import { fileURLToPath } from 'node:url';

const source = (path: string): string => fileURLToPath(new URL(`../src/${path}`, import.meta.url));

export const libraryAliases = [
  { find: /^taquba-workflow\/browser\/worker$/, replacement: source('browser/worker.ts') },
  { find: /^taquba-workflow\/browser\/inspector$/, replacement: source('browser/inspector/index.ts') },
  { find: /^taquba-workflow\/browser$/, replacement: source('browser/index.ts') },
  { find: /^taquba-workflow$/, replacement: source('index.ts') },
];
