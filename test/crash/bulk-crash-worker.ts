/**
 * Child process of the bulk crash test. Opens the filesystem store at argv[2] and submits (or
 * resubmits) batch `crash` of argv[4] items through a two-phase pipeline; every phase execution
 * appends `<pid> <key> <phase>` to the counter file argv[3] before it works. Prints `item <key>`
 * for each streamed result, then `report <json>` and exits. The parent kills it mid-batch.
 */
import { appendFileSync, writeSync } from 'node:fs';
import { Bulk, pipeline, Queue, StepError } from '../../src/index.js';
import { FileSystemObjectStore } from '../../src/node/fs-store.js';

const [root, counter, count] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const docs = Array.from({ length: Number(count) }, (_, i) => ({ id: `doc-${String(i).padStart(3, '0')}`, n: i }));
const steps = pipeline<{ id: string; n: number }>()
  .phase('research', async (doc, ctx) => {
    appendFileSync(counter!, `${process.pid} ${ctx.key} research\n`);
    await sleep(15); // real time is the subject: phases take a while, so the parent's kill lands mid-batch
    ctx.cost('tokens_in', 100 + doc.n);
    ctx.cost('usd', (100 + doc.n) * 0.0000013);
    return `notes on ${doc.id}`;
  })
  .phase('write', async (notes, ctx) => {
    appendFileSync(counter!, `${process.pid} ${ctx.key} write\n`);
    await sleep(15); // real time is the subject (as above)
    if (ctx.item.n % 11 === 5) throw StepError.permanent(`cannot write ${ctx.key}`);
    ctx.cost('tokens_out', notes.length);
    ctx.cost('usd', notes.length * 0.0000041);
    return `${notes}: summary`;
  });

const store = new FileSystemObjectStore({ root: root! });
const queue = await Queue.open(store, 'bulk-crash', { logger: false });
const bulk = new Bulk(queue, store, steps, { maxConcurrentItems: 6, pollIntervalMs: 20, logger: false });
const worker = bulk.spawn();
const batch = await bulk.submit(docs, { batchId: 'crash', key: (d) => d.id });
for await (const r of batch.results()) say(`item ${r.key}`);
const report = await batch.done();
say(`report ${JSON.stringify({ ...report, elapsedMs: 0 })}`);
await worker.shutdown();
await queue.close();
