/**
 * The KV engine on the default embedded store (the filesystem, under ./.taquba): a durable
 * counter that survives restarts, an atomic two-key transaction, and a prefix scan.
 * Run it twice: the run counter keeps counting.
 */
import { KvDb } from 'taquba-workflow/engine';
import { FileSystemObjectStore } from 'taquba-workflow/node';

// Keys and values are bytes; these are text in and out.
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const fromUtf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const root = process.env.TAQUBA_DIR ?? '.taquba';
const db = await KvDb.open(new FileSystemObjectStore({ root }), { path: 'examples/engine-basics' });
console.log(`opened ${root} as writer epoch ${db.epoch}`);

const runs = await db.transaction(async (txn) => {
  const previous = await txn.get(utf8('meta/runs'));
  const runs = (previous ? Number(fromUtf8(previous)) : 0) + 1;
  txn.put(utf8('meta/runs'), utf8(String(runs)));
  // Both writes land in one commit, or neither does.
  txn.put(utf8(`log/${String(runs).padStart(6, '0')}`), utf8(new Date().toISOString()));
  return runs;
});
console.log(`this is run #${runs} (durable: stored before this line printed)`);

console.log('last runs:');
for await (const { key, value } of db.scan({ prefix: utf8('log/') })) {
  if (Number(fromUtf8(key).slice(4)) > runs - 3) console.log(`  ${fromUtf8(key)} at ${fromUtf8(value)}`);
}
await db.close();
