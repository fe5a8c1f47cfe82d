/**
 * Raw durable single-write rates of OPFS inside a dedicated worker, printed for the benchmark
 * notes: write+flush on one open sync access handle (the platform's limit) and OpfsObjectStore
 * puts (temp file, write, flush, close, move). In the default (incognito) context the OPFS lives
 * in memory and a flush syncs nothing; only a persistent profile measures the disk.
 */
import { afterAll, expect, it } from 'vitest';
import { OpfsWorkerClient } from './opfs-worker-client.js';

const COUNT = 150;
const ROUNDS = 2;
const client = new OpfsWorkerClient();
afterAll(() => client.terminate());

it('measures durable single-write rates in a worker (printed)', async () => {
  const directory = `taquba-rate/${Date.now().toString(36)}`;
  try {
    // Best of a few rounds: the machine is shared and noisy.
    const best: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const r = await client.call('measure', `${directory}/${round}`, COUNT);
      for (const [name, value] of Object.entries(r)) best[name] = Math.max(best[name] ?? 0, value);
    }
    console.log(
      `[rates] opfs in a worker, 100-byte objects, best of ${ROUNDS} x ${COUNT}, ops/s (in memory unless run with a persistent profile): ` +
        `raw write+flush ${best.rawWriteFlushPerSec}, store create-only put ${best.createPutsPerSec}, store put ${best.overwritePutsPerSec}, store get ${best.getsPerSec}`,
    );
    expect(Math.min(...Object.values(best))).toBeGreaterThan(0);
  } finally {
    await client.call('deleteDirectory', directory);
  }
});
