/**
 * The published package, as a user gets it (issue 13): one `npm pack` (which builds through
 * `prepack`), installed into a fresh project (see consumer-project.ts), then used from plain
 * Node ESM, type-checked under the `moduleResolution` settings README documents and under the
 * defaults of `tsc --init` (issue 26), each with README's quick start and an import of every entry
 * point, and built into a Vite app that follows README's "Browser hosting" section, run in
 * Chromium.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, resolveChromium } from '../setup/chromium.js';
import { buildApp, createConsumerProject, exec, linkS3Sdk, serveApp, typecheck, type ConsumerProject } from './consumer-project.js';

let project: ConsumerProject;
/** The type checks, started together once the project exists (they run while the other cases do). */
let typechecks: Record<'nodenext' | 'bundler' | 'init', Promise<unknown>>;

beforeAll(async () => {
  project = await createConsumerProject();
  const settle = (p: Promise<void>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);
  typechecks = {
    nodenext: settle(typecheck(project, 'tsconfig.nodenext.json')),
    bundler: settle(typecheck(project, 'tsconfig.bundler.json')),
    init: settle(typecheck(project, 'init/tsconfig.check.json')),
  };
}, 180_000);

afterAll(async () => {
  if (typechecks) await Promise.all(Object.values(typechecks));
  await project?.remove();
});

describe('the packed tarball', () => {
  it('ships the build, the license and the readme, and no sources or tests', async () => {
    const installed = join(project.dir, 'node_modules', 'taquba-workflow');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    for (const [entry, target] of Object.entries(manifest.exports)) {
      // Only the build is published: no condition may lead to the sources (the repository maps
      // the package's names to src/ through tsconfig paths, which are not shipped).
      expect(Object.keys(target), entry).toEqual(['types', 'import']);
      expect(existsSync(join(installed, target.import!)), `${entry} -> ${target.import}`).toBe(true);
      expect(existsSync(join(installed, target.types!)), `${entry} -> ${target.types}`).toBe(true);
    }
    expect(existsSync(join(installed, 'tsconfig.json'))).toBe(false);
    expect(existsSync(join(installed, 'LICENSE'))).toBe(true);
    expect(existsSync(join(installed, 'README.md'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
    // The optional peer dependency is not installed along with the package.
    expect(existsSync(join(project.dir, 'node_modules', '@aws-sdk', 'client-s3'))).toBe(false);
  });

  it('runs a workflow to its end from plain Node ESM on the filesystem store', async () => {
    const out = await exec(process.execPath, ['node-consumer.mjs', join(project.dir, '.taquba')], project.dir);
    expect(JSON.parse(out.trim())).toEqual({ runId: 'package-run', status: 'succeeded', result: 'done:hello' });
  });

  it('installs the taquba bin: npx taquba --help, and runs --json / queues --json on a store the package wrote', async () => {
    const help = await exec('npx', ['--no-install', 'taquba', '--help'], project.dir);
    expect(help).toContain('Usage: taquba');
    const store = join(project.dir, 'cli-store');
    await exec(process.execPath, ['node-consumer.mjs', store], project.dir);
    const runs = JSON.parse(await exec('npx', ['--no-install', 'taquba', '--store', store, 'runs', '--json'], project.dir)) as Record<string, unknown>;
    expect(runs).toMatchObject({ schema: 'taquba-cli/1', command: 'runs', path: 'app', runs: [], nextCursor: null });
    const queues = JSON.parse(await exec('npx', ['--no-install', 'taquba', '--store', store, 'queues', '--json'], project.dir)) as { queues: { queue: string; done: number }[] };
    // Two jobs done: the run's (its first step's job continued in place as the second) and the terminal notification.
    expect(queues.queues).toEqual([expect.objectContaining({ queue: 'workflow-steps', done: 2, dead: 0, pending: 0, claimed: 0 })]);
  }, 120_000);

  it('imports the S3 store without @aws-sdk/client-s3, whose first call rejects with UNSUPPORTED_PLATFORM naming the install; with the SDK it sends', async () => {
    const missing = JSON.parse((await exec(process.execPath, ['s3-consumer.mjs'], project.dir)).trim()) as Record<string, unknown>;
    expect(missing).toMatchObject({ taquba: true, name: 'UnsupportedPlatformError', code: 'UNSUPPORTED_PLATFORM', details: { missing: '@aws-sdk/client-s3' } });
    expect(missing.message).toContain('npm install @aws-sdk/client-s3');

    await linkS3Sdk(project);
    // Nothing listens on port 9: the request itself fails, so the SDK was loaded and used.
    const present = JSON.parse((await exec(process.execPath, ['s3-consumer.mjs'], project.dir)).trim()) as Record<string, unknown>;
    expect(present).toMatchObject({ taquba: true, code: 'STORE_UNAVAILABLE' });
    // With the SDK there, the entry's types check too (README's Node settings, skipLibCheck false).
    await typecheck(project, 'tsconfig.s3.json');
  }, 120_000);

  it("builds README's browser hosting setup with Vite and runs a workflow to its end in Chromium", async () => {
    await buildApp(project);
    const server = await serveApp(project);
    const { executablePath } = await resolveChromium();
    const browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(server.url);
      await page.locator('#result').filter({ hasText: /\S/ }).waitFor({ timeout: 30_000 });
      expect(JSON.parse((await page.locator('#result').textContent()) ?? '')).toEqual({ runId: 'order-42', status: 'succeeded', result: 'done:hello' });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      await server.close();
    }
  }, 60_000);

  it("type-checks a Node consumer, README's quick start and every entry point that runs in Node under README's Node settings (nodenext, lib ES2022, types node)", async () => {
    expect(await typechecks.nodenext).toBeUndefined();
  }, 60_000);

  it("type-checks the browser app and every entry point that runs in a browser under README's browser settings (bundler, lib ES2022 + DOM)", async () => {
    expect(await typechecks.bundler).toBeUndefined();
  }, 60_000);

  // Issue 26: under exactOptionalPropertyTypes the quick start failed (TS2769/TS2379, the
  // filesystem store not assignable to ObjectStore over `appendLogs`), and with skipLibCheck
  // false so did dist/node/fs-store.d.ts itself (TS2420).
  it("type-checks README's quick start and every entry point in a `tsc --init` project (its defaults, types node, skipLibCheck false)", async () => {
    expect(await typechecks.init).toBeUndefined();
  }, 60_000);
});
