/**
 * The floors of the source tree (docs/architecture.md): a room imports only the rooms below it,
 * so a lower layer never reaches a higher one. Rooms are `src/core` (its own top-level files),
 * each folder under `src/core`, and each folder under `src`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const srcRoot = resolve(import.meta.dirname, '../../src');

/** What each room may import besides itself. */
const allowed: Record<string, readonly string[]> = {
  core: [],
  'core/objects': ['core'],
  'core/kv': ['core', 'core/objects'],
  'core/queue': ['core', 'core/objects', 'core/kv'],
  'core/workflow': ['core', 'core/objects', 'core/queue'],
  'core/jobs': ['core', 'core/objects', 'core/queue', 'core/workflow'],
  'core/bulk': ['core', 'core/objects', 'core/queue', 'core/workflow'],
  'core/webhooks': ['core', 'core/objects', 'core/queue', 'core/workflow'],
  'core/cron': ['core', 'core/objects', 'core/queue', 'core/workflow', 'core/jobs'],
  'core/operations': ['core', 'core/objects', 'core/queue', 'core/workflow', 'core/jobs', 'core/bulk', 'core/cron'],
  'core/cluster': ['core', 'core/objects', 'core/queue', 'core/workflow', 'core/jobs', 'core/cron', 'core/operations'],
  stores: ['core', 'core/objects'],
  node: ['core', 'core/objects'],
  testing: ['core', 'core/objects', 'core/kv', 'core/workflow'],
};

function roomOf(file: string): string {
  const parts = relative(srcRoot, file).split('/');
  if (parts[0] !== 'core') return parts.length > 1 ? parts[0]! : 'index';
  return parts.length > 2 ? `core/${parts[1]}` : 'core';
}

function sourceFiles(): string[] {
  return readdirSync(srcRoot, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(srcRoot, name));
}

describe('layers', () => {
  it('every room imports only the rooms below it', () => {
    const violations: string[] = [];
    let checked = 0;
    for (const file of sourceFiles()) {
      const from = roomOf(file);
      const rule = allowed[from];
      if (!rule) continue; // the entry points and hosts (index, browser, cli) may import any room
      for (const match of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const to = roomOf(resolve(dirname(file), match[1]!));
        checked++;
        if (to !== from && !rule.includes(to)) violations.push(`${relative(srcRoot, file)} imports ${match[1]} (${from} -> ${to})`);
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(violations).toEqual([]);
  });

  it('names every room under src/core', () => {
    const rooms = new Set(sourceFiles().map(roomOf).filter((room) => room.startsWith('core')));
    expect([...rooms].filter((room) => !(room in allowed))).toEqual([]);
  });
});
