/**
 * Benchmark runner. `npm run bench` runs every benchmark; `npm run bench -- NAME...` runs those
 * whose name starts with any NAME (`kv`, `kv.commit`). `--store=fs,memory` limits the stores.
 * Results go to stdout as one JSON object per line; progress goes to stderr. See bench/README.md.
 *
 * To add benchmarks: export a `Benchmark[]` from a new file and add it to `registry` below.
 */
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { SharedCache, cleanupAll, emit, log, type BenchContext, type Benchmark, type StoreName, createStore } from './harness.js';
import kvCommit from './kv-commit.js';
import kvMemory from './kv-memory.js';
import kvOpen from './kv-open.js';
import kvScan from './kv-scan.js';
import queueDrain from './queue-drain.js';
import queueSteady from './queue-steady.js';
import workflowChain from './workflow-chain.js';
import workflowLatency from './workflow-latency.js';
import workflowFn from './workflow-fn.js';
import jobsRoundtrip from './jobs-roundtrip.js';
import browserChain from './browser-chain.js';
import demoResume from './demo-resume.js';
import packageSize from './package-size.js';

const registry: Benchmark[] = [...kvCommit, ...kvScan, ...kvMemory, ...kvOpen, ...queueDrain, ...queueSteady, ...workflowChain, ...workflowLatency, ...workflowFn, ...jobsRoundtrip, ...browserChain, ...demoResume, ...packageSize];
registry.push(...(await import('./s3-chain.js')).default); // s3.chain: the workflow chain over the S3 test server (issue 6)
registry.push(...(await import('./cluster.js')).default); // cluster.chain: member processes sharing 16 shards on the S3 test server (issue 20)
registry.push(...(await import('./bulk.js')).default); // bulk.items: bulk pipelines against the bare runtime (issue 16)
registry.push(...(await import('./runs-retention.js')).default); // runs.retention: finished-run records and command answers (issue 25)
registry.push(...(await import('./browser-latency.js')).default); // browser.latency: a 3-step run's latency in Chromium, in the worker and from the page (issue 28)

const STORE_ORDER: readonly StoreName[] = ['memory', 'fs', 'idb', 'opfs', 's3'];

function parseArgs(argv: readonly string[]): { names: string[]; stores?: Set<string> } {
  const names: string[] = [];
  let stores: Set<string> | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--store' || a === '--stores') stores = new Set(argv[++i]?.split(',') ?? []);
    else if (a.startsWith('--store=') || a.startsWith('--stores=')) stores = new Set(a.slice(a.indexOf('=') + 1).split(','));
    else if (a === '--list') names.push('\0list');
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else names.push(a);
  }
  return { names, stores };
}

/** The code under test, for the log: commit and whether src/ has uncommitted changes. */
function revision(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
    return dirty ? `${head} (src/ modified: ${dirty.split('\n').map((l) => l.slice(3)).join(' ')})` : head;
  } catch {
    return '(git unavailable)';
  }
}

async function main(): Promise<number> {
  const { names, stores } = parseArgs(process.argv.slice(2));
  if (names.includes('\0list')) {
    for (const b of registry) process.stderr.write(`${b.name}\t${b.stores.join(',')}\n`);
    return 0;
  }
  const selected = registry.filter((b) => names.length === 0 || names.some((n) => b.name.startsWith(n)));
  if (selected.length === 0) {
    log(`no benchmark matches ${names.join(' ')}; known: ${registry.map((b) => b.name).join(' ')}`);
    return 2;
  }
  let failures = 0;
  const started = performance.now();
  log(`# taquba-workflow ${revision()} node ${process.version} ${os.cpus().length} cpus load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  // Store-major order: benchmarks on one store share its data set, which is dropped before the next.
  for (const store of STORE_ORDER) {
    if (stores && !stores.has(store)) continue;
    const shared = new SharedCache();
    for (const b of selected) {
      if (!b.stores.includes(store)) continue;
      const ctx: BenchContext = {
        bench: b.name,
        store,
        shared,
        freshStore: (label = b.name) => createStore(store, `${store}-${label}`),
        emit: (metric, value, unit, fields) => emit({ bench: b.name, store, metric, value, unit, ...fields }),
      };
      const t = performance.now();
      log(`# ${b.name} [${store}] ...`);
      try {
        await b.run(ctx);
        log(`# ${b.name} [${store}] done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      } catch (e) {
        failures++;
        log(`# ${b.name} [${store}] FAILED: ${(e as Error)?.stack ?? String(e)}`);
      }
    }
    await shared.clear();
    await cleanupAll();
  }
  log(`# all done in ${((performance.now() - started) / 1000).toFixed(1)} s${failures ? `, ${failures} failed` : ''}`);
  return failures > 0 ? 1 : 0;
}

process.on('SIGINT', () => void cleanupAll().then(() => process.exit(130)));
let exitCode = 1;
try {
  exitCode = await main();
} catch (e) {
  log((e as Error)?.stack ?? String(e));
} finally {
  await cleanupAll();
}
process.exit(exitCode);
