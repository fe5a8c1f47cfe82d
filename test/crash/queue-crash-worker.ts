/**
 * Child process for the queue crash test. Modes:
 * - `hold <n>`: claim n jobs, ack the first 3 (durably), flush the claims with a durable KV
 *   write, print `claimed <id>` / `acked <id>` lines and `ready`, then idle until killed.
 * - `work`: 8 concurrent claim/ack loops; each prints `acked <id>` once its ack (with a KV
 *   effect) resolved, i.e. is durable. The parent kills it at a random moment.
 */
import { writeSync } from 'node:fs';
import { utf8 } from '../../src/core/bytes.js';
import { Queue } from '../../src/core/queue/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const [root, mode, countArg] = process.argv.slice(2);
const quiet = { warn: () => undefined };
const queue = await Queue.open(new FileSystemObjectStore({ root }), 'queue', { logger: quiet, flushIntervalMs: 1 });
const say = (line: string): void => void writeSync(1, `${line}\n`);

if (mode === 'hold') {
  const claims = await queue.claimBatch('jobs', Number(countArg), 600_000);
  for (const c of claims) say(`claimed ${c.id}`);
  for (const c of claims.slice(0, 3)) {
    await queue.ack(c);
    say(`acked ${c.id}`);
  }
  // Any durable commit flushes every earlier commit, the non-durable claims included.
  await queue.kvPut(utf8('flushed'), utf8('1'));
  say('ready');
  setInterval(() => undefined, 1_000_000);
} else {
  say('ready');
  // 8 loops of claim → ack with effects, printing each ack once it resolved (durable).
  const loop = async (): Promise<void> => {
    for (;;) {
      const claim = await queue.claimWithWait('jobs', 600_000, 1_000);
      if (!claim) continue;
      // Real time is the subject: 0-4 ms of work per job, so the parent's kill lands between claim and ack.
      await new Promise((r) => setTimeout(r, claim.job.payload[0] % 5));
      await queue.ackWith(claim, { kvWrites: [[utf8(`done/${claim.id}`), utf8('1')]] });
      say(`acked ${claim.id}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, loop));
}
