/**
 * package: what a browser app pays for the library, measured on the published package. The
 * package test's consumer project (test/package/consumer-project.ts) is created: `npm pack`
 * (a clean build through `prepack`), the tarball installed into a fresh project, and the Vite app
 * that follows README's "Browser hosting" section (store `opfs`) built with Vite's defaults.
 *
 *   worker_kib_gz   the app's worker chunk (runtime, engine, queue, OPFS and IndexedDB stores,
 *                   Comlink, MessagePack), gzip at Vite's level, in KiB; fields: `worker_kib`
 *                   (uncompressed), `page_kib_gz` (the page's chunk: the typed client and
 *                   Comlink), `tarball_kib` (the packed tarball)
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildApp, createConsumerProject } from '../test/package/consumer-project.js';
import { log, round, type BenchContext, type Benchmark } from './harness.js';

const KIB = 1024;

async function run(ctx: BenchContext): Promise<void> {
  const project = await createConsumerProject();
  try {
    const app = await buildApp(project);
    const worker = await readFile(join(app.outDir, app.workerChunk));
    const assets = await readdir(join(app.outDir, 'assets'));
    const page = assets.find((name) => name.startsWith('index') && name.endsWith('.js'));
    const pageGz = page ? gzipSync(await readFile(join(app.outDir, 'assets', page))).length : NaN;
    const tarball = (await stat(project.tarball)).size;
    log(`# package: worker chunk ${app.workerChunk}, page chunk ${page ?? '(none)'}`);
    ctx.emit('worker_kib_gz', gzipSync(worker).length / KIB, 'KiB', {
      worker_kib: round(worker.length / KIB),
      page_kib_gz: round(pageGz / KIB),
      tarball_kib: round(tarball / KIB),
    });
  } finally {
    await project.remove();
  }
}

const benchmarks: Benchmark[] = [{ name: 'package', stores: ['opfs'], run }];
export default benchmarks;
